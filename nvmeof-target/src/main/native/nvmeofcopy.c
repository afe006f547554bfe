/*
 * libnvmeoffile, copy part: write data into RAM namespace memory with the C library's memmove
 * (io.nvmeof.target.namespace.BlockCopy). For a few KiB and more, glibc's memmove on x86_64 uses "rep movsb" (ERMS),
 * which writes whole cache lines without reading them first; a copy loop of vector stores, which is what the JVM's
 * ByteBuffer copy is, reads each destination line before it writes it. Into cold namespace memory that is about a
 * third of the copy's time (nvmeof-target/README.md, "Write data into namespace memory").
 * The Java side checks bounds and directness before calling; this only copies.
 */
#include <jni.h>
#include <string.h>

/* int copy0(ByteBuffer src, int srcIndex, ByteBuffer dst, int dstIndex, int length): 0, or -1 if either buffer has
 * no address (not direct). */
JNIEXPORT jint JNICALL Java_io_nvmeof_target_namespace_BlockCopy_copy0(
        JNIEnv *env, jclass cls, jobject src, jint srcIndex, jobject dst, jint dstIndex, jint length) {
    char *s = (*env)->GetDirectBufferAddress(env, src);
    char *d = (*env)->GetDirectBufferAddress(env, dst);
    if (s == NULL || d == NULL) {
        return -1;
    }
    memmove(d + dstIndex, s + srcIndex, (size_t) length); /* the same code as memcpy in glibc, and overlap-safe */
    return 0;
}

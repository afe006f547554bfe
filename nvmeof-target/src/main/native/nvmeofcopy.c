/*
 * libnvmeoffile, copy part: write data into RAM namespace memory with the C library's memmove
 * (io.nvmeof.target.namespace.BlockCopy). For a few KiB and more, glibc's memmove on x86_64 uses "rep movsb" (ERMS),
 * which writes whole cache lines without reading them first; a copy loop of vector stores, which is what the JVM's
 * ByteBuffer copy is, reads each destination line before it writes it. Into cold namespace memory that is about a
 * third of the copy's time (nvmeof-target/README.md, "Write data into namespace memory").
 * The Java side checks bounds, directness and addresses before calling; this only copies.
 */
#include <jni.h>
#include <stdint.h>
#include <string.h>

/* void copy0(long to, long from, int length): the Java side passes the buffers' native addresses (read with
 * io.nvmeof.core.util.DirectBuffers), so this call makes no JNI look-ups (GetDirectBufferAddress checks the object's
 * class each time: about 20 ns of a 4 KiB copy's 270, measured). */
JNIEXPORT void JNICALL Java_io_nvmeof_target_namespace_BlockCopy_copy0(
        JNIEnv *env, jclass cls, jlong to, jlong from, jint length) {
    (void) env;
    (void) cls;
    /* the same code as memcpy in glibc, and overlap-safe */
    memmove((void *) (intptr_t) to, (const void *) (intptr_t) from, (size_t) length);
}

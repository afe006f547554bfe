/*
 * libnvmeoffile: the file calls the JDK lacks for file-backed namespaces (io.nvmeof.target.namespace.FileHoles).
 * Each function returns a non-negative result or -errno; none throws, so the Java side decides what a failure means.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* int open0(String path): a descriptor opened for writing (O_CLOEXEC), or -errno. */
JNIEXPORT jint JNICALL Java_io_nvmeof_target_namespace_FileHoles_open0(JNIEnv *env, jclass cls, jstring path) {
    const char *p = (*env)->GetStringUTFChars(env, path, NULL);
    if (p == NULL) {
        return -ENOMEM; /* OutOfMemoryError pending */
    }
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    int err = errno;
    (*env)->ReleaseStringUTFChars(env, path, p);
    return fd >= 0 ? fd : -err;
}

/* int punchHole0(int fd, long offset, long length): fallocate(PUNCH_HOLE | KEEP_SIZE); 0 or -errno. */
JNIEXPORT jint JNICALL Java_io_nvmeof_target_namespace_FileHoles_punchHole0(
        JNIEnv *env, jclass cls, jint fd, jlong offset, jlong length) {
    int r;
    do {
        r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t) offset, (off_t) length);
    } while (r != 0 && errno == EINTR);
    return r == 0 ? 0 : -errno;
}

/* long nextData0(int fd, long offset): lseek(SEEK_DATA): the offset of the first data at or after offset, -ENXIO if
 * there is none up to the end of the file, or another -errno. */
JNIEXPORT jlong JNICALL Java_io_nvmeof_target_namespace_FileHoles_nextData0(
        JNIEnv *env, jclass cls, jint fd, jlong offset) {
    off_t r = lseek(fd, (off_t) offset, SEEK_DATA);
    return r >= 0 ? (jlong) r : -errno;
}

/* long blockSize0(int fd): st_blksize, the file system's preferred block size, or -errno. */
JNIEXPORT jlong JNICALL Java_io_nvmeof_target_namespace_FileHoles_blockSize0(JNIEnv *env, jclass cls, jint fd) {
    struct stat st;
    return fstat(fd, &st) == 0 ? (jlong) st.st_blksize : -errno;
}

/* long allocatedBytes0(int fd): st_blocks * 512, the bytes the file occupies on disk, or -errno. */
JNIEXPORT jlong JNICALL Java_io_nvmeof_target_namespace_FileHoles_allocatedBytes0(JNIEnv *env, jclass cls, jint fd) {
    struct stat st;
    return fstat(fd, &st) == 0 ? (jlong) st.st_blocks * 512 : -errno;
}

/* int close0(int fd): 0 or -errno. */
JNIEXPORT jint JNICALL Java_io_nvmeof_target_namespace_FileHoles_close0(JNIEnv *env, jclass cls, jint fd) {
    return close(fd) == 0 ? 0 : -errno;
}

/*
 * libnvmeoffile, slab part: anonymous memory for RAM namespaces in 2 MiB slabs (io.nvmeof.target.namespace.SlabMemory),
 * so that one transparent huge page fault (one zeroing pass) backs 16 chunks instead of 512 small-page faults.
 * Each function returns a non-negative result or -errno; none throws, so the Java side decides what a failure means.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jni.h>
#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14+; older kernels answer EINVAL */
#endif

/* long map0(long bytes): bytes of private anonymous memory aligned to bytes (a power of two), not yet backed; the
 * address, or -errno. Maps twice the size and unmaps the unaligned head and tail. */
JNIEXPORT jlong JNICALL Java_io_nvmeof_target_namespace_SlabMemory_map0(JNIEnv *env, jclass cls, jlong bytes) {
    size_t n = (size_t) bytes;
    void *p = mmap(NULL, 2 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        return -errno;
    }
    uintptr_t start = (uintptr_t) p;
    uintptr_t aligned = (start + n - 1) & ~((uintptr_t) n - 1);
    if (aligned > start) {
        munmap(p, aligned - start);
    }
    uintptr_t end = start + 2 * n;
    if (end > aligned + n) {
        munmap((void *) (aligned + n), end - (aligned + n));
    }
    return (jlong) aligned;
}

/* int adviseHuge0(long address, long bytes): madvise(MADV_HUGEPAGE); 0 or -errno (EINVAL without THP). */
JNIEXPORT jint JNICALL Java_io_nvmeof_target_namespace_SlabMemory_adviseHuge0(
        JNIEnv *env, jclass cls, jlong address, jlong bytes) {
    return madvise((void *) (uintptr_t) address, (size_t) bytes, MADV_HUGEPAGE) == 0 ? 0 : -errno;
}

/* int populate0(long address, long bytes): backs the range with zeroed, writable memory now: MADV_POPULATE_WRITE, one
 * call; where the kernel lacks it (EINVAL), one write per 4 KiB page. 0 if by madvise, 1 if by touching, or -errno. */
JNIEXPORT jint JNICALL Java_io_nvmeof_target_namespace_SlabMemory_populate0(
        JNIEnv *env, jclass cls, jlong address, jlong bytes) {
    int r;
    do {
        r = madvise((void *) (uintptr_t) address, (size_t) bytes, MADV_POPULATE_WRITE);
    } while (r != 0 && errno == EINTR);
    if (r == 0) {
        return 0;
    }
    if (errno != EINVAL) {
        return -errno;
    }
    volatile char *p = (volatile char *) (uintptr_t) address;
    for (size_t i = 0; i < (size_t) bytes; i += 4096) {
        p[i] = 0;
    }
    return 1;
}

/* int discard0(long address, long bytes): madvise(MADV_DONTNEED): the pages go back to the system and read as zeroes
 * again; 0 or -errno. */
JNIEXPORT jint JNICALL Java_io_nvmeof_target_namespace_SlabMemory_discard0(
        JNIEnv *env, jclass cls, jlong address, jlong bytes) {
    return madvise((void *) (uintptr_t) address, (size_t) bytes, MADV_DONTNEED) == 0 ? 0 : -errno;
}

/* int unmap0(long address, long bytes): munmap; 0 or -errno. */
JNIEXPORT jint JNICALL Java_io_nvmeof_target_namespace_SlabMemory_unmap0(
        JNIEnv *env, jclass cls, jlong address, jlong bytes) {
    return munmap((void *) (uintptr_t) address, (size_t) bytes) == 0 ? 0 : -errno;
}

/* ByteBuffer wrap0(long address, long bytes): a direct buffer over the range (it does not own it), or null with an
 * OutOfMemoryError pending. */
JNIEXPORT jobject JNICALL Java_io_nvmeof_target_namespace_SlabMemory_wrap0(
        JNIEnv *env, jclass cls, jlong address, jlong bytes) {
    return (*env)->NewDirectByteBuffer(env, (void *) (uintptr_t) address, bytes);
}

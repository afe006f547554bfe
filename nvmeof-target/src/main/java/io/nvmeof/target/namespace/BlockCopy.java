package io.nvmeof.target.namespace;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Objects;

/**
 * Copies write data into namespace memory: with the C library's {@code memmove} ({@code libnvmeoffile.so},
 * src/main/native/nvmeofcopy.c) when both buffers are direct and the copy is at least {@value #NATIVE_MIN_BYTES}
 * bytes, else with {@link ByteBuffer#put(int, ByteBuffer, int, int)}. Stateless; any thread.
 *
 * <p>Why not {@code ByteBuffer.put} alone: the JVM copies with vector stores, and a store to a cache line that is not
 * in the cache first reads the line from memory. glibc's {@code memmove} copies a few KiB and more with {@code rep
 * movsb}, which writes whole lines without reading them. A 4 KiB write lands in namespace memory that is almost never
 * cached (random blocks of a large namespace), so that read is a third of the copy: measured on this project's 2-vCPU
 * AMD EPYC VM, 4 KiB to random places of 1 GiB, 370 ns with {@code ByteBuffer.put} against 265 ns through this JNI
 * call (230 ns for glibc's {@code memcpy}, the same code, alone in C). Below {@value #NATIVE_MIN_BYTES} bytes the JNI
 * call's own cost is not worth it. No library offers this copy for {@code ByteBuffer}s on Java 17 (the foreign-memory API is still
 * incubating there).
 *
 * <p>{@code -Dio.nvmeof.nativeCopy=false} turns the native copy off (to compare); so does a missing library.
 */
final class BlockCopy {
    /** The smallest copy that goes to {@code memmove}. */
    static final int NATIVE_MIN_BYTES = 4096;

    /** The system property that turns the native copy off when {@code false}. */
    static final String PROPERTY = "io.nvmeof.nativeCopy";

    private static final boolean NATIVE = NativeLibrary.unavailableReason() == null
            && !"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true"));

    private BlockCopy() {}

    /** Whether copies of {@value #NATIVE_MIN_BYTES} bytes and more between direct buffers use {@code memmove}. */
    static boolean nativeCopy() {
        return NATIVE;
    }

    /**
     * Copies {@code length} bytes of {@code src} from index {@code srcIndex} into {@code dst} at index {@code
     * dstIndex}, as {@code dst.put(dstIndex, src, srcIndex, length)} does (absolute indexes within each buffer's limit;
     * positions untouched).
     *
     * @throws IndexOutOfBoundsException if a range is outside its buffer's limit (nothing is copied)
     * @throws ReadOnlyBufferException if {@code dst} is read-only
     */
    static void copy(ByteBuffer dst, int dstIndex, ByteBuffer src, int srcIndex, int length) {
        if (NATIVE && length >= NATIVE_MIN_BYTES && src.isDirect() && dst.isDirect()) {
            Objects.checkFromIndexSize(dstIndex, length, dst.limit());
            Objects.checkFromIndexSize(srcIndex, length, src.limit());
            if (dst.isReadOnly()) {
                throw new ReadOnlyBufferException();
            }
            if (copy0(src, srcIndex, dst, dstIndex, length) == 0) {
                return;
            }
        }
        dst.put(dstIndex, src, srcIndex, length);
    }

    private static native int copy0(ByteBuffer src, int srcIndex, ByteBuffer dst, int dstIndex, int length);
}

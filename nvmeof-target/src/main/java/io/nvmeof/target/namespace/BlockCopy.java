package io.nvmeof.target.namespace;

import io.nvmeof.core.util.DirectBuffers;
import java.lang.ref.Reference;
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
 * AMD EPYC VM, 4 KiB to random places of 1 GiB, 370 ns with {@code ByteBuffer.put} against 265 ns through a JNI
 * call (230 ns for glibc's {@code memcpy}, the same code, alone in C). The call takes the buffers' addresses
 * ({@link DirectBuffers#address}), not the buffers: {@code GetDirectBufferAddress} in the native code cost about 20 ns
 * more per call. Below {@value #NATIVE_MIN_BYTES} bytes the JNI call's own cost is not worth it. No library offers
 * this copy for {@code ByteBuffer}s on Java 17 (the foreign-memory API is still incubating there).
 *
 * <p>{@code -Dio.nvmeof.nativeCopy=false} turns the native copy off (to compare); so does a missing library, or a JVM
 * where {@link DirectBuffers#address} is not supported.
 */
final class BlockCopy {
    /** The smallest copy that goes to {@code memmove}. */
    static final int NATIVE_MIN_BYTES = 4096;

    /** The system property that turns the native copy off when {@code false}. */
    static final String PROPERTY = "io.nvmeof.nativeCopy";

    private static final boolean NATIVE = NativeLibrary.unavailableReason() == null
            && DirectBuffers.addressSupported()
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
            long to = DirectBuffers.address(dst);
            long from = DirectBuffers.address(src);
            if (to != 0 && from != 0) {
                copy0(to + dstIndex, from + srcIndex, length);
                // The buffers own the memory: they must stay reachable (their cleaners not run) until the copy is done.
                Reference.reachabilityFence(dst);
                Reference.reachabilityFence(src);
                return;
            }
        }
        dst.put(dstIndex, src, srcIndex, length);
    }

    /** {@code memmove(to, from, length)}: addresses, not buffers, so the call does no JNI look-ups of its own. */
    private static native void copy0(long to, long from, int length);
}

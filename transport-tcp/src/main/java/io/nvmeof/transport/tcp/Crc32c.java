package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC32C for NVMe/TCP header and data digests (nvmeof-protocol.md §5.8): Castagnoli, initial value and final XOR
 * 0xFFFFFFFF, which is exactly {@link CRC32C#getValue()}. The digest goes on the wire as a little-endian u32.
 *
 * <p>Allocation-free for heap buffers, and for direct buffers with a memory address when the caller passes its
 * {@link DirectView} (one per connection, re-pointed at the bytes for each call). Without a view, a single-component
 * direct buffer goes through {@link ByteBuf#internalNioBuffer}, which a recycled pooled buffer creates anew once per
 * buffer instance; a composite direct buffer costs one {@code ByteBuffer[]}.
 */
public final class Crc32c {
    private Crc32c() {}

    /** Feeds {@code length} bytes of {@code buf} from absolute index {@code index} into {@code crc}. */
    public static void update(CRC32C crc, ByteBuf buf, int index, int length) {
        update(crc, null, buf, index, length);
    }

    /**
     * As {@link #update(CRC32C, ByteBuf, int, int)}; a direct {@code buf} with a memory address is read through
     * {@code view} (may be null), which allocates nothing.
     */
    public static void update(CRC32C crc, DirectView view, ByteBuf buf, int index, int length) {
        if (length == 0) {
            return;
        }
        ByteBuffer direct;
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, length);
        } else if (view != null
                && buf.hasMemoryAddress()
                && (direct = view.at(buf.memoryAddress() + index, length)) != null) {
            crc.update(direct);
        } else if (buf.nioBufferCount() == 1) {
            // internalNioBuffer: a cached view with position/limit set for us; the CRC moves its position only.
            crc.update(buf.internalNioBuffer(index, length));
        } else {
            for (ByteBuffer b : buf.nioBuffers(index, length)) {
                crc.update(b);
            }
        }
    }

    /** Scratch size for {@link #computeHeader}: the largest PDU header (ICReq/ICResp, nvmeof-protocol.md §5.3). */
    public static final int HEADER_SCRATCH = 128;

    /**
     * The CRC32C of a PDU header (at most {@link #HEADER_SCRATCH} bytes), copied through {@code scratch} when the
     * buffer is direct. A recycled pooled buffer makes a new NIO view on its first {@link ByteBuf#internalNioBuffer}
     * call; copying 24–72 bytes is cheaper than that allocation on every PDU.
     */
    public static int computeHeader(CRC32C crc, byte[] scratch, ByteBuf buf, int index, int length) {
        return computeHeader(crc, null, scratch, buf, index, length);
    }

    /**
     * As {@link #computeHeader(CRC32C, byte[], ByteBuf, int, int)}, but a direct buffer with a memory address is read
     * in place through {@code view} (may be null): no copy. Measured with thread CPU time on this project's machine
     * (perf/README.md, "Digests"): 3–4 ns against 7–8 ns copied, for a 24- or 72-byte header.
     */
    public static int computeHeader(CRC32C crc, DirectView view, byte[] scratch, ByteBuf buf, int index, int length) {
        crc.reset();
        ByteBuffer direct;
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, length);
        } else if (view != null
                && buf.hasMemoryAddress()
                && (direct = view.at(buf.memoryAddress() + index, length)) != null) {
            crc.update(direct);
        } else {
            buf.getBytes(index, scratch, 0, length);
            crc.update(scratch, 0, length);
        }
        return (int) crc.getValue();
    }

    /** The CRC32C of {@code length} bytes of {@code buf} from absolute index {@code index}, as the wire u32. */
    public static int compute(CRC32C crc, ByteBuf buf, int index, int length) {
        return compute(crc, null, buf, index, length);
    }

    /** As {@link #compute(CRC32C, ByteBuf, int, int)}, reading direct memory through {@code view} (may be null). */
    public static int compute(CRC32C crc, DirectView view, ByteBuf buf, int index, int length) {
        crc.reset();
        update(crc, view, buf, index, length);
        return (int) crc.getValue();
    }
}

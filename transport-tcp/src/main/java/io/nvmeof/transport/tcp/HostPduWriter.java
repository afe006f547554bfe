package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.DIGEST_LENGTH;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The PDUs the host sends for a command on one NVMe/TCP connection: the CapsuleCmd (nvmeof-protocol.md §5.5), with
 * in-capsule data when the command's SGL says so, and the H2CData PDUs answering an R2T (§5.10). Owned by the
 * connection's event loop, like the {@link NvmeTcpHostHandler} that uses it; it only writes (the handler flushes). The
 * PDUs go into the connection's {@link PduBatch}, so that a burst of commands is one message.
 *
 * <p>Data is never copied: in-capsule data and H2CData's data are {@link SegmentByteBuf} views of the caller's buffer,
 * written after their header (a heap buffer is copied to a direct one by Netty, as the JDK would).
 */
final class HostPduWriter {
    /** Where the PDUs go; H2CData's data are written to the channel after their header, through the batch. */
    private final PduBatch batch;

    private final CRC32C crc = new CRC32C();
    private final byte[] headerScratch = new byte[Crc32c.HEADER_SCRATCH];
    /** Points at the caller's direct data for copies and data digests. */
    private final DirectView direct = new DirectView();

    private final CapsuleCmdPdu capsuleCmd = new CapsuleCmdPdu();
    private final H2cDataPdu h2cData = new H2cDataPdu();
    private SegmentByteBuf.Pool segments;
    private boolean headerDigest;
    private boolean dataDigest;
    private int maxH2cData;

    HostPduWriter(PduBatch batch) {
        this.batch = batch;
    }

    /** When the handler joins its pipeline. */
    void eventLoop(EventLoop loop) {
        this.segments = new SegmentByteBuf.Pool(loop);
    }

    /** What the ICResp settled (nvmeof-protocol.md §5.4). */
    void negotiated(boolean headerDigest, boolean dataDigest, int maxH2cData) {
        this.headerDigest = headerDigest;
        this.dataDigest = dataDigest;
        this.maxH2cData = maxH2cData;
    }

    /**
     * Fills SGL1 of {@code sqe} (nvmeof-protocol.md §5.10) and writes its CapsuleCmd: no data → 0x5A LENGTH 0;
     * host→controller data up to {@code inCapsuleLimit} → 0x01, the data in the capsule; more → 0x5A, the data
     * follows R2Ts; controller→host → 0x5A LENGTH L.
     */
    void capsuleCmd(ChannelHandlerContext ctx, SubmissionQueueEntry sqe, TcpHostRequest r, int inCapsuleLimit) {
        int inCapsule = r.length > 0 && r.hostToController && r.length <= inCapsuleLimit ? r.length : 0;
        r.inCapsule = inCapsule > 0;
        if (inCapsule > 0) {
            sqe.sgl().set(SglDescriptor.ID_IN_CAPSULE, 0, inCapsule); // ICDOFF 0 (nvmeof-protocol.md §1.3)
        } else {
            sqe.sgl().set(SglDescriptor.ID_TCP_TRANSPORT, 0, r.length); // data in PDUs, or LENGTH 0: none
        }
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        // The in-capsule data go as a view of the caller's buffer, which belongs to the command until it completes
        // (the target answers only after it has received them). Taken first, so that nothing is written if it fails.
        SegmentByteBuf data = inCapsule > 0 ? segments.take(r.buffer, r.offset, inCapsule, DataRelease.NONE) : null;
        try {
            ByteBuf out = batch.room(CapsuleCmdPdu.HLEN + hd);
            int at = out.writerIndex();
            capsuleCmd.wrap(out, at).set(headerDigest, dataDigest, inCapsule);
            copySqe(sqe, out, capsuleCmd.sqeIndex());
            if (headerDigest) {
                out.setIntLE(
                        at + CapsuleCmdPdu.HLEN,
                        Crc32c.computeHeader(crc, direct, headerScratch, out, at, CapsuleCmdPdu.HLEN));
            }
            out.writerIndex(at + CapsuleCmdPdu.HLEN + hd);
        } catch (RuntimeException e) {
            if (data != null) {
                data.release();
            }
            throw e;
        }
        if (data != null) {
            ctx.write(data, ctx.voidPromise()); // the batch hands the header over before the data
            if (dataDigest) {
                batch.room(DIGEST_LENGTH).writeIntLE(dataCrc(r, 0, inCapsule));
            }
        }
    }

    /**
     * H2CData PDUs of at most MAXH2CDATA bytes covering [from, to) of {@code r}'s data: header (+HDGST) in a pooled
     * buffer, the data as a view of the caller's buffer, and each DDGST in front of the next header (or alone after
     * the last PDU).
     */
    void h2cData(ChannelHandlerContext ctx, TcpHostRequest r, int ttag, int from, int to) {
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        boolean trailer = false;
        int digest = 0;
        for (int at = from; at < to; ) {
            int n = Math.min(to - at, maxH2cData);
            boolean last = at + n == to;
            int prefix = trailer ? DIGEST_LENGTH : 0;
            ByteBuf out = batch.room(prefix + H2cDataPdu.HLEN + hd);
            int start = out.writerIndex();
            if (trailer) {
                out.setIntLE(start, digest);
            }
            h2cData.wrap(out, start + prefix).set(headerDigest, dataDigest, last, r.cid, ttag, at, n);
            if (headerDigest) {
                out.setIntLE(
                        start + prefix + H2cDataPdu.HLEN,
                        Crc32c.computeHeader(crc, direct, headerScratch, out, start + prefix, H2cDataPdu.HLEN));
            }
            out.writerIndex(start + prefix + H2cDataPdu.HLEN + hd);
            if (dataDigest) {
                digest = dataCrc(r, at, n);
                trailer = true;
            }
            // The batch hands the header over before the data.
            ctx.write(segments.take(r.buffer, r.offset + at, n, DataRelease.NONE), ctx.voidPromise());
            at += n;
        }
        if (trailer) {
            ByteBuf out = batch.room(DIGEST_LENGTH);
            out.writeIntLE(digest);
        }
    }

    /** Received data in {@code src[index, + len)} → the caller's buffer at data offset {@code at} (C2HData). */
    void copyOut(ByteBuf src, int index, TcpHostRequest r, int at, int len) {
        ByteBuffer dst = r.buffer;
        if (dst.hasArray()) {
            src.getBytes(index, dst.array(), dst.arrayOffset() + r.offset + at, len);
        } else {
            src.getBytes(index, r.data(direct, at, len));
        }
    }

    /** The 64-byte SQE as eight little-endian longs: no view, no copy array, heap or direct. */
    private static void copySqe(SubmissionQueueEntry sqe, ByteBuf out, int index) {
        ByteBuffer b = sqe.buffer();
        int from = sqe.offset();
        for (int i = 0; i < SubmissionQueueEntry.LENGTH; i += 8) {
            out.setLongLE(index + i, b.getLong(from + i));
        }
    }

    /** CRC32C of the command's data [at, at + len) (nvmeof-protocol.md §5.8). */
    private int dataCrc(TcpHostRequest r, int at, int len) {
        crc.reset();
        ByteBuffer b = r.buffer;
        if (b.hasArray()) {
            crc.update(b.array(), b.arrayOffset() + r.offset + at, len);
        } else {
            crc.update(r.data(direct, at, len));
        }
        return (int) crc.getValue();
    }
}

package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.DIGEST_LENGTH;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_LAST_PDU;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_SUCCESS;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.CompletionQueueEntry;
import java.util.zip.CRC32C;

/**
 * The PDUs a target connection writes (nvmeof-protocol.md §5.4, §5.10): ICResp, R2T, and a completion's C2HData (its
 * segments written without copying) and CapsuleResp, with header and data digests as negotiated (§5.8). The PDUs go
 * into the connection's {@link PduBatch}, so that a burst of them is one message; the data segments are written to
 * the channel with the void promise (the batch hands its PDUs over before them); the caller flushes. One per
 * connection, used on its event loop only: its flyweights, CRC and {@link DirectView} are reused for every PDU.
 */
final class TargetPduWriter {
    /** Where every PDU goes; a C2HData's data are written to the channel after its header, through the batch. */
    private final PduBatch batch;

    private final CRC32C crc = new CRC32C();
    /** Reads segment memory for the data digest without a per-source NIO view. */
    private final DirectView crcView = new DirectView();

    private final byte[] headerScratch = new byte[Crc32c.HEADER_SCRATCH];
    private final IcRespPdu icResp = new IcRespPdu();
    private final R2tPdu r2t = new R2tPdu();
    private final C2hDataPdu c2hData = new C2hDataPdu();
    private final CapsuleRespPdu capsuleResp = new CapsuleRespPdu();

    private boolean headerDigest;
    private boolean dataDigest;

    TargetPduWriter(PduBatch batch) {
        this.batch = batch;
    }

    /** The digests negotiated in ICReq/ICResp; every PDU written afterwards carries them. */
    void digests(boolean header, boolean data) {
        this.headerDigest = header;
        this.dataDigest = data;
    }

    /** ICResp: PFV 0, CPDA 0, DGST {@code dgst}, MAXH2CDATA {@code maxH2cData} (nvmeof-protocol.md §5.4). */
    void icResp(int dgst, int maxH2cData) {
        ByteBuf out = batch.room(IcRespPdu.LENGTH);
        int at = out.writerIndex();
        icResp.wrap(out, at).set(0, 0, dgst, maxH2cData);
        out.writerIndex(at + IcRespPdu.LENGTH);
    }

    /** One R2T for the whole transfer of {@code r}: TTAG = its slot, R2TO 0 (nvmeof-protocol.md §5.10). */
    void r2t(TcpTargetRequest r) {
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        ByteBuf out = batch.room(R2tPdu.HLEN + hd);
        int at = out.writerIndex();
        r2t.wrap(out, at).set(headerDigest, r.cid(), r.index, 0, r.dataLength());
        finishHeader(out, at, R2tPdu.HLEN);
    }

    /**
     * A completion: one C2HData (DATAO 0, LAST_PDU, data digest over all segments) whose data are the segments the
     * core added, handed to Netty (each segment's release runs its DataRelease), then a CapsuleResp; or only the
     * C2HData with SUCCESS when {@code sqFlowControlDisabled}, the status is 0 and DW0 = DW1 = 0. An error status
     * sends no data, like nvmet: the segments are released (nvmeof-protocol.md §5.10, §5.13).
     */
    void completion(ChannelHandlerContext ctx, TcpTargetRequest r, boolean sqFlowControlDisabled) {
        CompletionQueueEntry cqe = r.response();
        int status = cqe.status();
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        boolean sendData = r.segmentCount > 0 && Status.isSuccess(status);
        boolean success = sendData && sqFlowControlDisabled && status == 0 && cqe.dw0() == 0 && cqe.dw1() == 0;
        int trailer = 0;
        if (sendData) {
            int dd = dataDigest ? DIGEST_LENGTH : 0;
            ByteBuf header = batch.room(C2hDataPdu.HLEN + hd);
            int at = header.writerIndex();
            c2hData.wrap(header, at)
                    .set(
                            headerDigest,
                            dataDigest,
                            FLAG_LAST_PDU | (success ? FLAG_SUCCESS : 0),
                            r.cid(),
                            0,
                            r.segmentBytes);
            finishHeader(header, at, C2hDataPdu.HLEN);
            if (dataDigest) {
                crc.reset();
            }
            for (int i = 0; i < r.segmentCount; i++) {
                SegmentByteBuf s = r.segments[i];
                r.segments[i] = null;
                if (dataDigest) {
                    Crc32c.update(crc, crcView, s, 0, s.capacity());
                }
                ctx.write(s, ctx.voidPromise()); // Netty owns it now; its release runs the DataRelease
            }
            r.segmentCount = 0;
            r.segmentBytes = 0;
            trailer = dd;
        } else {
            r.dropSegments(); // an error status sends no data, like nvmet
        }
        int respLength = success ? 0 : CapsuleRespPdu.HLEN + hd;
        if (trailer + respLength > 0) {
            ByteBuf out = batch.room(trailer + respLength);
            int at = out.writerIndex();
            if (trailer > 0) {
                out.setIntLE(at, (int) crc.getValue());
            }
            if (respLength > 0) {
                capsuleResp.wrap(out, at + trailer).set(headerDigest);
                // The slot's CQE lives in a heap buffer (TcpTargetRequest), so this is a plain array copy.
                out.setBytes(
                        capsuleResp.cqeIndex(),
                        cqe.buffer().array(),
                        cqe.buffer().arrayOffset() + cqe.offset(),
                        CompletionQueueEntry.LENGTH);
                if (headerDigest) {
                    out.setIntLE(
                            at + trailer + CapsuleRespPdu.HLEN,
                            Crc32c.computeHeader(crc, crcView, headerScratch, out, at + trailer, CapsuleRespPdu.HLEN));
                }
            }
            out.writerIndex(at + trailer + respLength);
        }
    }

    /**
     * Ends a header of {@code hlen} bytes written at {@code at} in {@code out}: its HDGST if negotiated
     * (nvmeof-protocol.md §5.8), and the writerIndex after it.
     */
    private void finishHeader(ByteBuf out, int at, int hlen) {
        if (headerDigest) {
            out.setIntLE(at + hlen, Crc32c.computeHeader(crc, crcView, headerScratch, out, at, hlen));
            out.writerIndex(at + hlen + DIGEST_LENGTH);
        } else {
            out.writerIndex(at + hlen);
        }
    }
}

package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.DIGEST_LENGTH;
import static io.nvmeof.transport.tcp.PduHeader.FLAGS_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.HLEN_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.PDO_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.PLEN_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_C2H_DATA;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_C2H_TERM_REQ;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_CAPSULE_CMD;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_H2C_DATA;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_H2C_TERM_REQ;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_IC_REQ;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_IC_RESP;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_OFFSET;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_DATA_OUT_OF_RANGE;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_HEADER_DIGEST_ERROR;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_INVALID_HEADER_FIELD;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Splits an NVMe/TCP byte stream into PDUs (nvmeof-protocol.md §5.1, §5.2) and checks every header against the
 * connection state and direction before buffering its body, so a peer can never make it hold more than the largest
 * legal PDU.
 *
 * <p>State machine (one instance per connection, never shared):
 * <pre>
 *  COMMON_HEADER --8 bytes, TYPE/FLAGS/HLEN/PDO/PLEN legal--&gt; HEADER --HLEN (+HDGST) bytes, digest ok--&gt; BODY
 *        ^                                                                                                  |
 *        +------------------------------- PLEN bytes: emit {@link NvmeTcpPdu} ---------------------------------+
 *  HOST role with a {@link C2hDataSink}, after a C2HData header: STREAM_DATA (each readable piece of data to the
 *  sink) --&gt; STREAM_DIGEST (DDGST, if negotiated) --&gt; {@link C2hDataSink#c2hDataEnd} --&gt; COMMON_HEADER
 *  any fault --&gt; TermReq (nvmeof-protocol.md §5.7) + close --&gt; FAILED (every further byte is discarded)
 * </pre>
 * What is legal depends on the {@link Role}:
 * <ul>
 *   <li>{@link Role#CONTROLLER} (receives host PDUs): ICReq (HLEN = PLEN = 128) first and only first; then
 *       CapsuleCmd (HLEN 72, at most {@code maxInCapsuleData} bytes of data), H2CData (HLEN 24, 1..maxH2cData bytes,
 *       DATAL = PLEN − PDO − DDGST) and H2CTermReq (24 ≤ PLEN ≤ 152, passed on so the handler logs it and closes).
 *       Faults are answered with C2HTermReq (nvmeof-protocol.md §5.3, §5.13, §7.6).</li>
 *   <li>{@link Role#HOST} (receives controller PDUs): ICResp first; then CapsuleResp and R2T (HLEN 24, no data),
 *       C2HData (HLEN 24, 1..maxDataPerPdu bytes, and what {@link C2hDataCheck} allows) and C2HTermReq. Faults
 *       are answered with H2CTermReq (nvmeof-protocol.md §5.7), or only close the connection after
 *       {@link #sendTermReqOnFault sendTermReqOnFault(false)}, as the host side does (nvmeof-protocol.md §7.8).</li>
 * </ul>
 * The common-header rules live in {@link CommonHeaderCheck}. Digest flags must match what was negotiated
 * ({@link #digests}); the header digest is verified here (a mismatch
 * is fatal, FES 3 with FEI = the received digest) and the data digest is verified and reported through
 * {@link NvmeTcpPdu#dataDigestValid()}, because on NVMe/TCP a bad data digest fails one command, not the
 * connection (nvmeof-protocol.md §5.8). No padding is accepted: both sides advertise 0 alignment, so PDO must be HLEN (+4) (nvmeof-protocol.md §5.9).
 *
 * <p>Buffers: the cumulation belongs to {@link ByteToMessageDecoder}; each PDU goes on as a retained slice of it
 * (no copy), owned by the next handler (see {@link NvmeTcpPdu}); C2HData data goes to the sink, if one is set,
 * without being held at all. Nothing here throws out of the pipeline on bad
 * input; a protocol fault fires a {@link NvmeTcpProtocolException} through {@code exceptionCaught} after the TermReq
 * has been written (the channel closes when that write completes).
 */
public final class NvmeTcpPduDecoder extends ByteToMessageDecoder {
    private static final System.Logger LOG = System.getLogger(NvmeTcpPduDecoder.class.getName());

    /** Which end of the connection this decoder serves. */
    public enum Role {
        /** The target: decodes host-to-controller PDUs, answers faults with C2HTermReq. */
        CONTROLLER,
        /** The initiator: decodes controller-to-host PDUs, answers faults with H2CTermReq. */
        HOST
    }

    private enum State {
        COMMON_HEADER,
        HEADER,
        BODY,
        /** HOST role with a {@link C2hDataSink}: the data of a C2HData goes to the sink as it arrives. */
        STREAM_DATA,
        /** ... then its DDGST. */
        STREAM_DIGEST,
        FAILED
    }

    /** Any fabrics command may carry 8 KiB in-capsule (NVME_TCP_ADMIN_CCSZ, nvmeof-protocol.md §5.10, §8). */
    public static final int ADMIN_IN_CAPSULE_DATA_SIZE = 8192;

    private final Role role;
    private final int termReqType;
    private final CRC32C crc = new CRC32C();
    /** Reads the cumulation's memory for the data digest without a per-buffer NIO view. */
    private final DirectView crcView = new DirectView();

    private final byte[] headerScratch = new byte[Crc32c.HEADER_SCRATCH];
    private final NvmeTcpPdu pdu = new NvmeTcpPdu();
    private final CommonHeaderCheck headerCheck;

    private State state = State.COMMON_HEADER;
    private boolean sendTermReq = true;
    private C2hDataCheck c2hDataCheck;
    private C2hDataSink c2hDataSink;
    private boolean initialized;

    // The PDU being decoded.
    private int type;
    private int flags;
    private int hlen;
    private int plen;
    private int hdgst;
    private int ddgst;
    private int dataLength;

    // The C2HData being streamed to the sink.
    private int streamCid;
    private long streamDatao;
    private int streamDone;

    /**
     * @param role              which side this is
     * @param maxInCapsuleData  CONTROLLER: the most in-capsule bytes any CapsuleCmd may carry (the larger of 8192 and
     *                          the port's in-capsule size); HOST: unused
     * @param maxDataPerPdu     CONTROLLER: MAXH2CDATA (nvmeof-protocol.md §5.4); HOST: the most data bytes accepted in one C2HData
     */
    public NvmeTcpPduDecoder(Role role, int maxInCapsuleData, int maxDataPerPdu) {
        if (maxInCapsuleData < 0 || maxDataPerPdu <= 0) {
            throw new IllegalArgumentException("limits must be positive: maxInCapsuleData=" + maxInCapsuleData
                    + " maxDataPerPdu=" + maxDataPerPdu);
        }
        this.role = role;
        this.termReqType = role == Role.CONTROLLER ? TYPE_C2H_TERM_REQ : TYPE_H2C_TERM_REQ;
        this.headerCheck = new CommonHeaderCheck(role, maxInCapsuleData, maxDataPerPdu, termReqType);
    }

    /**
     * The digests negotiated in ICReq/ICResp (nvmeof-protocol.md §5.4), set by the handler on the event loop while it handles the IC
     * PDU, i.e. before the next PDU is decoded. From then on every applicable PDU must carry exactly these.
     */
    public void digests(boolean header, boolean data) {
        headerCheck.digests(header, data);
    }

    /**
     * Whether a fault is answered with a TermReq before closing (default true). The host side turns it off: Linux
     * nvmet does not accept H2CTermReq, so a conservative initiator just closes (nvmeof-protocol.md §5.3, §7.8).
     */
    public NvmeTcpPduDecoder sendTermReqOnFault(boolean send) {
        this.sendTermReq = send;
        return this;
    }

    /**
     * HOST role: checks a C2HData header against the command it names before the PDU's data is buffered, so a
     * controller can never make the host hold more than that command's own buffer (nvmeof-protocol.md §5.10, §7.5).
     */
    @FunctionalInterface
    public interface C2hDataCheck {
        /** @return null if the PDU is acceptable, else why not (a protocol fault, fatal to the connection) */
        String check(int cccid, long datao, int datal, int flags);
    }

    /** Installs the {@link C2hDataCheck} (HOST role); null for none. Called on the event loop before any input. */
    public NvmeTcpPduDecoder c2hDataCheck(C2hDataCheck check) {
        this.c2hDataCheck = check;
        return this;
    }

    /**
     * HOST role: where C2HData payloads go instead of being buffered whole (nvmeof-protocol.md §5.10). Without a sink a C2HData is
     * emitted as one {@link NvmeTcpPdu} once all of it is in, which makes the cumulation grow to the PDU's size
     * (a 128 KiB read costs a 128 KiB+ cumulation, copied into as the socket delivers it). With one, the decoder
     * hands each piece of data to {@link #c2hData} straight from the socket's read buffers, as it arrives, and ends
     * the PDU with {@link #c2hDataEnd}; nothing is emitted down the pipeline for it and the cumulation never holds
     * more than one read. Both are called on the event loop, in stream order relative to the PDUs emitted, after
     * {@link C2hDataCheck} accepted the header.
     */
    public interface C2hDataSink {
        /**
         * Bytes {@code src[index, index + length)} are the command's data at offset {@code offset}. {@code src}
         * is only lent for the call: neither retain it nor move its indexes.
         */
        void c2hData(int cid, long offset, ByteBuf src, int index, int length);

        /**
         * All {@code datal} bytes of the C2HData at DATAO {@code datao} went to {@link #c2hData}; {@code flags} are
         * its FLAGS (LAST_PDU, SUCCESS); {@code digestOk} is false if its data digest did not match (nvmeof-protocol.md §5.8).
         */
        void c2hDataEnd(int cid, long datao, int datal, int flags, boolean digestOk);
    }

    /** Installs the {@link C2hDataSink} (HOST role); null to emit C2HData PDUs whole. Before any input. */
    public NvmeTcpPduDecoder c2hDataSink(C2hDataSink sink) {
        this.c2hDataSink = sink;
        return this;
    }

    /** Discards all further input (the handler found a fault and is closing the connection). */
    public void discardInput() {
        state = State.FAILED;
    }

    /** Capacity of the cumulation now (tests: what the decoder holds on to between reads). */
    int cumulationCapacity() {
        return internalBuffer().capacity();
    }

    /** Whether a fault stopped this decoder. */
    public boolean failed() {
        return state == State.FAILED;
    }

    /**
     * A read that completes the PDU whose first part the cumulation holds: that PDU alone is put together in a buffer
     * of its own, and the rest of the read is then decoded where the socket put it. {@link ByteToMessageDecoder}'s
     * merge would instead copy the whole read behind the partial PDU: with 4 KiB writes arriving in 64 KiB reads,
     * that was a second user-space copy of most of the write data. Done only when the PDU is no longer than the
     * read, so it never copies more than the merge would; otherwise, and in every other state, the merge runs.
     */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if ((state == State.HEADER || state == State.BODY) && msg instanceof ByteBuf) {
            ByteBuf in = (ByteBuf) msg;
            ByteBuf held = internalBuffer();
            int missing = plen - held.readableBytes();
            if (missing > 0 && plen <= in.readableBytes()) {
                try {
                    ByteBuf whole = ctx.alloc().directBuffer(plen);
                    whole.writeBytes(held); // leaves the cumulation empty: the merge below takes whole as it is
                    whole.writeBytes(in, missing);
                    super.channelRead(ctx, whole); // decodes exactly this PDU
                } catch (Throwable t) {
                    in.release();
                    throw t;
                }
                if (in.isReadable() && !ctx.isRemoved()) {
                    super.channelRead(ctx, in);
                } else {
                    in.release(); // all of it went into whole, or the decoder left the pipeline meanwhile
                }
                return;
            }
        }
        super.channelRead(ctx, msg);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        try {
            decodeOne(ctx, in, out);
        } catch (RuntimeException e) {
            // A bug, never bad input: do not let it reach other connections; close this one.
            LOG.log(System.Logger.Level.ERROR, "NVMe/TCP decoder failure on " + ctx.channel(), e);
            stop(in);
            ctx.fireExceptionCaught(e);
            ctx.close();
        }
    }

    private void decodeOne(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        final int start = in.readerIndex();
        switch (state) {
            case COMMON_HEADER:
                if (in.readableBytes() < PduHeader.LENGTH) {
                    return;
                }
                if (!checkCommonHeader(ctx, in, start)) {
                    return;
                }
                state = State.HEADER;
            // fall through
            case HEADER:
                if (in.readableBytes() < hlen + hdgst) {
                    return;
                }
                if (!checkHeader(ctx, in, start)) {
                    return;
                }
                if (type == TYPE_C2H_DATA && c2hDataSink != null) {
                    startStream(in, start);
                    streamData(in);
                    return;
                }
                state = State.BODY;
            // fall through
            case BODY:
                if (in.readableBytes() < plen) {
                    return;
                }
                emit(in, start, out);
                state = State.COMMON_HEADER;
                return;
            case STREAM_DATA:
            case STREAM_DIGEST:
                streamData(in);
                return;
            case FAILED:
            default:
                in.skipBytes(in.readableBytes());
        }
    }

    /** Checks the 8-byte common header (nvmeof-protocol.md §5.2, §5.3); on a fault sends the TermReq and returns false. */
    private boolean checkCommonHeader(ChannelHandlerContext ctx, ByteBuf in, int start) {
        type = in.getUnsignedByte(start + TYPE_OFFSET);
        flags = in.getUnsignedByte(start + FLAGS_OFFSET);
        hlen = in.getUnsignedByte(start + HLEN_OFFSET);
        int pdo = in.getUnsignedByte(start + PDO_OFFSET);
        long plenLong = in.getUnsignedIntLE(start + PLEN_OFFSET);
        if (!headerCheck.check(type, flags, hlen, pdo, plenLong, initialized)) {
            return headerCheck.silent()
                    ? closeSilently(ctx, in, headerCheck.problem())
                    : fault(ctx, in, start, headerCheck.fes(), headerCheck.fei(), headerCheck.problem());
        }
        plen = headerCheck.plen();
        hdgst = headerCheck.hdgst();
        ddgst = headerCheck.ddgst();
        dataLength = headerCheck.dataLength();
        return true;
    }

    /** Checks what needs the whole header: HDGST (nvmeof-protocol.md §5.8) and DATAL of data PDUs (nvmeof-protocol.md §5.10). */
    private boolean checkHeader(ChannelHandlerContext ctx, ByteBuf in, int start) {
        if (hdgst != 0) {
            int received = in.getIntLE(start + hlen);
            int computed = Crc32c.computeHeader(crc, crcView, headerScratch, in, start, hlen);
            if (received != computed) {
                return fault(
                        ctx,
                        in,
                        start,
                        FES_HEADER_DIGEST_ERROR,
                        received,
                        String.format(
                                "%s header digest 0x%08x, computed 0x%08x",
                                PduHeader.typeName(type), received, computed));
            }
        }
        if (type == TYPE_H2C_DATA || type == TYPE_C2H_DATA) {
            long datal = in.getUnsignedIntLE(start + H2cDataPdu.DATAL_OFFSET);
            if (datal != dataLength) {
                return fault(
                        ctx,
                        in,
                        start,
                        FES_INVALID_HEADER_FIELD,
                        H2cDataPdu.DATAL_OFFSET,
                        PduHeader.typeName(type) + " DATAL " + datal + " but PLEN leaves " + dataLength + " bytes");
            }
            if (type == TYPE_C2H_DATA && c2hDataCheck != null) {
                String problem = c2hDataCheck.check(
                        in.getUnsignedShortLE(start + C2hDataPdu.CCCID_OFFSET),
                        in.getUnsignedIntLE(start + C2hDataPdu.DATAO_OFFSET),
                        dataLength,
                        flags);
                if (problem != null) {
                    return fault(ctx, in, start, FES_DATA_OUT_OF_RANGE, 0, problem);
                }
            }
        }
        return true;
    }

    /** The header (+HDGST) of a checked C2HData is in: note what the sink needs and skip it. */
    private void startStream(ByteBuf in, int start) {
        streamCid = in.getUnsignedShortLE(start + C2hDataPdu.CCCID_OFFSET);
        streamDatao = in.getUnsignedIntLE(start + C2hDataPdu.DATAO_OFFSET);
        streamDone = 0;
        if (ddgst != 0) {
            crc.reset();
        }
        in.skipBytes(hlen + hdgst);
        state = State.STREAM_DATA;
    }

    /** Passes on whatever data of the current C2HData is readable; then its DDGST; then ends it. */
    private void streamData(ByteBuf in) {
        if (state == State.STREAM_DATA) {
            int n = Math.min(in.readableBytes(), dataLength - streamDone);
            if (n > 0) {
                int index = in.readerIndex();
                if (ddgst != 0) {
                    Crc32c.update(crc, crcView, in, index, n);
                }
                c2hDataSink.c2hData(streamCid, streamDatao + streamDone, in, index, n);
                if (state == State.FAILED) { // the sink closed the connection
                    in.skipBytes(in.readableBytes());
                    return;
                }
                in.skipBytes(n);
                streamDone += n;
            }
            if (streamDone < dataLength) {
                return;
            }
            state = State.STREAM_DIGEST;
        }
        boolean digestOk = true;
        if (ddgst != 0) {
            if (in.readableBytes() < DIGEST_LENGTH) {
                return;
            }
            digestOk = in.readIntLE() == (int) crc.getValue();
        }
        state = State.COMMON_HEADER;
        c2hDataSink.c2hDataEnd(streamCid, streamDatao, dataLength, flags, digestOk);
    }

    private void emit(ByteBuf in, int start, List<Object> out) {
        int dataIndex = hlen + hdgst;
        boolean digestOk = true;
        if (ddgst != 0 && dataLength > 0) {
            int received = in.getIntLE(start + plen - DIGEST_LENGTH);
            digestOk = received == Crc32c.compute(crc, crcView, in, start + dataIndex, dataLength);
        }
        if (type == TYPE_IC_REQ || type == TYPE_IC_RESP) {
            initialized = true;
        }
        if (type == TYPE_H2C_TERM_REQ || type == TYPE_C2H_TERM_REQ) {
            dataIndex = TermReqPdu.HLEN;
            // The peer closes after its TermReq (nvmeof-protocol.md §5.7); nothing after it is meaningful.
            state = State.FAILED;
        }
        pdu.set(in.readRetainedSlice(plen), type, flags, hlen, dataIndex, dataLength, digestOk);
        out.add(pdu);
    }

    /** How many bytes of the offending header go into the TermReq: its HLEN if legal, else the common header. */
    private int copiedHeaderLength(ByteBuf in) {
        int legal = hlen >= PduHeader.LENGTH && hlen <= TermReqPdu.MAX_COPIED_HEADER && hlen == expectedHlen(type)
                ? hlen
                : PduHeader.LENGTH;
        return Math.min(in.readableBytes(), legal);
    }

    private static int expectedHlen(int t) {
        switch (t) {
            case TYPE_IC_REQ:
            case TYPE_IC_RESP:
                return IcReqPdu.LENGTH;
            case TYPE_CAPSULE_CMD:
                return CapsuleCmdPdu.HLEN;
            default:
                return H2cDataPdu.HLEN;
        }
    }

    /** Sends the TermReq, stops decoding and reports the fault; always returns false. */
    private boolean fault(ChannelHandlerContext ctx, ByteBuf in, int start, int fes, int fei, String message) {
        if (!sendTermReq) {
            String text = "NVMe/TCP protocol fault from " + ctx.channel().remoteAddress() + ": " + message
                    + " -> closing the connection";
            LOG.log(System.Logger.Level.WARNING, text);
            stop(in);
            ctx.fireExceptionCaught(new NvmeTcpProtocolException(text, 0, 0));
            ctx.close();
            return false;
        }
        String text = "NVMe/TCP protocol fault from " + ctx.channel().remoteAddress() + ": " + message + " -> "
                + PduHeader.typeName(termReqType) + " FES " + fes + " (" + TermReqPdu.fesName(fes) + ") FEI " + fei;
        LOG.log(System.Logger.Level.WARNING, text);
        int copied = copiedHeaderLength(in);
        stop(in); // the offending header stays in the buffer, at its index, for the TermReq to copy
        TermReqSender.send(ctx, termReqType, fes, fei, in, start, copied);
        ctx.fireExceptionCaught(new NvmeTcpProtocolException(text, fes, fei));
        return false;
    }

    private boolean closeSilently(ChannelHandlerContext ctx, ByteBuf in, String message) {
        String text = "NVMe/TCP protocol fault from " + ctx.channel().remoteAddress() + ": " + message;
        LOG.log(System.Logger.Level.WARNING, text);
        stop(in);
        ctx.fireExceptionCaught(new NvmeTcpProtocolException(text, 0, 0));
        ctx.close();
        return false;
    }

    /**
     * Stops decoding this connection and drops the rest of its input; first, before anything that may close the
     * channel: a close can deliver channel-inactive at once (an {@code EmbeddedChannel} runs its pending tasks at the
     * end of a write or a close), and the decoder then runs again on what is left of the read and releases it.
     */
    private void stop(ByteBuf in) {
        state = State.FAILED;
        in.skipBytes(in.readableBytes());
    }
}

package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.DIGEST_LENGTH;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_LAST_PDU;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_SUCCESS;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_C2H_TERM_REQ;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_DATA_OUT_OF_RANGE;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_INVALID_HEADER_FIELD;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_PDU_SEQUENCE_ERROR;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_UNSUPPORTED_PARAMETER;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.util.ReferenceCountUtil;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.io.IOException;
import java.net.SocketAddress;
import java.util.concurrent.RejectedExecutionException;
import java.util.zip.CRC32C;

/**
 * The controller side of one NVMe/TCP connection, i.e. one NVMe queue (nvmeof-protocol.md §5.1, §5.13), and the
 * {@link QueueChannel} the target core sees for it. It sits after {@link NvmeTcpPduDecoder} and is owned by the
 * channel's event loop: every field is touched on that thread only (except {@link #closed}, read anywhere).
 *
 * <p>What it does:
 * <ul>
 *   <li>ICReq → ICResp: PFV 0, HPDA 0 required (else C2HTermReq FES 6); CPDA 0; DGST = what the host asked if
 *       digests are allowed, else 0; MAXH2CDATA {@value #MAX_H2C_DATA} (nvmeof-protocol.md §5.4, §7.7).</li>
 *   <li>CapsuleCmd → a free {@link TcpTargetRequest} slot (CID-independent; its index is the TTAG), SQE copied in,
 *       SGL checked (nvmeof-protocol.md §1.3, §5.10), in-capsule data kept in the PDU's own buffer (the slot takes
 *       its reference; a copy into a pooled buffer only when that memory has no address), then
 *       {@link QueueHandler#onCommand}.</li>
 *   <li>{@code receiveData}: in-capsule → the receiver at once; else one R2T for the whole length and H2CData
 *       collected in order (TTAG, CCCID, DATAO, LAST_PDU checked; faults → C2HTermReq) (nvmeof-protocol.md §5.10).</li>
 *   <li>{@code complete}: one C2HData (DATAO 0, LAST_PDU, data digest over all segments) whose data are the core's
 *       segments, written without copying, then a CapsuleResp, or SUCCESS on the C2HData instead when the queue runs
 *       without SQ flow control and the command succeeded with DW0 = DW1 = 0 (nvmeof-protocol.md §5.10).</li>
 * </ul>
 * Flushes are batched: completions during a read burst are flushed at {@code channelReadComplete}; others by one
 * flush task per event-loop turn.
 *
 * <p>Closing ({@code channelInactive}): {@link QueueHandler#onClose} exactly once, then every buffer still held by a
 * slot (write data, unsent read segments) is released exactly once; {@code complete()} afterwards only recycles.
 */
public final class NvmeTcpTargetHandler extends ChannelInboundHandlerAdapter implements QueueChannel {
    private static final System.Logger LOG = System.getLogger(NvmeTcpTargetHandler.class.getName());

    /** MAXH2CDATA we advertise: a multiple of 4 and ≥ 4096 as the Linux host requires (nvmeof-protocol.md §5.4, §7.7). */
    public static final int MAX_H2C_DATA = 131072;
    /**
     * The admin queue has 32 entries (nvmeof-protocol.md §5.11). Before Connect we do not know the queue, so allow twice that many
     * commands, as nvmet keeps 2 x queue size slots (nvmeof-protocol.md §5.12); {@link #connected} sets the real limit.
     */
    private static final int ADMIN_QUEUE_SIZE = 32;
    /**
     * The largest transfer a command may describe. MDTS is 0 (no limit, nvmeof-protocol.md §5.12), but one command's write data is
     * buffered whole, so an absurd SGL LENGTH gets Data SGL Length Invalid instead of an allocation failure.
     */
    public static final int MAX_TRANSFER_LENGTH = 1 << 30;

    private final ListenerOptions options;
    private final PortInfo portInfo;
    private final QueueAcceptor acceptor;
    private final NvmeTcpPduDecoder decoder;
    private final CRC32C crc = new CRC32C();
    /** Reads segment memory for the data digest without a per-source NIO view. */
    private final DirectView crcView = new DirectView();

    private final byte[] headerScratch = new byte[Crc32c.HEADER_SCRATCH];
    private final Runnable flushTask = this::flushNow;

    // Flyweights for the PDUs we read and write (reused, never shared with another connection).
    private final IcReqPdu icReq = new IcReqPdu();
    private final IcRespPdu icResp = new IcRespPdu();
    private final H2cDataPdu h2cData = new H2cDataPdu();
    private final R2tPdu r2t = new R2tPdu();
    private final C2hDataPdu c2hData = new C2hDataPdu();
    private final CapsuleRespPdu capsuleResp = new CapsuleRespPdu();
    private final TermReqPdu termReq = new TermReqPdu();

    private ChannelHandlerContext ctx;
    private Channel channel;
    private QueueHandler core;
    private DataBufferPool dataPool;
    private SegmentByteBuf.Pool segmentPool;

    private volatile boolean closed;
    private boolean onCloseCalled;
    private boolean failed;
    private Throwable closeCause;

    private boolean icDone;
    private boolean headerDigest;
    private boolean dataDigest;
    private int qid = -1;
    private boolean sqFlowControlDisabled;

    // Slots: created lazily up to slotLimit, recycled through an int stack (CID-independent, nvmeof-protocol.md §5.10
    // TTAG).
    private TcpTargetRequest[] slots = new TcpTargetRequest[16];
    private int slotCount;
    private int[] freeSlots = new int[16];
    private int freeTop;
    private int slotLimit;

    private boolean inRead;
    private boolean flushPending;
    private boolean flushScheduled;

    public NvmeTcpTargetHandler(
            ListenerOptions options, PortInfo portInfo, QueueAcceptor acceptor, NvmeTcpPduDecoder decoder) {
        this.options = options;
        this.portInfo = portInfo;
        this.acceptor = acceptor;
        this.decoder = decoder;
        this.slotLimit = 2 * ADMIN_QUEUE_SIZE;
    }

    /** Adds the controller-side NVMe/TCP handlers (decoder, then this handler) to a new connection's pipeline. */
    public static NvmeTcpTargetHandler install(
            ChannelPipeline pipeline, ListenerOptions options, PortInfo portInfo, QueueAcceptor acceptor) {
        NvmeTcpPduDecoder decoder = new NvmeTcpPduDecoder(
                NvmeTcpPduDecoder.Role.CONTROLLER,
                Math.max(NvmeTcpPduDecoder.ADMIN_IN_CAPSULE_DATA_SIZE, options.inCapsuleDataSize()),
                MAX_H2C_DATA);
        NvmeTcpTargetHandler handler = new NvmeTcpTargetHandler(options, portInfo, acceptor, decoder);
        pipeline.addLast("nvme-tcp-decoder", decoder);
        pipeline.addLast("nvme-tcp-target", handler);
        return handler;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Netty events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.channel = ctx.channel();
        this.dataPool = new DataBufferPool(ctx.alloc(), ctx.executor(), DataBufferPool.RETAIN_BYTES);
        this.segmentPool = new SegmentByteBuf.Pool(ctx.executor());
        if (channel.isActive()) {
            start();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start();
        super.channelActive(ctx);
    }

    private void start() {
        if (core != null || closed) {
            return;
        }
        try {
            core = acceptor.accept(this);
            if (core == null) {
                throw new IllegalStateException("the QueueAcceptor returned no QueueHandler");
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "QueueAcceptor failed for " + channel + "; closing it", t);
            closeCause = t;
            channel.close();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof NvmeTcpPdu)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        NvmeTcpPdu pdu = (NvmeTcpPdu) msg;
        inRead = true;
        try {
            if (failed || closed || core == null) {
                return;
            }
            switch (pdu.type()) {
                case PduHeader.TYPE_IC_REQ:
                    onIcReq(pdu);
                    break;
                case PduHeader.TYPE_CAPSULE_CMD:
                    onCapsuleCmd(pdu);
                    break;
                case PduHeader.TYPE_H2C_DATA:
                    onH2cData(pdu);
                    break;
                case PduHeader.TYPE_H2C_TERM_REQ:
                    onH2cTermReq(pdu);
                    break;
                default:
                    // The decoder lets nothing else through for the CONTROLLER role.
                    fault(pdu, FES_INVALID_HEADER_FIELD, PduHeader.TYPE_OFFSET, "unexpected " + pdu);
            }
        } catch (Throwable t) {
            // A bug here or in the core: this connection goes, nothing else does.
            LOG.log(System.Logger.Level.ERROR, "failure handling " + pdu + " on " + channel + "; closing it", t);
            if (closeCause == null) {
                closeCause = t;
            }
            failed = true;
            decoder.discardInput();
            ctx.close();
        } finally {
            pdu.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        inRead = false;
        if (flushPending) {
            flushPending = false;
            ctx.flush();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (closeCause == null) {
            closeCause = cause;
        }
        if (cause instanceof NvmeTcpProtocolException) {
            // The decoder sent a C2HTermReq and closes the channel once it is written.
            failed = true;
            return;
        }
        if (!closed) {
            if (cause instanceof IOException) {
                LOG.log(System.Logger.Level.DEBUG, () -> "connection " + channel + " failed: " + cause);
            } else {
                LOG.log(System.Logger.Level.WARNING, "closing " + channel + " after an unexpected error", cause);
            }
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        closeQueue();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        closeQueue();
    }

    private void closeQueue() {
        if (onCloseCalled) {
            return;
        }
        onCloseCalled = true;
        closed = true;
        if (core != null) {
            try {
                core.onClose(closeCause);
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "QueueHandler.onClose failed on " + channel, t);
            }
        }
        // Drop what the core still held: each write buffer back (and freed), each unsent segment released once.
        for (int i = 0; i < slotCount; i++) {
            TcpTargetRequest r = slots[i];
            if (r.state() != TcpTargetRequest.State.FREE) {
                r.recycle(dataPool);
                r.state(TcpTargetRequest.State.WITH_CORE); // so a late complete() is tolerated, not reused
            }
        }
        if (dataPool != null) {
            dataPool.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Host PDUs

    /** ICReq → ICResp (nvmeof-protocol.md §5.4). */
    private void onIcReq(NvmeTcpPdu pdu) {
        IcReqPdu ic = icReq.wrap(pdu.buffer(), 0);
        if (ic.pfv() != 0) {
            fault(pdu, FES_UNSUPPORTED_PARAMETER, IcReqPdu.PFV_OFFSET, "ICReq PFV " + ic.pfv() + " (only 0 exists)");
            return;
        }
        if (ic.hpda() != 0) {
            // Like nvmet we never pad C2HData, so we cannot honour a host alignment (nvmeof-protocol.md §5.4, §5.9).
            fault(
                    pdu,
                    FES_UNSUPPORTED_PARAMETER,
                    IcReqPdu.HPDA_OFFSET,
                    "ICReq HPDA " + ic.hpda() + " (only 0 supported)");
            return;
        }
        int dgst = options.digestsAllowed() ? ic.dgst() & (IcReqPdu.DGST_HEADER | IcReqPdu.DGST_DATA) : 0;
        headerDigest = (dgst & IcReqPdu.DGST_HEADER) != 0;
        dataDigest = (dgst & IcReqPdu.DGST_DATA) != 0;
        decoder.digests(headerDigest, dataDigest);
        icDone = true;

        ByteBuf out = ctx.alloc().directBuffer(IcRespPdu.LENGTH);
        icResp.wrap(out, 0).set(0, 0, dgst, MAX_H2C_DATA);
        out.writerIndex(IcRespPdu.LENGTH);
        ctx.write(out, ctx.voidPromise());
        scheduleFlush();
    }

    /** CapsuleCmd → a slot → the core (nvmeof-protocol.md §5.5, §5.10, §5.13). */
    private void onCapsuleCmd(NvmeTcpPdu pdu) {
        TcpTargetRequest r = takeSlot();
        if (r == null) {
            fault(pdu, FES_PDU_SEQUENCE_ERROR, 0, "more than " + slotLimit + " commands outstanding on queue " + qid);
            return;
        }
        ByteBuf buf = pdu.buffer();
        buf.getBytes(CapsuleCmdPdu.SQE_OFFSET, r.sqeBuffer().clear());
        r.begin();
        classifyData(r, r.command(), pdu);
        core.onCommand(r);
    }

    /**
     * Sets dataLength, inCapsule, transportStatus and the in-capsule data of a new command from its SGL and the
     * capsule (nvmeof-protocol.md §1.3 acceptance table, nvmeof-protocol.md §5.10, §7.6). Bad descriptors become a status for the core; in-capsule bytes
     * were consumed from the stream either way (nvmeof-protocol.md §5.13).
     */
    private void classifyData(TcpTargetRequest r, SubmissionQueueEntry sqe, NvmeTcpPdu pdu) {
        SglDescriptor sgl = sqe.sgl();
        int id = sgl.identifier();
        long length = sgl.dataLength();
        int inCapsuleBytes = pdu.dataLength();
        boolean fabrics = sqe.opcode() == FabricsCommandType.OPCODE;
        boolean hostToController = r.hostToController();
        r.dataLength((int) Math.min(length, Integer.MAX_VALUE));

        if (inCapsuleBytes > 0 || (id == SglDescriptor.ID_IN_CAPSULE && length > 0)) {
            r.inCapsuleData(true);
            int limit =
                    fabrics || qid <= 0 ? NvmeTcpPduDecoder.ADMIN_IN_CAPSULE_DATA_SIZE : options.inCapsuleDataSize();
            int status;
            if (id != SglDescriptor.ID_IN_CAPSULE) {
                status = Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID);
            } else if (!hostToController) {
                status = Status.dnr(Status.INVALID_FIELD); // nvmet: in-capsule data on a read (nvmeof-protocol.md §7.6)
            } else if (sgl.address() != 0) {
                status = Status.dnr(Status.SGL_OFFSET_INVALID); // ICDOFF is 0 (nvmeof-protocol.md §1.3, §7.5)
            } else if (length > limit) {
                status = Status.dnr(
                        Status.SGL_OFFSET_INVALID); // more than the in-capsule size (nvmeof-protocol.md §1.3, §5.12)
            } else if (length != inCapsuleBytes) {
                status =
                        Status.dnr(Status.DATA_SGL_LENGTH_INVALID); // SGL and PLEN must agree (nvmeof-protocol.md §5.5)
            } else if (!pdu.dataDigestValid()) {
                status = Status.DATA_TRANSFER_ERROR; // nvmeof-protocol.md §5.8: fails the command, not the queue
            } else {
                status = 0;
            }
            r.transportStatus(status);
            // In place when the capsule is contiguous native memory: the slot takes the PDU's buffer reference and
            // releases it at recycle. Else (heap, composite, no DirectView on this JVM) a copy into a pooled buffer.
            if (status == 0 && !r.keepInCapsuleData(pdu)) {
                r.data = dataPool.take(inCapsuleBytes);
                r.data.buf.setBytes(0, pdu.buffer(), pdu.dataIndex(), inCapsuleBytes);
            }
        } else if ((sgl.isKeyed() ? sgl.keyedLength() : length) == 0) {
            // No data: a descriptor of LENGTH 0 says nothing, whatever its type. nvmet ignores it (nvmet_tcp_map_data),
            // and third-party hosts send an all-zero SGL1 (type 0h, length 0) with Keep Alive, Flush and Property
            // Get/Set; the command's own length check decides (nvmeof-protocol.md §1.3).
            r.dataLength(0);
        } else if (id == SglDescriptor.ID_TCP_TRANSPORT) {
            // 0x5A: data in C2HData/H2CData PDUs.
            if (length > MAX_TRANSFER_LENGTH) {
                r.transportStatus(Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
            }
        } else {
            r.transportStatus(Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID));
        }
    }

    /** TargetRequest.receiveData (nvmeof-protocol.md §5.10, §5.13). */
    void receiveData(TcpTargetRequest r, DataReceiver receiver) {
        if (closed) {
            return; // onClose follows or came; the core must not expect a callback
        }
        if (r.transportStatus() != 0) {
            receiver.onData(r, r.transportStatus());
            return;
        }
        if (r.inCapsuleData() || r.dataLength() == 0) {
            receiver.onData(r, 0);
            return;
        }
        try {
            r.data = dataPool.take(r.dataLength());
        } catch (OutOfMemoryError e) {
            LOG.log(System.Logger.Level.WARNING, "no buffer for " + r.dataLength() + " bytes of write data: " + e);
            receiver.onData(r, Status.INTERNAL_ERROR);
            return;
        }
        r.received = 0;
        r.receivingData(receiver);
        // One R2T for the whole transfer, as nvmet does; the host answers it with H2CData PDUs (nvmeof-protocol.md
        // §5.10).
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        ByteBuf out = ctx.alloc().directBuffer(R2tPdu.HLEN + hd);
        r2t.wrap(out, 0).set(headerDigest, r.cid(), r.index, 0, r.dataLength());
        finishHeader(out, R2tPdu.HLEN);
        ctx.write(out, ctx.voidPromise());
        scheduleFlush();
    }

    /** H2CData: data for a slot awaiting it (nvmeof-protocol.md §5.6, §5.10: nvmet's checks). */
    private void onH2cData(NvmeTcpPdu pdu) {
        H2cDataPdu h = h2cData.wrap(pdu.buffer(), 0);
        int ttag = h.ttag();
        if (ttag >= slotCount || slots[ttag].state() != TcpTargetRequest.State.RECEIVING_DATA) {
            fault(
                    pdu,
                    FES_INVALID_HEADER_FIELD,
                    H2cDataPdu.TTAG_OFFSET,
                    "H2CData for TTAG " + ttag + ", which awaits no data");
            return;
        }
        TcpTargetRequest r = slots[ttag];
        if (h.cccid() != r.cid()) {
            fault(
                    pdu,
                    FES_INVALID_HEADER_FIELD,
                    H2cDataPdu.CCCID_OFFSET,
                    "H2CData CCCID " + h.cccid() + " but TTAG " + ttag + " belongs to CID " + r.cid());
            return;
        }
        long datao = h.datao();
        int datal = pdu.dataLength(); // = DATAL, checked by the decoder
        if (datao != r.received) {
            fault(
                    pdu,
                    FES_INVALID_HEADER_FIELD,
                    H2cDataPdu.DATAO_OFFSET,
                    "H2CData DATAO " + datao + " but " + r.received + " bytes received so far (CID " + r.cid() + ")");
            return;
        }
        long end = datao + datal;
        if (end > r.dataLength()) {
            fault(
                    pdu,
                    FES_DATA_OUT_OF_RANGE,
                    0,
                    "H2CData [" + datao + ", " + end + ") beyond the " + r.dataLength() + " bytes of CID " + r.cid());
            return;
        }
        boolean last = end == r.dataLength();
        if (pdu.hasFlag(FLAG_LAST_PDU) != last) {
            fault(
                    pdu,
                    FES_INVALID_HEADER_FIELD,
                    PduHeader.FLAGS_OFFSET,
                    "H2CData ending at " + end + " of " + r.dataLength() + (last ? " without" : " with")
                            + " LAST_PDU (CID " + r.cid() + ")");
            return;
        }
        if (pdu.dataDigestValid()) {
            r.data.buf.setBytes((int) datao, pdu.buffer(), pdu.dataIndex(), datal);
        } else {
            r.dataDigestError =
                    true; // keep consuming; the command fails with Data Transfer Error (nvmeof-protocol.md §5.8)
        }
        r.received = (int) end;
        if (last) {
            r.dataReceived().onData(r, r.dataDigestError ? Status.DATA_TRANSFER_ERROR : 0);
        }
    }

    /** H2CTermReq: the host gives up; log it and close without answering (nvmeof-protocol.md §5.7). */
    private void onH2cTermReq(NvmeTcpPdu pdu) {
        TermReqPdu t = termReq.wrap(pdu.buffer(), 0);
        String text = "host " + channel.remoteAddress() + " sent H2CTermReq: FES " + t.fes() + " ("
                + TermReqPdu.fesName(t.fes()) + ") FEI " + t.fei();
        LOG.log(System.Logger.Level.WARNING, text);
        if (closeCause == null) {
            closeCause = new NvmeTcpProtocolException(text, t.fes(), t.fei());
        }
        failed = true;
        ctx.close();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Completion

    /** TargetRequest.complete: C2HData (if any) + CapsuleResp, or C2HData with SUCCESS (nvmeof-protocol.md §5.10, §5.13). */
    void complete(TcpTargetRequest r) {
        if (closed) {
            r.recycle(dataPool);
            r.state(TcpTargetRequest.State.WITH_CORE); // dropped with the queue; never reused
            return;
        }
        CompletionQueueEntry cqe = r.response();
        int status = cqe.status();
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        boolean sendData = r.segmentCount > 0 && Status.isSuccess(status);
        boolean success = sendData && sqFlowControlDisabled && status == 0 && cqe.dw0() == 0 && cqe.dw1() == 0;
        int trailer = 0;
        if (sendData) {
            int dd = dataDigest ? DIGEST_LENGTH : 0;
            ByteBuf header = ctx.alloc().directBuffer(C2hDataPdu.HLEN + hd);
            c2hData.wrap(header, 0)
                    .set(
                            headerDigest,
                            dataDigest,
                            FLAG_LAST_PDU | (success ? FLAG_SUCCESS : 0),
                            r.cid(),
                            0,
                            r.segmentBytes);
            finishHeader(header, C2hDataPdu.HLEN);
            ctx.write(header, ctx.voidPromise());
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
            ByteBuf out = ctx.alloc().directBuffer(trailer + respLength);
            if (trailer > 0) {
                out.setIntLE(0, (int) crc.getValue());
            }
            if (respLength > 0) {
                capsuleResp.wrap(out, trailer).set(headerDigest);
                // The slot's CQE lives in a heap buffer (TcpTargetRequest), so this is a plain array copy.
                out.setBytes(
                        capsuleResp.cqeIndex(),
                        cqe.buffer().array(),
                        cqe.buffer().arrayOffset() + cqe.offset(),
                        CompletionQueueEntry.LENGTH);
                if (headerDigest) {
                    out.setIntLE(
                            trailer + CapsuleRespPdu.HLEN,
                            Crc32c.computeHeader(crc, crcView, headerScratch, out, trailer, CapsuleRespPdu.HLEN));
                }
            }
            out.writerIndex(trailer + respLength);
            ctx.write(out, ctx.voidPromise());
        }
        r.recycle(dataPool);
        freeSlots[freeTop++] = r.index;
        scheduleFlush();
    }

    /** Sets writerIndex after a header of {@code hlen} bytes and its HDGST if negotiated (nvmeof-protocol.md §5.8). */
    private void finishHeader(ByteBuf out, int hlen) {
        if (headerDigest) {
            out.setIntLE(hlen, Crc32c.computeHeader(crc, crcView, headerScratch, out, 0, hlen));
            out.writerIndex(hlen + DIGEST_LENGTH);
        } else {
            out.writerIndex(hlen);
        }
    }

    private void scheduleFlush() {
        if (inRead) {
            flushPending = true;
        } else if (!flushScheduled) {
            flushScheduled = true;
            ctx.executor().execute(flushTask);
        }
    }

    private void flushNow() {
        flushScheduled = false;
        ctx.flush();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Slots

    private TcpTargetRequest takeSlot() {
        if (freeTop > 0) {
            return slots[freeSlots[--freeTop]];
        }
        if (slotCount >= slotLimit) {
            return null;
        }
        if (slotCount == slots.length) {
            TcpTargetRequest[] bigger = new TcpTargetRequest[slotCount * 2];
            System.arraycopy(slots, 0, bigger, 0, slotCount);
            slots = bigger;
            int[] biggerFree = new int[slotCount * 2];
            System.arraycopy(freeSlots, 0, biggerFree, 0, freeTop);
            freeSlots = biggerFree;
        }
        TcpTargetRequest r = new TcpTargetRequest(slotCount, this);
        slots[slotCount++] = r;
        return r;
    }

    /** Slots created so far (for tests: stays flat in steady state). */
    int slotCount() {
        return slotCount;
    }

    DataBufferPool dataPool() {
        return dataPool;
    }

    SegmentByteBuf.Pool segmentPool() {
        return segmentPool;
    }

    /** Sends a C2HTermReq quoting the PDU's header and closes the connection (nvmeof-protocol.md §5.7). */
    private void fault(NvmeTcpPdu pdu, int fes, int fei, String message) {
        String text = "NVMe/TCP protocol fault from " + channel.remoteAddress() + ": " + message + " -> C2HTermReq FES "
                + fes + " (" + TermReqPdu.fesName(fes) + ") FEI " + fei;
        LOG.log(System.Logger.Level.WARNING, text);
        if (closeCause == null) {
            closeCause = new NvmeTcpProtocolException(text, fes, fei);
        }
        failed = true;
        decoder.discardInput();
        TermReqSender.send(ctx, TYPE_C2H_TERM_REQ, fes, fei, pdu.buffer(), 0, pdu.hlen());
    }

    // ---------------------------------------------------------------------------------------------------------
    // QueueChannel

    @Override
    public PortInfo portInfo() {
        return portInfo;
    }

    @Override
    public SocketAddress remoteAddress() {
        return channel.remoteAddress();
    }

    @Override
    public SocketAddress localAddress() {
        return channel.localAddress();
    }

    @Override
    public void connected(int qid, int sqsize, boolean sqFlowControlDisabled) {
        this.qid = qid;
        this.sqFlowControlDisabled = sqFlowControlDisabled;
        // nvmet keeps 2 x queue size command slots (nvmeof-protocol.md §5.12); never below what exists already.
        this.slotLimit = Math.max(slotCount, 2 * (sqsize + 1));
    }

    @Override
    public void execute(Runnable task) {
        if (closed) {
            return;
        }
        try {
            channel.eventLoop().execute(task);
        } catch (RejectedExecutionException e) {
            // The event loop is shutting down with the listener: the queue is closing, drop the task.
        }
    }

    @Override
    public boolean inQueueThread() {
        return channel.eventLoop().inEventLoop();
    }

    @Override
    public void close() {
        channel.close();
    }

    @Override
    public boolean isOpen() {
        return !closed && channel.isOpen();
    }

    /** The queue ID from Connect, or -1 before it. */
    public int qid() {
        return qid;
    }

    /** Whether ICReq/ICResp completed. */
    public boolean initialized() {
        return icDone;
    }

    /** Whether header and data digests were negotiated (nvmeof-protocol.md §5.4). */
    public boolean headerDigest() {
        return headerDigest;
    }

    public boolean dataDigest() {
        return dataDigest;
    }

    @Override
    public String toString() {
        return "NvmeTcpTargetHandler[" + channel + " qid=" + qid + "]";
    }
}

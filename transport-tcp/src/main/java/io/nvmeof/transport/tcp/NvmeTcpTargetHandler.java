package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.TYPE_C2H_TERM_REQ;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_INVALID_HEADER_FIELD;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_PDU_SEQUENCE_ERROR;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.util.ReferenceCountUtil;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import java.io.IOException;
import java.net.SocketAddress;
import java.util.concurrent.RejectedExecutionException;

/**
 * The controller side of one NVMe/TCP connection, i.e. one NVMe queue (nvmeof-protocol.md §5.1, §5.13), and the
 * {@link QueueChannel} the target core sees for it. It sits after {@link NvmeTcpPduDecoder} and is owned by the
 * channel's event loop: every field is touched on that thread only (except {@link #closed}, read anywhere).
 *
 * <p>What it does:
 * <ul>
 *   <li>ICReq → ICResp: PFV 0, HPDA 0 required (else C2HTermReq FES 6); CPDA 0; DGST = what the host asked if
 *       digests are allowed, else 0; MAXH2CDATA {@value #MAX_H2C_DATA} (nvmeof-protocol.md §5.4, §7.7).</li>
 *   <li>CapsuleCmd → a free slot ({@link TargetSlots}; its index is the TTAG), SQE copied in, SGL and in-capsule
 *       data classified ({@link CapsuleDataCheck}), then {@link QueueHandler#onCommand}.</li>
 *   <li>{@code receiveData}: in-capsule → the receiver at once; else one R2T for the whole length and H2CData
 *       collected in order ({@link H2cDataCollector}; faults → C2HTermReq) (nvmeof-protocol.md §5.10).</li>
 *   <li>{@code complete}: C2HData from the core's segments (no copy) and CapsuleResp, or SUCCESS on the C2HData
 *       ({@link TargetPduWriter}), then the slot is recycled (nvmeof-protocol.md §5.10).</li>
 * </ul>
 * Flushes are batched by a {@link Flusher}: completions during a read burst are flushed after each socket read
 * ({@link ReadBoundary}) and at {@code channelReadComplete}; others by one flush task per event-loop turn.
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
    private final CapsuleDataCheck capsuleData;
    private final TargetPduWriter writer;
    private final TargetSlots slots;
    private final H2cDataCollector h2cDataIn = new H2cDataCollector();

    // Flyweights for the PDUs we read (reused, never shared with another connection).
    private final IcReqPdu icReq = new IcReqPdu();
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
    /** System.nanoTime of the socket read being handled, the arrival time of its capsules; 0 until one needs it. */
    private long readNanos;

    private Flusher flusher;
    /** Told of every command received: the polling loop's pacing ({@link PollPacing#of}). */
    private PollPacing pacing;

    public NvmeTcpTargetHandler(
            ListenerOptions options,
            PortInfo portInfo,
            QueueAcceptor acceptor,
            NvmeTcpPduDecoder decoder,
            PduBatch batch) {
        this.options = options;
        this.portInfo = portInfo;
        this.acceptor = acceptor;
        this.decoder = decoder;
        this.writer = new TargetPduWriter(batch);
        this.capsuleData = new CapsuleDataCheck(options);
        this.slots = new TargetSlots(this, 2 * ADMIN_QUEUE_SIZE);
    }

    /**
     * Adds the controller-side NVMe/TCP handlers to a new connection's pipeline: the {@link ReadBoundary} at its head
     * (before TLS, if any), then the {@link PduBatch} every write passes, the decoder and this handler.
     */
    public static NvmeTcpTargetHandler install(
            ChannelPipeline pipeline, ListenerOptions options, PortInfo portInfo, QueueAcceptor acceptor) {
        NvmeTcpPduDecoder decoder = new NvmeTcpPduDecoder(
                NvmeTcpPduDecoder.Role.CONTROLLER,
                Math.max(NvmeTcpPduDecoder.ADMIN_IN_CAPSULE_DATA_SIZE, options.inCapsuleDataSize()),
                MAX_H2C_DATA);
        PduBatch batch = new PduBatch();
        NvmeTcpTargetHandler handler = new NvmeTcpTargetHandler(options, portInfo, acceptor, decoder, batch);
        ReadBoundary.addFirst(pipeline);
        pipeline.addLast("nvme-tcp-batch", batch);
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
        this.flusher = new Flusher(ctx);
        this.pacing = PollPacing.of(ctx.executor());
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
        flusher.readStarted();
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
        readNanos = 0;
        flusher.readComplete();
        ctx.fireChannelReadComplete();
    }

    /** After each socket read ({@link ReadBoundary}): what that read produced goes out before the next read. */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == ReadBoundary.END_OF_READ) {
            readNanos = 0;
            flusher.endOfSocketRead();
            return;
        }
        ctx.fireUserEventTriggered(evt);
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
        slots.dropAll(dataPool); // a late complete() is tolerated, the slots are never reused
        if (dataPool != null) {
            dataPool.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Host PDUs

    /** ICReq → ICResp (nvmeof-protocol.md §5.4, {@link IcReqCheck}). */
    private void onIcReq(NvmeTcpPdu pdu) {
        IcReqCheck check = new IcReqCheck(); // once per connection
        int dgst = check.digests(icReq.wrap(pdu.buffer(), 0), options.digestsAllowed());
        if (dgst < 0) {
            fault(pdu, check.fes(), check.fei(), check.fault());
            return;
        }
        headerDigest = (dgst & IcReqPdu.DGST_HEADER) != 0;
        dataDigest = (dgst & IcReqPdu.DGST_DATA) != 0;
        decoder.digests(headerDigest, dataDigest);
        writer.digests(headerDigest, dataDigest);
        icDone = true;
        writer.icResp(dgst, MAX_H2C_DATA);
        flusher.flushSoon();
    }

    /** CapsuleCmd → a slot → the core (nvmeof-protocol.md §5.5, §5.10, §5.13). */
    private void onCapsuleCmd(NvmeTcpPdu pdu) {
        TcpTargetRequest r = slots.take();
        pacing.capsule();
        if (r == null) {
            fault(
                    pdu,
                    FES_PDU_SEQUENCE_ERROR,
                    0,
                    "more than " + slots.limit() + " commands outstanding on queue " + qid);
            return;
        }
        ByteBuf buf = pdu.buffer();
        buf.getBytes(CapsuleCmdPdu.SQE_OFFSET, r.sqeBuffer().clear());
        if (readNanos == 0) {
            readNanos = System.nanoTime(); // once per socket read: its capsules arrived together
        }
        r.begin(readNanos);
        capsuleData.classify(r, pdu, qid, dataPool);
        core.onCommand(r);
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
        writer.r2t(r);
        flusher.flushSoon();
    }

    /** H2CData: data for a slot awaiting it (nvmeof-protocol.md §5.6, §5.10: nvmet's checks, H2cDataCollector). */
    private void onH2cData(NvmeTcpPdu pdu) {
        TcpTargetRequest r = h2cDataIn.accept(pdu, slots, dataPool);
        if (r == null) {
            fault(pdu, h2cDataIn.fes(), h2cDataIn.fei(), h2cDataIn.fault());
        } else if (r.received == r.dataLength()) {
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
        writer.completion(ctx, r, sqFlowControlDisabled);
        r.recycle(dataPool);
        slots.giveBack(r);
        flusher.flushSoon();
    }

    /** Slots created so far (for tests: stays flat in steady state). */
    int slotCount() {
        return slots.count();
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
        slots.limitForQueue(sqsize);
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

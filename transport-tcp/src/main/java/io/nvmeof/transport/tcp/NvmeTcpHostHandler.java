package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import io.nvmeof.core.command.DataDirection;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.host.SubmissionList;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;

/**
 * The host (initiator) side of one NVMe/TCP connection, i.e. one NVMe queue (nvmeof-protocol.md §5.1, §5.13), as a
 * Netty handler after an {@link NvmeTcpPduDecoder} in the HOST role. Owned by the channel's event loop: every field is
 * touched on that thread only, except {@link #closed}. {@link TcpHostQueue} is the {@code HostQueue} the initiator
 * sees for it; {@link HostPduWriter} writes the host's PDUs; {@link C2hDataReceiver} takes C2HData in.
 *
 * <ul>
 *   <li>Connection: ICReq (PFV 0, HPDA 0, MAXR2T 0, DGST as asked) when the channel is active; the ICResp is checked
 *       as the Linux host does (PFV 0, DGST exactly as asked, CPDA 0, MAXH2CDATA a multiple of 4 and ≥ 4096; TYPE,
 *       HLEN and PLEN in the decoder) (nvmeof-protocol.md §5.4). {@link #ready()} completes then, or fails with a
 *       clear IOException.</li>
 *   <li>{@link #send}: SGL1 is filled (nvmeof-protocol.md §5.10): no data → 0x5A LENGTH 0; host→controller up to the
 *       in-capsule limit (8192 for fabrics commands, else {@code maxInCapsuleData}) → 0x01 with the data in the
 *       CapsuleCmd; bigger → 0x5A, then R2T/H2CData; controller→host → 0x5A LENGTH L.</li>
 *   <li>R2T (nvmeof-protocol.md §5.10, §7.5): R2TL ≠ 0, R2TO ≥ bytes already sent, R2TO + R2TL ≤ LENGTH, a known CID
 *       awaiting data; answered by H2CData PDUs of at most MAXH2CDATA bytes each.</li>
 *   <li>CapsuleResp: a known CID → {@link HostCommand#onResponse} with a CQE flyweight valid during the call; a
 *       C2HData with SUCCESS completes with a synthesized CQE (status 0, DW0 = DW1 = 0); a bad data digest makes
 *       it Data Transfer Error (nvmeof-protocol.md §5.8).</li>
 *   <li>Faults (unknown CID, bad lengths or order, header digest error, unexpected PDU) and C2HTermReq: logged; the
 *       connection is closed without an H2CTermReq (nvmeof-protocol.md §7.8); the queue's {@link SubmissionList}
 *       fails every command in flight or queued once, then the close listener is called once.</li>
 * </ul>
 */
final class NvmeTcpHostHandler extends ChannelInboundHandlerAdapter {
    private static final System.Logger LOG = System.getLogger(NvmeTcpHostHandler.class.getName());

    private final TcpHostQueue queue;
    private final HostQueueOptions options;
    private final String peer;
    private final int qid;
    private final int queueSize;
    final NvmeTcpPduDecoder decoder;
    private final SubmissionList commands;
    /** Gathers the PDUs {@link #writer} makes; in the pipeline before the decoder ({@link TcpHostQueue#install}). */
    final PduBatch batch = new PduBatch();

    private final HostPduWriter writer = new HostPduWriter(batch);
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    /** Sends what other threads queued, then flushes once. */
    final Runnable drainTask = this::drain;

    private final SubmissionList.Sender sender = this::send;

    // Flyweights (reused; this connection only).
    private final IcReqPdu icReq = new IcReqPdu();
    private final IcRespPdu icResp = new IcRespPdu();
    private final CapsuleRespPdu capsuleResp = new CapsuleRespPdu();
    private final R2tPdu r2t = new R2tPdu();
    private final TermReqPdu termReq = new TermReqPdu();
    private final ByteBuffer cqeBuffer =
            ByteBuffer.allocate(CompletionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();

    /** Set on the event loop when the queue closes; read by submitting threads. */
    private volatile boolean closed;
    /** Set on the event loop when the ICResp was accepted. */
    private volatile boolean live;

    // Event loop only.
    private ChannelHandlerContext ctx;
    private Channel channel;
    private EventLoop loop;
    private final TcpHostRequest[] requests;
    private boolean headerDigest;
    private boolean dataDigest;
    private int maxH2cData;
    private boolean icSent;
    private Flusher flusher;
    /** Told of every completion received: the polling loop's pacing ({@link PollPacing#of}). */
    private PollPacing pacing;

    NvmeTcpHostHandler(TcpHostQueue queue, HostQueueOptions options, SubmissionList commands, String peer) {
        this.queue = queue;
        this.options = options;
        this.peer = peer;
        this.qid = options.qid();
        this.queueSize = options.queueSize();
        this.commands = commands;
        this.requests = new TcpHostRequest[queueSize];
        C2hDataReceiver c2h = new C2hDataReceiver(this, writer);
        this.decoder = new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.HOST, 0, TcpHostQueue.MAX_C2H_DATA)
                .sendTermReqOnFault(false)
                .c2hDataCheck(c2h)
                .c2hDataSink(c2h);
        cqe.wrap(cqeBuffer, 0);
    }

    /** Completes when ICResp was accepted; fails with an IOException saying why not. */
    CompletableFuture<Void> ready() {
        return ready;
    }

    boolean closed() {
        return closed;
    }

    boolean live() {
        return live;
    }

    EventLoop loop() {
        return loop;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Netty events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.channel = ctx.channel();
        this.loop = channel.eventLoop();
        this.flusher = new Flusher(ctx);
        this.pacing = PollPacing.of(ctx.executor());
        writer.eventLoop(loop);
        if (channel.isActive()) {
            sendIcReq();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        sendIcReq();
        super.channelActive(ctx);
    }

    /** ICReq: PFV 0, HPDA 0, MAXR2T 0 (one R2T at a time), DGST as asked (nvmeof-protocol.md §5.4, §7.8). */
    private void sendIcReq() {
        if (icSent || closed) {
            return;
        }
        icSent = true;
        int dgst =
                (options.headerDigest() ? IcReqPdu.DGST_HEADER : 0) | (options.dataDigest() ? IcReqPdu.DGST_DATA : 0);
        ByteBuf out = ctx.alloc().directBuffer(IcReqPdu.LENGTH);
        icReq.wrap(out, 0).set(0, 0, dgst, 0);
        out.writerIndex(IcReqPdu.LENGTH);
        ctx.writeAndFlush(out, ctx.voidPromise());
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
            if (closed) {
                return;
            }
            switch (pdu.type()) {
                case PduHeader.TYPE_IC_RESP:
                    onIcResp(pdu);
                    break;
                case PduHeader.TYPE_CAPSULE_RESP:
                    onCapsuleResp(pdu);
                    break;
                case PduHeader.TYPE_R2T:
                    onR2t(pdu);
                    break;
                case PduHeader.TYPE_C2H_TERM_REQ:
                    onC2hTermReq(pdu);
                    break;
                default:
                    // The decoder lets nothing else through in the HOST role (C2HData goes to c2hData/c2hDataEnd).
                    fault("unexpected " + pdu);
            }
        } catch (Throwable t) {
            // A bug here: this queue goes, nothing else does.
            LOG.log(
                    System.Logger.Level.ERROR,
                    "failure handling " + pdu + " on queue " + qid + " to " + peer + "; closing it",
                    t);
            shutdown(t);
        } finally {
            pdu.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flusher.readComplete();
        ctx.fireChannelReadComplete();
    }

    /** After each socket read ({@link ReadBoundary}): what that read produced goes out before the next read. */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == ReadBoundary.END_OF_READ) {
            flusher.endOfSocketRead();
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A decoder fault was logged there; a socket error is the normal way a controller goes away.
        if (!closed && !(cause instanceof NvmeTcpProtocolException)) {
            if (cause instanceof IOException) {
                LOG.log(System.Logger.Level.DEBUG, () -> "queue " + qid + " to " + peer + " failed: " + cause);
            } else {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "closing queue " + qid + " to " + peer + " after an unexpected error",
                        cause);
            }
        }
        shutdown(cause);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        shutdown(new IOException(
                live
                        ? "controller at " + peer + " closed the connection (queue " + qid + ")"
                        : "controller at " + peer + " closed the connection before its ICResp"));
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        shutdown(new IOException("the NVMe/TCP host handler was removed from the pipeline"));
    }

    // ---------------------------------------------------------------------------------------------------------
    // Controller PDUs

    /** ICResp checks of the Linux host (nvmeof-protocol.md §5.4); TYPE, HLEN, FLAGS, PDO and PLEN were checked by the decoder. */
    private void onIcResp(NvmeTcpPdu pdu) {
        IcRespPdu ic = icResp.wrap(pdu.buffer(), 0);
        int wanted =
                (options.headerDigest() ? IcReqPdu.DGST_HEADER : 0) | (options.dataDigest() ? IcReqPdu.DGST_DATA : 0);
        int got = ic.dgst() & (IcReqPdu.DGST_HEADER | IcReqPdu.DGST_DATA);
        long maxH2c = ic.maxH2cData();
        String problem = IcRespCheck.problem(ic, wanted);
        if (problem != null) {
            IOException e = new IOException("controller at " + peer + " " + problem);
            LOG.log(System.Logger.Level.WARNING, e.getMessage());
            ready.completeExceptionally(e);
            shutdown(e);
            return;
        }
        headerDigest = (got & IcReqPdu.DGST_HEADER) != 0;
        dataDigest = (got & IcReqPdu.DGST_DATA) != 0;
        decoder.digests(headerDigest, dataDigest);
        // MAXH2CDATA is u32; anything above what one int can index is as good as unlimited.
        maxH2cData = (int) Math.min(maxH2c, Integer.MAX_VALUE & ~3);
        writer.negotiated(headerDigest, dataDigest, maxH2cData);
        live = true;
        ready.complete(null);
    }

    /** CapsuleResp → the command's onResponse (nvmeof-protocol.md §5.5). */
    private void onCapsuleResp(NvmeTcpPdu pdu) {
        CapsuleRespPdu resp = capsuleResp.wrap(pdu.buffer(), 0);
        int cid = resp.cid();
        TcpHostRequest r = inFlight(cid);
        if (r == null) {
            fault("CapsuleResp for CID " + cid + ", which is not in flight");
            return;
        }
        pdu.buffer().getBytes(CapsuleRespPdu.CQE_OFFSET, cqeBuffer.array(), 0, CompletionQueueEntry.LENGTH);
        if (r.digestError) {
            cqe.status(Status.DATA_TRANSFER_ERROR); // nvmeof-protocol.md §5.8: the data is bad whatever the controller
            // says
        }
        complete(r);
    }

    /** R2T → H2CData PDUs for [R2TO, R2TO + R2TL) (nvmeof-protocol.md §5.10, checks of nvmeof-protocol.md §7.5). */
    private void onR2t(NvmeTcpPdu pdu) {
        R2tPdu t = r2t.wrap(pdu.buffer(), 0);
        int cid = t.cccid();
        long r2to = t.r2to();
        long r2tl = t.r2tl();
        TcpHostRequest r = inFlight(cid);
        if (r == null) {
            fault("R2T for CID " + cid + ", which is not in flight");
            return;
        }
        if (!r.hostToController || r.length == 0) {
            fault("R2T for CID " + cid + ", which has no data to send");
            return;
        }
        if (r.inCapsule) {
            fault("R2T for CID " + cid + ", whose data went in-capsule");
            return;
        }
        if (r2tl == 0) {
            fault("R2T with R2TL 0 (CID " + cid + ")");
            return;
        }
        if (r2to < r.sent) {
            fault("R2T R2TO " + r2to + " goes back before the " + r.sent + " bytes already sent (CID " + cid + ")");
            return;
        }
        if (r2to + r2tl > r.length) {
            fault("R2T [" + r2to + ", " + (r2to + r2tl) + ") beyond the " + r.length + " bytes of CID " + cid);
            return;
        }
        writer.h2cData(ctx, r, t.ttag(), (int) r2to, (int) (r2to + r2tl));
        r.sent = r2to + r2tl;
        flusher.flushSoon();
    }

    /** C2HTermReq: the controller gives up on this connection; log it and close (nvmeof-protocol.md §5.7). */
    private void onC2hTermReq(NvmeTcpPdu pdu) {
        TermReqPdu t = termReq.wrap(pdu.buffer(), 0);
        String text = "controller at " + peer + " terminated queue " + qid + " with C2HTermReq: FES " + t.fes() + " ("
                + TermReqPdu.fesName(t.fes()) + ") FEI " + t.fei();
        LOG.log(System.Logger.Level.WARNING, text);
        shutdown(new NvmeTcpProtocolException(text, t.fes(), t.fei()));
    }

    // ---------------------------------------------------------------------------------------------------------
    // Sending

    /** On the event loop: sends what other threads queued, then flushes once. */
    private void drain() {
        if (commands.drain(sender) > 0 && !closed) {
            flusher.flushNow();
        }
    }

    /** On the event loop: sends a command submitted on it (after anything queued before it), flushed soon. */
    void sendNow(HostCommand command) {
        if (commands.hasQueued()) {
            commands.drain(sender);
        }
        send(command);
        flusher.flushSoon();
    }

    /**
     * Binds the CID's request and writes the CapsuleCmd ({@link HostPduWriter#capsuleCmd}); the CID was claimed in
     * the {@link SubmissionList}. A failure here leaves the CID to the caller (the list releases it).
     */
    private void send(HostCommand command) {
        SubmissionQueueEntry sqe = command.command();
        int cid = sqe.cid();
        TcpHostRequest r = requests[cid];
        if (r == null) {
            r = requests[cid] = new TcpHostRequest(cid);
        }
        r.bind(command, DataDirection.of(sqe) == DataDirection.HOST_TO_CONTROLLER);
        int limit = sqe.opcode() == FabricsCommandType.OPCODE
                ? TcpHostQueue.FABRICS_IN_CAPSULE_LIMIT
                : queue.maxInCapsuleData();
        try {
            writer.capsuleCmd(ctx, sqe, r, limit);
        } catch (RuntimeException e) {
            r.reset();
            throw e;
        }
    }

    /** The request of a CID sent and not yet answered, or null. */
    TcpHostRequest inFlight(int cid) {
        if (cid >= queueSize) {
            return null;
        }
        TcpHostRequest r = requests[cid];
        return r != null && r.state == TcpHostRequest.State.SENT ? r : null;
    }

    /** The request of a CID that {@link C2hDataReceiver#check} accepted. */
    TcpHostRequest request(int cid) {
        return requests[cid];
    }

    /** A C2HData with SUCCESS: no CapsuleResp follows (nvmeof-protocol.md §5.10). */
    void completeWithoutCapsuleResp(TcpHostRequest r) {
        flusher.readStarted(); // as in channelRead: a command submitted from the callback waits for the read's end
        try {
            cqe.clear();
            cqe.sqid(qid);
            cqe.cid(r.cid);
            cqe.status(r.digestError ? Status.DATA_TRANSFER_ERROR : 0);
            complete(r);
        } catch (Throwable t) {
            LOG.log(
                    System.Logger.Level.ERROR,
                    "failure ending C2HData for CID " + r.cid + " on queue " + qid + " to " + peer + "; closing it",
                    t);
            shutdown(t);
        }
    }

    /** Frees the CID, then calls back with {@link #cqe} (the callback may submit the same CID again). */
    private void complete(TcpHostRequest r) {
        pacing.capsule();
        HostCommand c = r.reset();
        commands.release(r.cid);
        try {
            c.onResponse(cqe);
        } catch (Throwable t) {
            LOG.log(
                    System.Logger.Level.ERROR,
                    "HostCommand.onResponse failed for CID " + r.cid + " on queue " + qid,
                    t);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Faults and closing

    private void fault(String message) {
        String text = "NVMe/TCP protocol fault from controller at " + peer + " on queue " + qid + ": " + message
                + "; closing the connection";
        LOG.log(System.Logger.Level.WARNING, text);
        shutdown(new NvmeTcpProtocolException(text, 0, 0));
    }

    /**
     * Closes the connection (no H2CTermReq, nvmeof-protocol.md §7.8), then fails every command in flight or queued
     * exactly once, then tells the listener. {@code cause} null = an orderly close. On the event loop only;
     * idempotent.
     */
    void shutdown(Throwable cause) {
        if (closed) {
            return;
        }
        closed = true;
        flusher.stop();
        decoder.discardInput();
        if (!ready.isDone()) {
            ready.completeExceptionally(
                    cause instanceof IOException
                                    && cause.getMessage() != null
                                    && cause.getMessage().startsWith("controller at ")
                            ? cause
                            : new IOException(
                                    "controller at " + peer + " failed the ICReq/ICResp exchange: "
                                            + (cause == null ? "queue closed" : cause.getMessage()),
                                    cause));
        }
        // Closing on the event loop releases what Netty still holds (e.g. H2CData views of caller buffers) before the
        // commands are failed, so a buffer is the caller's again once its command has been told.
        channel.close();
        for (TcpHostRequest r : requests) {
            if (r != null) {
                r.reset();
            }
        }
        commands.close(cause != null ? cause : new IOException("queue " + qid + " to " + peer + " closed"));
        queue.closed(cause);
    }

    /** Whether header / data digests were negotiated (nvmeof-protocol.md §5.4); meaningful once ready. */
    boolean headerDigest() {
        return headerDigest;
    }

    boolean dataDigest() {
        return dataDigest;
    }

    /** MAXH2CDATA from the ICResp. */
    int maxH2cData() {
        return maxH2cData;
    }

    @Override
    public String toString() {
        return "NvmeTcpHostHandler[" + peer + " qid=" + qid + "]";
    }
}

package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.DIGEST_LENGTH;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_LAST_PDU;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_SUCCESS;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.internal.PlatformDependent;
import io.nvmeof.core.command.DataDirection;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * The host (initiator) side of one NVMe/TCP connection, i.e. one NVMe queue (nvmeof-protocol.md §5.1, §5.13), and the
 * {@link HostQueue} the initiator sees for it. It sits after an {@link NvmeTcpPduDecoder} in the HOST role and is
 * owned by the channel's event loop: every field is touched on that thread only, except the few marked as shared.
 *
 * <p>What it does:
 * <ul>
 *   <li>Connection: ICReq (PFV 0, HPDA 0, MAXR2T 0, DGST as asked) when the channel is active; the ICResp is checked
 *       as the Linux host does (PFV 0, DGST exactly as asked, CPDA 0, MAXH2CDATA a multiple of 4 and ≥ 4096; TYPE,
 *       HLEN and PLEN in the decoder) (nvmeof-protocol.md §5.4). {@link #ready()} completes then, or fails with a clear IOException.</li>
 *   <li>{@link #submit}: SGL1 is filled (nvmeof-protocol.md §5.10): no data → 0x5A LENGTH 0; host→controller up to the in-capsule limit
 *       (8192 for fabrics commands, else {@link #maxInCapsuleData(int)}) → 0x01 with the data in the CapsuleCmd;
 *       bigger → 0x5A, then R2T/H2CData; controller→host → 0x5A LENGTH L.</li>
 *   <li>R2T (nvmeof-protocol.md §5.10, §7.5): R2TL ≠ 0, R2TO ≥ bytes already sent, R2TO + R2TL ≤ LENGTH, a known CID awaiting data;
 *       answered by H2CData PDUs of at most MAXH2CDATA bytes each (absolute DATAO, TTAG copied, LAST_PDU on the
 *       last), written straight from the caller's buffer through {@link SegmentByteBuf} views.</li>
 *   <li>C2HData: a known controller→host CID, DATAO = bytes so far, DATAO + DATAL ≤ LENGTH, SUCCESS only with
 *       LAST_PDU and the whole length (checked by the decoder as soon as the header is in); the data is copied once,
 *       from the socket's read buffers into the caller's buffer, piece by piece as it arrives (the decoder streams
 *       it to {@link #c2hData}, so a 128 KiB read never grows the cumulation to 128 KiB). SUCCESS completes the
 *       command with a synthesized CQE
 *       (status 0, DW0 = DW1 = 0). A bad data digest fails that command with Data Transfer Error (nvmeof-protocol.md §5.8).</li>
 *   <li>CapsuleResp: a known CID → {@link HostCommand#onResponse} with a CQE flyweight valid during the call.</li>
 *   <li>Faults (unknown CID, bad lengths or order, header digest error, unexpected PDU) and C2HTermReq: logged; the
 *       connection is closed without an H2CTermReq (nvmeof-protocol.md §7.8); every command in flight gets
 *       {@link HostCommand#onTransportError} once, then the {@link #onClose} listener is called once.</li>
 * </ul>
 *
 * <p><b>Threads.</b> {@link #submit} may be called from any thread. On the event loop it writes at once; elsewhere it
 * claims the CID (an atomic array, so a CID in flight is refused at once), puts the command on a bounded lock-free
 * MPSC queue and schedules one preallocated drain task when none is pending, which writes everything queued and
 * flushes once. Callbacks run on the event loop.
 */
public final class NvmeTcpHostHandler extends ChannelInboundHandlerAdapter
        implements HostQueue, NvmeTcpPduDecoder.C2hDataCheck, NvmeTcpPduDecoder.C2hDataSink {
    private static final System.Logger LOG = System.getLogger(NvmeTcpHostHandler.class.getName());

    /** Any fabrics command may carry 8 KiB in-capsule on any queue (NVME_TCP_ADMIN_CCSZ, nvmeof-protocol.md §5.10). */
    public static final int FABRICS_IN_CAPSULE_LIMIT = NvmeTcpPduDecoder.ADMIN_IN_CAPSULE_DATA_SIZE;
    /**
     * The decoder's own bound on one C2HData; the real bound is the command's length, checked by {@link #check} as
     * soon as the header is in, before any of the data is passed on.
     */
    private static final int MAX_C2H_DATA = Integer.MAX_VALUE - 1024;

    private final HostQueueOptions options;
    private final String peer;
    private final int qid;
    private final int queueSize;
    private final NvmeTcpPduDecoder decoder;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final CRC32C crc = new CRC32C();
    /** Reads the caller's direct data for the data digest without a per-buffer NIO view. */
    private final Crc32c.View crcView = new Crc32c.View();

    private final byte[] headerScratch = new byte[Crc32c.HEADER_SCRATCH];
    private final Runnable drainTask = this::drain;
    private final Runnable flushTask = this::flushNow;

    // Flyweights (reused; this connection only).
    private final IcReqPdu icReq = new IcReqPdu();
    private final IcRespPdu icResp = new IcRespPdu();
    private final CapsuleCmdPdu capsuleCmd = new CapsuleCmdPdu();
    private final CapsuleRespPdu capsuleResp = new CapsuleRespPdu();
    private final R2tPdu r2t = new R2tPdu();
    private final H2cDataPdu h2cData = new H2cDataPdu();
    private final TermReqPdu termReq = new TermReqPdu();
    private final ByteBuffer cqeBuffer =
            ByteBuffer.allocate(CompletionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();

    // Shared with submitting threads.
    private final AtomicIntegerArray claimed;
    private final Queue<HostCommand> pending;
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final AtomicBoolean listenerCalled = new AtomicBoolean();
    private volatile boolean live;
    private volatile boolean closed;
    private volatile boolean closeDone;
    private volatile Throwable closeCause;
    private volatile Consumer<Throwable> listener;
    private volatile int maxInCapsuleData;
    /** Tests: route every submit through the MPSC queue, as from a foreign thread (EmbeddedChannel runs anywhere). */
    volatile boolean alwaysQueue;

    // Event loop only.
    private ChannelHandlerContext ctx;
    private Channel channel;
    private EventLoop loop;
    private SegmentByteBuf.Pool segments;
    private final TcpHostRequest[] requests;
    private boolean headerDigest;
    private boolean dataDigest;
    private int maxH2cData;
    private boolean icSent;
    private boolean inRead;
    private boolean flushPending;
    private boolean flushScheduled;

    public NvmeTcpHostHandler(HostQueueOptions options) {
        this.options = options;
        this.peer = describe(options.address());
        this.qid = options.qid();
        this.queueSize = options.queueSize();
        this.claimed = new AtomicIntegerArray(queueSize);
        this.pending = PlatformDependent.newFixedMpscQueue(queueSize);
        this.requests = new TcpHostRequest[queueSize];
        this.decoder = new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.HOST, 0, MAX_C2H_DATA)
                .sendTermReqOnFault(false)
                .c2hDataCheck(this)
                .c2hDataSink(this);
        cqe.wrap(cqeBuffer, 0);
    }

    /** Adds the host-side NVMe/TCP handlers (decoder, then this handler) to a new connection's pipeline. */
    public static NvmeTcpHostHandler install(ChannelPipeline pipeline, HostQueueOptions options) {
        NvmeTcpHostHandler handler = new NvmeTcpHostHandler(options);
        pipeline.addLast("nvme-tcp-decoder", handler.decoder);
        pipeline.addLast("nvme-tcp-host", handler);
        return handler;
    }

    /** Completes when ICResp was accepted; fails with an IOException saying why not. */
    public CompletableFuture<Void> ready() {
        return ready;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Netty events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.channel = ctx.channel();
        this.loop = channel.eventLoop();
        this.segments = new SegmentByteBuf.Pool(loop);
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
        inRead = true;
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
        inRead = false;
        if (flushPending) {
            flushPending = false;
            ctx.flush();
        }
        ctx.fireChannelReadComplete();
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
        String problem = null;
        if (ic.pfv() != 0) {
            problem = "answered ICReq with PFV " + ic.pfv() + " (only 0 exists)";
        } else if (got != wanted) {
            problem = digestProblem(wanted, got);
        } else if (ic.cpda() != 0) {
            problem = "asks for PDU data alignment CPDA " + ic.cpda() + " (only 0 is supported, as on Linux)";
        } else if (maxH2c < IcRespPdu.MIN_MAXH2CDATA || maxH2c % 4 != 0) {
            problem = "sent MAXH2CDATA " + maxH2c + " (must be a multiple of 4 and at least 4096)";
        }
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
        live = true;
        ready.complete(null);
    }

    private static String digestProblem(int wanted, int got) {
        StringBuilder b = new StringBuilder();
        int refused = wanted & ~got;
        int unasked = got & ~wanted;
        if (refused != 0) {
            b.append("refused ").append(digestNames(refused));
        }
        if (unasked != 0) {
            b.append(refused != 0 ? " and enabled " : "enabled ")
                    .append(digestNames(unasked))
                    .append(" that were not asked for");
        }
        return b.toString();
    }

    private static String digestNames(int bits) {
        return bits == 3 ? "header and data digests" : bits == IcReqPdu.DGST_HEADER ? "header digests" : "data digests";
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

    /**
     * {@link NvmeTcpPduDecoder.C2hDataCheck}: the C2HData rules of nvmeof-protocol.md §5.10/§7.5, as soon as the header is in and before
     * any of its data reaches {@link #c2hData}; it allocates only to describe a fault.
     */
    @Override
    public String check(int cid, long datao, int datal, int flags) {
        TcpHostRequest r = inFlight(cid);
        if (r == null) {
            return "C2HData for CID " + cid + ", which is not in flight";
        }
        if (r.hostToController || r.length == 0) {
            return "C2HData for CID " + cid + ", which reads no data";
        }
        if (r.lastPdu) {
            return "C2HData for CID " + cid + " after its LAST_PDU";
        }
        if (datao != r.received) {
            return "C2HData DATAO " + datao + " but " + r.received + " bytes received so far (CID " + cid + ")";
        }
        long end = datao + datal;
        if (end > r.length) {
            return "C2HData [" + datao + ", " + end + ") beyond the " + r.length + " bytes of CID " + cid;
        }
        if ((flags & FLAG_SUCCESS) != 0) {
            if ((flags & FLAG_LAST_PDU) == 0) {
                return "C2HData with SUCCESS but without LAST_PDU (CID " + cid + ")";
            }
            if (end != r.length) {
                return "C2HData with SUCCESS after " + end + " of " + r.length + " bytes (CID " + cid + ")";
            }
        }
        return null;
    }

    /**
     * {@link NvmeTcpPduDecoder.C2hDataSink}: C2HData bytes, straight from the socket's read buffer into the caller's
     * buffer (the one copy), as they arrive; {@link #check} accepted the PDU's header (nvmeof-protocol.md §5.10).
     */
    @Override
    public void c2hData(int cid, long offset, ByteBuf src, int index, int length) {
        if (closed) {
            return;
        }
        // check() accepted the header, and nothing but shutdown (closed) completes or reuses a CID while its C2HData
        // streams in.
        copyOut(src, index, requests[cid], (int) offset, length);
    }

    /** {@link NvmeTcpPduDecoder.C2hDataSink}: the end of a C2HData, and completion on SUCCESS (nvmeof-protocol.md §5.10). */
    @Override
    public void c2hDataEnd(int cid, long datao, int datal, int flags, boolean digestOk) {
        if (closed) {
            return;
        }
        inRead = true; // as in channelRead: a command submitted from the callback is flushed at channelReadComplete
        try {
            TcpHostRequest r = requests[cid];
            if (!digestOk) {
                r.digestError = true; // the bytes are not trusted; the command fails with Data Transfer Error
                // (nvmeof-protocol.md §5.8)
            }
            r.received = datao + datal;
            r.lastPdu = (flags & FLAG_LAST_PDU) != 0;
            if ((flags & FLAG_SUCCESS) != 0) {
                // No CapsuleResp follows: status 0, DW0 = DW1 = 0 (nvmeof-protocol.md §5.10), unless the data digest
                // failed.
                cqe.clear();
                cqe.sqid(qid);
                cqe.cid(cid);
                cqe.status(r.digestError ? Status.DATA_TRANSFER_ERROR : 0);
                complete(r);
            }
        } catch (Throwable t) {
            LOG.log(
                    System.Logger.Level.ERROR,
                    "failure ending C2HData for CID " + cid + " on queue " + qid + " to " + peer + "; closing it",
                    t);
            shutdown(t);
        }
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
        sendH2cData(r, t.ttag(), (int) r2to, (int) (r2to + r2tl));
        r.sent = r2to + r2tl;
        scheduleFlush();
    }

    /**
     * H2CData PDUs of at most MAXH2CDATA bytes covering [from, to): header (+HDGST) in a pooled buffer, the data as a
     * view of the caller's buffer, and each DDGST in front of the next header (or alone after the last PDU).
     */
    private void sendH2cData(TcpHostRequest r, int ttag, int from, int to) {
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        boolean trailer = false;
        int digest = 0;
        for (int at = from; at < to; ) {
            int n = Math.min(to - at, maxH2cData);
            boolean last = at + n == to;
            int prefix = trailer ? DIGEST_LENGTH : 0;
            ByteBuf out = ctx.alloc().directBuffer(prefix + H2cDataPdu.HLEN + hd);
            if (trailer) {
                out.setIntLE(0, digest);
            }
            h2cData.wrap(out, prefix).set(headerDigest, dataDigest, last, r.cid, ttag, at, n);
            if (headerDigest) {
                out.setIntLE(
                        prefix + H2cDataPdu.HLEN,
                        Crc32c.computeHeader(crc, headerScratch, out, prefix, H2cDataPdu.HLEN));
            }
            out.writerIndex(prefix + H2cDataPdu.HLEN + hd);
            if (dataDigest) {
                digest = dataCrc(r, at, n);
                trailer = true;
            }
            ctx.write(out, ctx.voidPromise());
            ctx.write(segments.take(r.buffer, r.offset + at, n, DataRelease.NONE), ctx.voidPromise());
            at += n;
        }
        if (trailer) {
            ByteBuf out = ctx.alloc().directBuffer(DIGEST_LENGTH);
            out.writeIntLE(digest);
            ctx.write(out, ctx.voidPromise());
        }
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
    // Submission

    @Override
    public void submit(HostCommand command) {
        if (closed) {
            throw new IllegalStateException("queue " + qid + " to " + peer + " is closed");
        }
        if (!live) {
            throw new IllegalStateException("queue " + qid + " to " + peer + " is not connected yet (no ICResp)");
        }
        SubmissionQueueEntry sqe = command.command();
        int cid = sqe.cid();
        if (cid >= queueSize) {
            throw new IllegalArgumentException("CID " + cid + " is outside 0.." + (queueSize - 1) + " of queue " + qid);
        }
        checkData(command, sqe);
        if (!claimed.compareAndSet(cid, 0, 1)) {
            throw new IllegalStateException("CID " + cid + " is already in flight on queue " + qid);
        }
        if (!alwaysQueue && loop.inEventLoop()) {
            send(command);
            scheduleFlush();
            return;
        }
        // Never fails: each queued command holds a claimed CID, and the queue has one place per CID.
        pending.offer(command);
        if (drainScheduled.compareAndSet(false, true)) {
            loop.execute(drainTask);
        }
    }

    /** Caller errors are refused before the CID is taken (nothing about them is on the wire yet). */
    private static void checkData(HostCommand command, SubmissionQueueEntry sqe) {
        int length = command.dataLength();
        if (length < 0) {
            throw new IllegalArgumentException("negative dataLength " + length + " (CID " + sqe.cid() + ")");
        }
        if (length == 0) {
            return;
        }
        ByteBuffer b = command.dataBuffer();
        if (b == null) {
            throw new IllegalArgumentException("dataLength " + length + " but no dataBuffer (CID " + sqe.cid() + ")");
        }
        int offset = command.dataOffset();
        if (offset < 0 || offset > b.capacity() - length) {
            throw new IllegalArgumentException("data [" + offset + ", " + ((long) offset + length)
                    + ") lies outside a buffer of capacity " + b.capacity() + " (CID " + sqe.cid() + ")");
        }
        DataDirection direction = DataDirection.of(sqe);
        if (direction == DataDirection.NONE) {
            throw new IllegalArgumentException(String.format(
                    "opcode 0x%02x moves no data (bits 1:0 are 00, nvmeof-protocol.md §1.1) but dataLength is %d",
                    sqe.opcode(), length));
        }
        if (direction != DataDirection.HOST_TO_CONTROLLER && direction != DataDirection.CONTROLLER_TO_HOST) {
            throw new IllegalArgumentException(
                    String.format("opcode 0x%02x is bidirectional, which NVMe/TCP cannot carry", sqe.opcode()));
        }
        if (direction == DataDirection.CONTROLLER_TO_HOST && b.isReadOnly()) {
            throw new IllegalArgumentException("a read-only buffer cannot receive data (CID " + sqe.cid() + ")");
        }
    }

    /** The drain task: everything queued by other threads goes out, then one flush. */
    private void drain() {
        drainScheduled.set(false);
        boolean wrote = false;
        for (HostCommand c; (c = pending.poll()) != null; ) {
            if (closed) {
                failQueued(c);
            } else {
                send(c);
                wrote = true;
            }
        }
        if (wrote && !closed) {
            if (inRead) {
                flushPending = true;
            } else {
                ctx.flush();
            }
        }
    }

    /** Writes one CapsuleCmd (nvmeof-protocol.md §5.5) with SGL1 as nvmeof-protocol.md §5.10 wants; the CID was claimed by {@link #submit}. */
    private void send(HostCommand command) {
        SubmissionQueueEntry sqe = command.command();
        int cid = sqe.cid();
        TcpHostRequest r = requests[cid];
        if (r == null) {
            r = requests[cid] = new TcpHostRequest(cid);
        }
        DataDirection direction = DataDirection.of(sqe);
        r.bind(command, direction == DataDirection.HOST_TO_CONTROLLER);
        int length = r.length;
        SglDescriptor sgl = sqe.sgl();
        int inCapsule = 0;
        if (length > 0 && r.hostToController) {
            int limit = sqe.opcode() == FabricsCommandType.OPCODE ? FABRICS_IN_CAPSULE_LIMIT : maxInCapsuleData;
            if (length <= limit) {
                inCapsule = length;
                r.inCapsule = true;
            }
        }
        if (inCapsule > 0) {
            sgl.set(SglDescriptor.ID_IN_CAPSULE, 0, length); // ICDOFF 0 (nvmeof-protocol.md §1.3)
        } else {
            sgl.set(SglDescriptor.ID_TCP_TRANSPORT, 0, length); // data in PDUs, or LENGTH 0: none
        }
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        int dd = inCapsule > 0 && dataDigest ? DIGEST_LENGTH : 0;
        int total = CapsuleCmdPdu.HLEN + hd + inCapsule + dd;
        ByteBuf out = ctx.alloc().directBuffer(total);
        try {
            capsuleCmd.wrap(out, 0).set(headerDigest, dataDigest, inCapsule);
            copySqe(sqe, out, capsuleCmd.sqeIndex());
            if (headerDigest) {
                out.setIntLE(CapsuleCmdPdu.HLEN, Crc32c.computeHeader(crc, headerScratch, out, 0, CapsuleCmdPdu.HLEN));
            }
            if (inCapsule > 0) {
                copyIn(r, out, CapsuleCmdPdu.HLEN + hd, inCapsule);
                if (dataDigest) {
                    out.setIntLE(CapsuleCmdPdu.HLEN + hd + inCapsule, dataCrc(r, 0, inCapsule));
                }
            }
            out.writerIndex(total);
        } catch (RuntimeException e) {
            out.release();
            r.reset();
            claimed.set(cid, 0);
            throw e;
        }
        ctx.write(out, ctx.voidPromise());
    }

    /** The 64-byte SQE as eight little-endian longs: no view, no copy array, heap or direct. */
    private static void copySqe(SubmissionQueueEntry sqe, ByteBuf out, int index) {
        ByteBuffer b = sqe.buffer();
        int from = sqe.offset();
        for (int i = 0; i < SubmissionQueueEntry.LENGTH; i += 8) {
            out.setLongLE(index + i, b.getLong(from + i));
        }
    }

    /** Caller data [r.offset, + len) → out at {@code index} (in-capsule data). */
    private static void copyIn(TcpHostRequest r, ByteBuf out, int index, int len) {
        ByteBuffer src = r.buffer;
        if (src.hasArray()) {
            out.setBytes(index, src.array(), src.arrayOffset() + r.offset, len);
        } else if (r.address != 0L && out.hasMemoryAddress()) {
            PlatformDependent.copyMemory(r.address + r.offset, out.memoryAddress() + index, len);
        } else {
            out.setBytes(index, r.view(r.offset, len));
        }
    }

    /** Received data in {@code src[index, + len)} → the caller's buffer at data offset {@code at}. */
    private static void copyOut(ByteBuf src, int index, TcpHostRequest r, int at, int len) {
        ByteBuffer dst = r.buffer;
        int to = r.offset + at;
        if (dst.hasArray()) {
            src.getBytes(index, dst.array(), dst.arrayOffset() + to, len);
        } else if (r.address != 0L && src.hasMemoryAddress()) {
            PlatformDependent.copyMemory(src.memoryAddress() + index, r.address + to, len);
        } else {
            src.getBytes(index, r.view(to, len));
        }
    }

    /** CRC32C of the caller's data [at, at + len) of the command (nvmeof-protocol.md §5.8). */
    private int dataCrc(TcpHostRequest r, int at, int len) {
        crc.reset();
        ByteBuffer b = r.buffer;
        if (b.hasArray()) {
            crc.update(b.array(), b.arrayOffset() + r.offset + at, len);
        } else {
            ByteBuffer v = r.address != 0L ? crcView.at(r.address + r.offset + at, len) : null;
            crc.update(v != null ? v : r.view(r.offset + at, len));
        }
        return (int) crc.getValue();
    }

    private TcpHostRequest inFlight(int cid) {
        if (cid >= queueSize) {
            return null;
        }
        TcpHostRequest r = requests[cid];
        return r != null && r.state == TcpHostRequest.State.SENT ? r : null;
    }

    /** Frees the CID, then calls back with {@link #cqe} (the callback may submit the same CID again). */
    private void complete(TcpHostRequest r) {
        HostCommand c = r.reset();
        claimed.set(r.cid, 0);
        try {
            c.onResponse(cqe);
        } catch (Throwable t) {
            LOG.log(
                    System.Logger.Level.ERROR,
                    "HostCommand.onResponse failed for CID " + r.cid + " on queue " + qid,
                    t);
        }
    }

    private void scheduleFlush() {
        if (inRead) {
            flushPending = true;
        } else if (!flushScheduled) {
            flushScheduled = true;
            loop.execute(flushTask);
        }
    }

    private void flushNow() {
        flushScheduled = false;
        if (!closed) {
            ctx.flush();
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
     * Closes the connection (no H2CTermReq, nvmeof-protocol.md §7.8), then fails every command in flight or queued exactly once, then
     * tells the listener. {@code cause} null = an orderly {@link #close()}. On the event loop only; idempotent.
     */
    private void shutdown(Throwable cause) {
        if (closed) {
            return;
        }
        closed = true;
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
        Throwable failure = cause != null ? cause : new IOException("queue " + qid + " to " + peer + " closed");
        for (TcpHostRequest r : requests) {
            if (r != null && r.state == TcpHostRequest.State.SENT) {
                HostCommand c = r.reset();
                claimed.set(r.cid, 0);
                fail(c, failure);
            }
        }
        for (HostCommand c; (c = pending.poll()) != null; ) {
            claimed.set(c.command().cid(), 0);
            fail(c, failure);
        }
        closeCause = cause;
        closeDone = true;
        notifyListener(listener);
    }

    /** A command that raced with the close and was queued after it. */
    private void failQueued(HostCommand c) {
        claimed.set(c.command().cid(), 0);
        fail(c, new IOException("queue " + qid + " to " + peer + " closed"));
    }

    private void fail(HostCommand c, Throwable cause) {
        try {
            c.onTransportError(cause);
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "HostCommand.onTransportError failed on queue " + qid, t);
        }
    }

    private void notifyListener(Consumer<Throwable> l) {
        if (l != null && closeDone && listenerCalled.compareAndSet(false, true)) {
            try {
                l.accept(closeCause);
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "onClose listener failed on queue " + qid, t);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // HostQueue

    @Override
    public int qid() {
        return qid;
    }

    @Override
    public void maxInCapsuleData(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("maxInCapsuleData must be ≥ 0: " + bytes);
        }
        this.maxInCapsuleData = bytes;
    }

    @Override
    public void onClose(Consumer<Throwable> listener) {
        this.listener = listener;
        if (closeDone && listener != null) {
            // Closed already: tell it now, on the queue's thread as always.
            execute(() -> notifyListener(listener));
        }
    }

    @Override
    public void execute(Runnable task) {
        loop.execute(task);
    }

    @Override
    public boolean inQueueThread() {
        return loop.inEventLoop();
    }

    @Override
    public boolean isOpen() {
        return !closed;
    }

    /**
     * Closes the queue: commands in flight get {@link HostCommand#onTransportError} ("queue closed"), the listener
     * gets null. From another thread this waits (up to 10 s) until that is done.
     */
    @Override
    public void close() {
        if (loop == null) {
            return;
        }
        if (loop.inEventLoop()) {
            shutdown(null);
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        loop.execute(() -> {
            shutdown(null);
            done.countDown();
        });
        try {
            done.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether header / data digests were negotiated (nvmeof-protocol.md §5.4); meaningful once {@link #ready()} completed. */
    public boolean headerDigest() {
        return headerDigest;
    }

    public boolean dataDigest() {
        return dataDigest;
    }

    /** MAXH2CDATA from the ICResp. */
    public int maxH2cData() {
        return maxH2cData;
    }

    /** "127.0.0.1:4420" or "[::1]:4420", for messages. */
    static String describe(InetSocketAddress a) {
        String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    @Override
    public String toString() {
        return "NvmeTcpHostHandler[" + peer + " qid=" + qid + "]";
    }
}

package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The controller side of one NVMe/RDMA queue (one RC QP, nvmeof-protocol.md §6), and the {@link QueueChannel} the
 * target core sees for it. Its {@link RdmaPollGroup}'s thread owns it: it polls the group's shared CQ, hands this
 * queue its completions ({@link #onCompletion}), runs the core, and posts every work request.
 *
 * <ul>
 *   <li>Set up before the CM accept ({@link #setup}): a registered region of 16-byte responses and one
 *       {@link RdmaTargetRequest} per command the host may have outstanding (HSQSIZE+1, nvmeof-protocol.md §6.2;
 *       {@link RequestSlots}). The
 *       receive buffers are the group's SRQ buffers; without an SRQ, HSQSIZE+1 buffers of its own, all posted.</li>
 *   <li>A command lands in a receive buffer; the oldest free request slot takes it ({@link RdmaTargetRequest#bind}):
 *       a FIFO of slots in the order their responses were sent, so the slot taken is one whose response the host has
 *       seen (it sent a new command, so at most HSQSIZE are outstanding), its RDMA Writes done.</li>
 *   <li>A Send from the host → its slot → SGL checked (nvmeof-protocol.md §1.3, §6.4) → {@link QueueHandler#onCommand}. Commands may arrive
 *       before the CM's ESTABLISHED (nvmeof-protocol.md §6.2): the QP is ready to receive from the accept on.</li>
 *   <li>Host→controller data: RDMA Reads (at most the negotiated initiator depth outstanding on the QP), straight into
 *       the core's destinations when it placed the data ({@code addDestination}: namespace memory, zero copy) or into a
 *       registered bounce buffer; then the receiver runs (nvmeof-protocol.md §6.3).</li>
 *   <li>Controller→host data: RDMA Writes from the segments' registered memory (namespace chunks, zero copy) or from a
 *       bounce copy for unregistered memory, then the response Send chained right behind without waiting (nvmeof-protocol.md §6.3); the
 *       receive buffer is re-posted first (nvmeof-protocol.md §6.2). Send with Invalidate(KEY) for 0x4F descriptors (nvmeof-protocol.md §6.4).
 *       The posting is {@link RdmaResponses}'.</li>
 *   <li>A completion error or a protocol fault (capsule shorter than 64 bytes, …) closes this queue only:
 *       {@link QueueHandler#onClose} once, the QP closed, then every segment released exactly once.</li>
 * </ul>
 */
final class RdmaTargetQueue implements QueueChannel {
    private static final Logger LOG = System.getLogger(RdmaTargetQueue.class.getName());

    static final long KIND_RECV = 0L;
    static final long KIND_SEND = 1L << 62;
    static final long KIND_WRITE = 2L << 62;
    static final long KIND_READ = 3L << 62;
    static final long KIND_MASK = 3L << 62;
    /** wr_id bits 32..47: the queue's tag in its poll group (0: a receive in the group's SRQ, found by QP number). */
    static final int TAG_SHIFT = 32;
    /** Controller→host segments written one by one; more are coalesced into one bounce buffer. */
    static final int MAX_WRITE_SEGMENTS = 16;

    private final RdmaTargetListener listener;
    private final RdmaPollGroup group;
    private final int qid;
    private final int slots;
    private final int recvSize;
    private final int inCapsuleSize;
    /** CQ entries reserved on the group: receives, response Sends, RDMA Reads. */
    private final int cqEntries;

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Runnable drainTasks = this::runTasks;
    private final Runnable checkClose = this::checkClose;
    private final Runnable attach = this::attach;

    private RdmaConnection conn;
    private QueuePair qp;
    private ProtectionDomain pd;
    private int qpNumber;
    /** This queue's tag in its group, in every wr_id it posts ({@link #TAG_SHIFT}); set by the group. */
    private long tagBits;

    private int tag;
    /** The group's SRQ buffers, or this queue's own (provider without SRQ). */
    private ReceiveBuffers buffers;

    private boolean ownBuffers;
    private MemoryRegion rspMr;
    private RegisteredBufferPool pool;
    private RequestSlots requests;
    private QueueHandler core;
    private boolean attached;

    private RdmaReads reads;
    private RdmaResponses responses;

    private volatile boolean closeRequested;
    private volatile boolean disconnected;
    private volatile boolean closed;
    private boolean onCloseCalled;
    private Throwable closeCause;

    RdmaTargetQueue(RdmaTargetListener listener, RdmaPollGroup group, int qid, int hsqsize, int cqEntries) {
        this.listener = listener;
        this.group = group;
        this.qid = qid;
        this.cqEntries = cqEntries;
        this.slots = hsqsize + 1;
        this.inCapsuleSize = qid == 0 ? 0 : listener.portInfo().inCapsuleDataSize();
        this.recvSize = SubmissionQueueEntry.LENGTH + inCapsuleSize;
    }

    /**
     * Called with the new QP before the accept goes out (CM thread): the response region and request slots; without an
     * SRQ, the queue's own receive buffers, all posted (nvmeof-protocol.md §6.2); then the group learns the QP number,
     * so a command that arrives before ESTABLISHED finds its queue.
     */
    void setup(RdmaConnection c) {
        this.conn = c;
        this.qp = c.queuePair();
        this.pd = c.protectionDomain();
        this.qpNumber = qp.qpNumber();
        listener.memory().usePd(pd);
        try {
            ByteBuffer rsp = pd.allocate(slots * CompletionQueueEntry.LENGTH);
            rspMr = pd.register(rsp, ProtectionDomain.ACCESS_LOCAL_WRITE);
            ByteBuffer rspView = rspMr.buffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
            requests = new RequestSlots(this, slots, rspView);
            tag = group.register(qpNumber, this);
            tagBits = (long) tag << TAG_SHIFT;
            buffers = group.srqBuffers();
            if (buffers == null) {
                buffers = ReceiveBuffers.create(pd, slots, recvSize, null, qp, tagBits);
                ownBuffers = true;
            }
        } catch (IOException | RuntimeException e) {
            group.unregister(qpNumber, tag);
            tag = 0;
            freeRegions();
            throw e instanceof IOException io ? new java.io.UncheckedIOException(io) : (RuntimeException) e;
        }
    }

    /** After the accept (CM thread): the group's thread hands the queue to the core, then serves it. */
    void start() {
        reads = new RdmaReads(this, slots, Math.max(1, conn.initiatorDepth()));
        responses = new RdmaResponses(this, rspMr, requests);
        conn.onDisconnect(() -> {
            disconnected = true;
            group.execute(checkClose);
        });
        group.execute(attach);
    }

    /** Undoes {@link #setup} when the accept failed (CM thread; the group never saw a completion of ours). */
    void abandon() {
        group.unregister(qpNumber, tag);
        group.release(cqEntries);
        if (ownBuffers && buffers != null) {
            buffers.close();
        }
        freeRegions();
    }

    boolean zeroCopy() {
        return listener.zeroCopy();
    }

    MemoryRegion regionFor(Object release) {
        return listener.memory().region(release, pd);
    }

    // ---------------------------------------------------------------------------------------------------------
    // On the group's thread

    private void attach() {
        if (attached) {
            return;
        }
        attached = true;
        pool = group.pool();
        if (group.stopping() || closeRequested || disconnected || closeCause != null) {
            if (closeCause == null && !closeRequested) {
                closeCause = new IOException("RDMA queue " + qid + " closed before it started");
            }
            closeQueue();
            return;
        }
        try {
            core = listener.acceptor().accept(this);
            if (core == null) {
                throw new IllegalStateException("the QueueAcceptor returned no QueueHandler");
            }
        } catch (Throwable t) {
            LOG.log(
                    Level.ERROR,
                    "QueueAcceptor failed for RDMA queue from " + conn.remoteAddress() + "; closing it",
                    t);
            closeCause = t;
            closeQueue();
            return;
        }
        for (int i = 0; i < requests.earlyCount() && closeCause == null && !closed; i++) {
            onRecv(requests.earlyBuffer(i), requests.earlyLength(i));
        }
        requests.clearEarly();
        checkClose();
    }

    /** Closes the queue if a close was asked for, the host disconnected, or a fault happened. */
    private void checkClose() {
        if (closed || !attached) {
            return;
        }
        if (closeRequested || disconnected || closeCause != null) {
            if (disconnected && closeCause == null && !closeRequested) {
                closeCause = new IOException("host " + conn.remoteAddress() + " disconnected RDMA queue " + qid);
            }
            closeQueue();
        }
    }

    /** Closes at once (the group is stopping). */
    void closeNow() {
        closeRequested = true;
        if (!attached) {
            attach(); // closes, since closeRequested is set
        } else {
            checkClose();
        }
    }

    private void runTasks() {
        Runnable r;
        while (!closed && closeCause == null && (r = tasks.poll()) != null) {
            try {
                r.run();
            } catch (Throwable t) {
                LOG.log(Level.ERROR, "task on RDMA queue " + qid + " failed", t);
            }
        }
    }

    /** One work completion of this queue's QP, from the group's shared CQ. */
    void onCompletion(WorkCompletion wc) {
        long id = wc.wrId;
        long kind = id & KIND_MASK;
        int slot = (int) (id & 0xFFFF);
        if (kind == KIND_RECV) {
            buffers.taken();
        }
        if (closed || closeCause != null) {
            if (kind == KIND_RECV && !ownBuffers && wc.ok()) {
                buffers.post(slot); // a command for a closing queue: the buffer goes back to the SRQ
            }
            return;
        }
        if (!wc.ok()) {
            if (kind == KIND_RECV && !ownBuffers) {
                buffers.post(slot);
            }
            if (wc.status == WorkCompletion.Status.WR_FLUSH_ERR) {
                // Flushed: the QP is in ERROR. With no error completion of ours before it, the host disconnected and
                // the flush overtook the CM's disconnect event (both providers may order them so): not a fault.
                disconnected = true;
                checkClose();
                return;
            }
            fault(new IOException("RDMA queue " + qid + " from " + conn.remoteAddress() + ": work completion error "
                    + wc.status + " on " + kindName(kind) + " (slot " + slot + ")"));
            return;
        }
        if (kind == KIND_RECV) {
            if (!attached) {
                requests.holdEarly(slot, wc.byteLength);
            } else {
                onRecv(slot, wc.byteLength);
            }
        } else if (kind == KIND_SEND) {
            RdmaTargetRequest r = requests.get(slot);
            if (r.sendPending && r.sendSeq == (int) ((id >>> 16) & 0xFFFF)) {
                finishSend(r);
            }
        } else if (kind == KIND_READ) {
            reads.done(requests.get(slot));
        }
        // RDMA Writes are unsignaled: the response Send's completion covers them.
        if (closeCause != null) {
            closeQueue();
        }
    }

    private static String kindName(long kind) {
        return kind == KIND_RECV
                ? "a receive"
                : kind == KIND_SEND ? "a response Send" : kind == KIND_WRITE ? "an RDMA Write" : "an RDMA Read";
    }

    // ---------------------------------------------------------------------------------------------------------
    // Commands

    /** A command in receive buffer {@code buffer}: the oldest free slot takes it, then the core. */
    private void onRecv(int buffer, int length) {
        RdmaTargetRequest r = requests.takeOldestFree();
        if (r == null) {
            if (!ownBuffers) {
                buffers.post(buffer);
            }
            fault(new IOException(
                    "RDMA queue " + qid + ": more commands than its " + slots + " entries (HSQSIZE+1) outstanding"));
            return;
        }
        if (r.sendPending) {
            finishSend(r); // the host saw that response (see the class comment), so its Writes and Send are done
        }
        r.bind(buffers, buffer);
        if (length < SubmissionQueueEntry.LENGTH) {
            fault(new NvmeRdmaProtocolException("RDMA queue " + qid + " from " + conn.remoteAddress()
                    + ": a command capsule of " + length + " bytes (at least 64)"));
            return;
        }
        r.reset();
        r.begin(group.arrivalNanos());
        CapsuleSgl.classify(r, length - SubmissionQueueEntry.LENGTH, inCapsuleSize, pool);
        core.onCommand(r);
    }

    /** Gives the request's receive buffer back to the RNIC (exactly once: the request forgets it). */
    boolean repost(RdmaTargetRequest r) {
        int b = r.unbind();
        return b < 0 || buffers.post(b);
    }

    /** TargetRequest.receiveData: in the capsule or none at once, keyed by RDMA Reads ({@link RdmaReads}). */
    void receiveData(RdmaTargetRequest r, DataReceiver receiver) {
        if (!closed) {
            reads.receive(r, receiver);
        }
    }

    /** TargetRequest.complete: RDMA Writes (if any), re-post the receive, then the response Send ({@link RdmaResponses}). */
    void complete(RdmaTargetRequest r) {
        responses.complete(r);
    }

    private void finishSend(RdmaTargetRequest r) {
        r.sendPending = false;
        r.releaseSegments(pool);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Faults and closing

    // ---- for RdmaReads and RdmaResponses ----

    QueuePair qp() {
        return qp;
    }

    RegisteredBufferPool pool() {
        return pool;
    }

    long tagBits() {
        return tagBits;
    }

    RdmaTargetRequest request(int slot) {
        return requests.get(slot);
    }

    RdmaTargetListener listener() {
        return listener;
    }

    /** The queue has closed: a late {@code complete()} only recycles. */
    boolean closed() {
        return closed;
    }

    /** A fault is pending: post nothing more. */
    boolean failing() {
        return closeCause != null;
    }

    /** Closes this queue only, soon (on the group's thread, outside the core's call that may be running now). */
    void fault(Throwable cause) {
        if (closeCause == null) {
            closeCause = cause;
            LOG.log(Level.WARNING, cause.getMessage() + "; closing the queue");
            group.execute(checkClose);
        }
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
                LOG.log(Level.ERROR, "QueueHandler.onClose failed on RDMA queue " + qid, t);
            }
        }
        // The QP goes first, so no RDMA operation can touch memory after it is released.
        try {
            conn.close();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "closing the connection failed: " + e);
        }
        group.unregister(qpNumber, tag); // completions still in the CQ for this QP: SRQ buffers are re-posted
        for (int i = 0; i < requests.size(); i++) {
            RdmaTargetRequest r = requests.get(i);
            r.releaseSegments(pool);
            r.releaseData(pool);
            r.sendPending = false;
            r.state(RdmaTargetRequest.State.DEAD);
            int b = r.unbind();
            if (b >= 0 && !ownBuffers) {
                buffers.post(b); // the core held this command: its SRQ buffer goes back now (onClose told it)
            }
        }
        tasks.clear();
        if (ownBuffers) {
            buffers.close();
        }
        freeRegions();
        group.release(cqEntries);
        listener.queueClosed(this);
    }

    private void freeRegions() {
        if (rspMr != null) {
            rspMr.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // QueueChannel

    @Override
    public PortInfo portInfo() {
        return listener.portInfo();
    }

    @Override
    public SocketAddress remoteAddress() {
        return conn.remoteAddress();
    }

    @Override
    public SocketAddress localAddress() {
        return conn.localAddress();
    }

    @Override
    public void connected(int qid, int sqsize, boolean sqFlowControlDisabled) {
        if (qid != this.qid || sqsize + 1 > slots) {
            LOG.log(
                    Level.WARNING,
                    "Connect on RDMA queue " + this.qid + " (HSQSIZE " + (slots - 1) + ") names QID " + qid + " SQSIZE "
                            + sqsize + ": the host may overrun the receive buffers");
        }
    }

    @Override
    public void execute(Runnable task) {
        if (closed) {
            return;
        }
        tasks.add(task);
        group.execute(drainTasks);
    }

    @Override
    public boolean inQueueThread() {
        return Thread.currentThread() == group.thread();
    }

    @Override
    public void close() {
        closeRequested = true;
        group.execute(checkClose);
    }

    @Override
    public boolean isOpen() {
        return !closed && !closeRequested && !disconnected;
    }

    int qid() {
        return qid;
    }

    int slots() {
        return slots;
    }

    int recvSize() {
        return recvSize;
    }

    RdmaPollGroup group() {
        return group;
    }

    @Override
    public String toString() {
        return "RdmaTargetQueue[qid=" + qid + " " + (conn != null ? conn.remoteAddress() : "") + "]";
    }
}

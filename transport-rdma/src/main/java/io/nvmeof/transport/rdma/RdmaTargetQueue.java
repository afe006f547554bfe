package io.nvmeof.transport.rdma;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.rdma.verbs.CompletionQueue;
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
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The controller side of one NVMe/RDMA queue (one RC QP, nvmeof-protocol.md §6), and the {@link QueueChannel} the
 * target core sees for it. One thread owns it: it polls the CQ, runs the core, and posts every work request.
 *
 * <ul>
 *   <li>Set up before the CM accept ({@link #setup}): HSQSIZE+1 receive buffers of 64 B (admin) or 64 B + in-capsule
 *       size (I/O) in one registered region, all posted; a registered region of 16-byte responses; one
 *       {@link RdmaTargetRequest} per receive buffer (nvmeof-protocol.md §6.2).</li>
 *   <li>A Send from the host → its slot → SGL checked (nvmeof-protocol.md §1.3, §6.4) → {@link QueueHandler#onCommand}. Commands may arrive
 *       before the CM's ESTABLISHED (nvmeof-protocol.md §6.2): the QP is ready to receive from the accept on.</li>
 *   <li>Host→controller data: RDMA Reads (at most the negotiated initiator depth outstanding on the QP), straight into
 *       the core's destinations when it placed the data ({@code addDestination}: namespace memory, zero copy) or into a
 *       registered bounce buffer; then the receiver runs (nvmeof-protocol.md §6.3).</li>
 *   <li>Controller→host data: RDMA Writes from the segments' registered memory (namespace chunks, zero copy) or from a
 *       bounce copy for unregistered memory, then the response Send chained right behind without waiting (nvmeof-protocol.md §6.3); the
 *       receive buffer is re-posted first (nvmeof-protocol.md §6.2). Send with Invalidate(KEY) for 0x4F descriptors (nvmeof-protocol.md §6.4).</li>
 *   <li>A completion error or a protocol fault (capsule shorter than 64 bytes, …) closes this queue only:
 *       {@link QueueHandler#onClose} once, the QP closed, then every segment released exactly once.</li>
 * </ul>
 */
final class RdmaTargetQueue implements QueueChannel, Runnable {
    private static final Logger LOG = System.getLogger(RdmaTargetQueue.class.getName());

    static final long KIND_RECV = 0L;
    static final long KIND_SEND = 1L << 62;
    static final long KIND_WRITE = 2L << 62;
    static final long KIND_READ = 3L << 62;
    /** Controller→host segments written one by one; more are coalesced into one bounce buffer. */
    static final int MAX_WRITE_SEGMENTS = 16;

    private static final Duration AWAIT = Duration.ofMillis(10);

    private final RdmaTargetListener listener;
    private final int qid;
    private final int slots;
    private final int recvSize;
    private final int inCapsuleSize;
    private final boolean busyPoll;
    private final WorkCompletion[] wcs = new WorkCompletion[32];
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final QueueThreadWaker waker = new QueueThreadWaker();
    private final java.util.function.BooleanSupplier hasWork = this::hasWork;

    private RdmaConnection conn;
    private QueuePair qp;
    private CompletionQueue cq;
    private ProtectionDomain pd;
    private MemoryRegion recvMr;
    private MemoryRegion rspMr;
    private RegisteredBufferPool pool;
    private RdmaTargetRequest[] requests;
    private Thread thread;
    private QueueHandler core;

    private int readDepth;
    private int readsInFlight;
    private int[] readWait;
    private int readHead;
    private int readCount;

    private volatile boolean closeRequested;
    private volatile boolean disconnected;
    private volatile boolean closed;
    private boolean onCloseCalled;
    private Throwable closeCause;

    RdmaTargetQueue(RdmaTargetListener listener, int qid, int hsqsize) {
        this.listener = listener;
        this.qid = qid;
        this.slots = hsqsize + 1;
        this.inCapsuleSize = qid == 0 ? 0 : listener.portInfo().inCapsuleDataSize();
        this.recvSize = SubmissionQueueEntry.LENGTH + inCapsuleSize;
        this.busyPoll = listener.options().ioMode().busyPoll();
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    /** Called with the new QP before the accept goes out: registers and posts every receive buffer (nvmeof-protocol.md §6.2). */
    void setup(RdmaConnection c) {
        this.conn = c;
        this.qp = c.queuePair();
        this.cq = c.completionQueue();
        this.pd = c.protectionDomain();
        listener.memory().usePd(pd);
        try {
            ByteBuffer recv = pd.allocate(slots * recvSize);
            recvMr = pd.register(recv, ProtectionDomain.ACCESS_LOCAL_WRITE);
            ByteBuffer rsp = pd.allocate(slots * CompletionQueueEntry.LENGTH);
            rspMr = pd.register(rsp, ProtectionDomain.ACCESS_LOCAL_WRITE);
            pool = new RegisteredBufferPool(pd, ProtectionDomain.ACCESS_LOCAL_WRITE);
            ByteBuffer recvView = recvMr.buffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
            ByteBuffer rspView = rspMr.buffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
            requests = new RdmaTargetRequest[slots];
            readWait = new int[slots];
            for (int i = 0; i < slots; i++) {
                requests[i] = new RdmaTargetRequest(i, this, recvView, recvSize, rspView);
                if (!qp.postRecv(KIND_RECV | i, recvMr, i * recvSize, recvSize)) {
                    throw new IOException("cannot post receive buffer " + i + " of " + slots);
                }
            }
        } catch (IOException e) {
            freeRegions();
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** After the accept: the queue's thread starts, hands the queue to the core, then polls. */
    void start(String name) {
        readDepth = Math.max(1, conn.initiatorDepth());
        conn.onDisconnect(() -> {
            disconnected = true;
            waker.wake();
        });
        thread = new Thread(this, name);
        thread.setDaemon(true);
        waker.owner(thread);
        thread.start();
    }

    Thread thread() {
        return thread;
    }

    boolean zeroCopy() {
        return listener.zeroCopy();
    }

    MemoryRegion regionFor(Object release) {
        return listener.memory().region(release, pd);
    }

    // ---------------------------------------------------------------------------------------------------------
    // The loop

    @Override
    public void run() {
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
        try {
            while (!closeRequested && !disconnected && closeCause == null) {
                int n = cq.poll(wcs);
                for (int i = 0; i < n && closeCause == null; i++) {
                    handle(wcs[i]);
                }
                int t = runTasks();
                waker.afterTurn(n + t, busyPoll, cq, AWAIT, hasWork);
            }
            if (disconnected && closeCause == null && !closeRequested) {
                closeCause = new IOException("host " + conn.remoteAddress() + " disconnected RDMA queue " + qid);
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "RDMA queue " + qid + " from " + conn.remoteAddress() + " failed; closing it", t);
            if (closeCause == null) {
                closeCause = t;
            }
        }
        closeQueue();
    }

    private boolean hasWork() {
        return !tasks.isEmpty() || closeRequested || disconnected;
    }

    private int runTasks() {
        int n = 0;
        Runnable r;
        while (closeCause == null && (r = tasks.poll()) != null) {
            n++;
            try {
                r.run();
            } catch (Throwable t) {
                LOG.log(Level.ERROR, "task on RDMA queue " + qid + " failed", t);
            }
        }
        return n;
    }

    private void handle(WorkCompletion wc) {
        long id = wc.wrId;
        long kind = id & (3L << 62);
        int slot = (int) (id & 0xFFFF);
        if (!wc.ok()) {
            if (wc.status == WorkCompletion.Status.WR_FLUSH_ERR) {
                // Flushed: the QP is in ERROR. With no error completion of ours before it, the host disconnected and
                // the flush overtook the CM's disconnect event (both providers may order them so): not a fault.
                disconnected = true;
                return;
            }
            fault(new IOException("RDMA queue " + qid + " from " + conn.remoteAddress() + ": work completion error "
                    + wc.status + " on " + kindName(kind) + " (slot " + slot + ")"));
            return;
        }
        if (kind == KIND_RECV) {
            onRecv(requests[slot], wc.byteLength);
        } else if (kind == KIND_SEND) {
            RdmaTargetRequest r = requests[slot];
            if (r.sendPending && r.sendSeq == (int) ((id >>> 16) & 0xFFFF)) {
                finishSend(r);
            }
        } else if (kind == KIND_READ) {
            onReadDone(requests[slot]);
        }
        // RDMA Writes are unsignaled: the response Send's completion covers them.
    }

    private static String kindName(long kind) {
        return kind == KIND_RECV
                ? "a receive"
                : kind == KIND_SEND ? "a response Send" : kind == KIND_WRITE ? "an RDMA Write" : "an RDMA Read";
    }

    // ---------------------------------------------------------------------------------------------------------
    // Commands

    private void onRecv(RdmaTargetRequest r, int length) {
        if (r.sendPending) {
            finishSend(r); // the host saw that response, so the Writes and Send before it are done
        }
        if (r.state() != RdmaTargetRequest.State.FREE) {
            fault(new IOException("RDMA queue " + qid + ": a command arrived in receive buffer " + r.index
                    + " that is still in use"));
            return;
        }
        if (length < SubmissionQueueEntry.LENGTH) {
            fault(new NvmeRdmaProtocolException("RDMA queue " + qid + " from " + conn.remoteAddress()
                    + ": a command capsule of " + length + " bytes (at least 64)"));
            return;
        }
        r.reset();
        r.begin();
        classify(r, length - SubmissionQueueEntry.LENGTH);
        core.onCommand(r);
    }

    /**
     * Sets dataLength, keyed/in-capsule and transportStatus from the SGL (nvmeof-protocol.md §1.3 acceptance table for RDMA, nvmeof-protocol.md §6.4): LENGTH 0 of any type → no data; 0x40/0x4F
     * keyed (a wrong keyed subtype → Invalid Field), 0x01 in-capsule (host→controller only, else Invalid Field; beyond the
     * queue's in-capsule size, which is 0 on the admin queue → SGL Offset Invalid; beyond the bytes received → Data SGL
     * Length Invalid), any other type → SGL Descriptor Type Invalid; all with DNR.
     */
    private void classify(RdmaTargetRequest r, int inCapsuleBytes) {
        SubmissionQueueEntry sqe = r.command();
        SglDescriptor sgl = sqe.sgl();
        int type = sgl.type();
        int subtype = sgl.subtype();
        if ((type == SglDescriptor.TYPE_KEYED_DATA_BLOCK ? sgl.keyedLength() : sgl.dataLength()) == 0) {
            // No data: a descriptor of LENGTH 0 says nothing, whatever its type or subtype. Hosts send an all-zero
            // SGL1 with Keep Alive, Flush and Property Get/Set; the command's own length check decides, as on TCP
            // (nvmet_tcp_map_data ignores such a descriptor; nvmeof-protocol.md §1.3).
            // A keyed 0x4F of LENGTH 0 is not invalidated either: nvmet-rdma returns before it takes the key.
            r.dataLength(0);
            return;
        }
        if (type == SglDescriptor.TYPE_KEYED_DATA_BLOCK) {
            int length = sgl.keyedLength();
            r.dataLength(length);
            if (subtype != SglDescriptor.SUBTYPE_ADDRESS && subtype != SglDescriptor.SUBTYPE_INVALIDATE) {
                r.transportStatus(Status.dnr(Status.INVALID_FIELD));
                return;
            }
            r.keyed = length > 0;
            r.remoteAddress = sgl.address();
            r.rkey = sgl.key();
            r.invalidate = subtype == SglDescriptor.SUBTYPE_INVALIDATE;
            if (length > RdmaTransport.MAX_TRANSFER) {
                r.transportStatus(Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
            }
        } else if (type == SglDescriptor.TYPE_DATA_BLOCK) {
            if (subtype != SglDescriptor.SUBTYPE_OFFSET) {
                r.transportStatus(Status.dnr(Status.INVALID_FIELD));
                return;
            }
            long length = sgl.dataLength();
            long offset = sgl.address();
            r.dataLength((int) Math.min(length, Integer.MAX_VALUE));
            if (length == 0) {
                return;
            }
            r.inCapsuleData(true);
            if (!r.hostToController()) {
                r.transportStatus(Status.dnr(Status.INVALID_FIELD)); // nvmet: in-capsule data on a read
            } else if (offset < 0 || offset + length > inCapsuleSize) {
                r.transportStatus(
                        Status.dnr(Status.SGL_OFFSET_INVALID)); // 0 on the admin queue (nvmeof-protocol.md §6.4)
            } else if (offset + length > inCapsuleBytes) {
                r.transportStatus(Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
            } else if (offset == 0) {
                r.dataView = r.inCapsuleView; // in place in the receive buffer, until complete()
            } else {
                r.dataBuffer = pool.take((int) length);
                r.dataBuffer.view.put(0, r.inCapsuleView, (int) offset, (int) length);
                r.dataView = r.dataBuffer.view;
            }
        } else {
            r.transportStatus(Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID));
        }
    }

    /** TargetRequest.receiveData. */
    void receiveData(RdmaTargetRequest r, DataReceiver receiver) {
        if (closed) {
            return;
        }
        if (r.transportStatus() != 0) {
            receiver.onData(r, r.transportStatus());
            return;
        }
        if (!r.keyed || r.inCapsuleData() || !r.hostToController()) {
            receiver.onData(r, 0);
            return;
        }
        if (r.destinations) {
            if (r.segBytes != r.dataLength()) {
                throw new IllegalStateException(
                        "destinations cover " + r.segBytes + " of " + r.dataLength() + " bytes (CID " + r.cid() + ")");
            }
            for (int i = 0; i < r.segCount; i++) {
                if (r.segRegion[i] == null) {
                    r.segBounce[i] = pool.take(r.segLength[i]); // unregistered destination: read, then copy
                }
            }
        } else {
            try {
                r.dataBuffer = pool.take(r.dataLength());
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "no buffer for " + r.dataLength() + " bytes of write data: " + e);
                receiver.onData(r, Status.INTERNAL_ERROR);
                return;
            }
            r.dataView = r.dataBuffer.view;
        }
        r.receivingData(receiver);
        r.nextRead = 0;
        r.readsOutstanding = 0;
        r.readBytes = 0;
        readWait[(readHead + readCount) % readWait.length] = r.index;
        readCount++;
        pumpReads();
    }

    /** Posts RDMA Reads in command order while fewer than the negotiated initiator depth are outstanding (nvmeof-protocol.md §6.3). */
    private void pumpReads() {
        while (readCount > 0 && readsInFlight < readDepth && closeCause == null) {
            RdmaTargetRequest r = requests[readWait[readHead]];
            int pieces = r.destinations ? r.segCount : 1;
            int i = r.nextRead;
            MemoryRegion region;
            int offset;
            int length;
            if (!r.destinations) {
                region = r.dataBuffer.region;
                offset = r.dataBuffer.regionOffset;
                length = r.dataLength();
            } else if (r.segBounce[i] != null) {
                region = r.segBounce[i].region;
                offset = r.segBounce[i].regionOffset;
                length = r.segLength[i];
            } else {
                region = r.segRegion[i];
                offset = r.segOffset[i];
                length = r.segLength[i];
            }
            if (!qp.postRead(KIND_READ | r.index, region, offset, length, r.remoteAddress + r.readBytes, r.rkey)) {
                fault(new IOException("RDMA queue " + qid + ": cannot post an RDMA Read (send queue full)"));
                return;
            }
            readsInFlight++;
            r.readsOutstanding++;
            r.readBytes += length;
            r.nextRead++;
            if (r.nextRead == pieces) {
                readHead = (readHead + 1) % readWait.length;
                readCount--;
            }
        }
    }

    private void onReadDone(RdmaTargetRequest r) {
        readsInFlight--;
        r.readsOutstanding--;
        int pieces = r.destinations ? r.segCount : 1;
        if (r.state() == RdmaTargetRequest.State.RECEIVING_DATA && r.nextRead == pieces && r.readsOutstanding == 0) {
            if (r.destinations) {
                for (int i = 0; i < r.segCount; i++) {
                    RegisteredBufferPool.Buffer b = r.segBounce[i];
                    if (b != null) {
                        r.segMemory[i].put(r.segOffset[i], b.view, 0, r.segLength[i]);
                        listener.copied(r.segLength[i]);
                        pool.giveBack(b);
                        r.segBounce[i] = null;
                    } else {
                        listener.placed(r.segLength[i]);
                    }
                }
            } else {
                listener.copied(r.dataLength()); // the core copies it out of data()
            }
            r.dataReceived().onData(r, 0);
        }
        pumpReads();
    }

    /** TargetRequest.complete: RDMA Writes (if any), re-post the receive, then the response Send (nvmeof-protocol.md §6.2, §6.3). */
    void complete(RdmaTargetRequest r) {
        if (closed) {
            r.releaseSegments(pool);
            r.releaseData(pool);
            r.state(RdmaTargetRequest.State.DEAD);
            return;
        }
        int status = r.response().status();
        int wrs = 0;
        if (r.destinations || r.segCount == 0) {
            r.releaseSegments(pool); // destinations: the reads are done (or never happened)
        } else if (Status.isSuccess(status) && r.keyed && !r.hostToController()) {
            wrs = postWrites(r);
            if (wrs < 0) {
                return;
            }
        } else {
            r.releaseSegments(pool); // an error status sends no data, like nvmet
        }
        r.releaseData(pool);
        if (!qp.postRecv(KIND_RECV | r.index, recvMr, r.index * recvSize, recvSize)) {
            fault(new IOException("RDMA queue " + qid + ": cannot re-post receive buffer " + r.index));
            return;
        }
        r.sendSeq = (r.sendSeq + 1) & 0xFFFF;
        long wrId = KIND_SEND | ((long) r.sendSeq << 16) | r.index;
        int offset = r.index * CompletionQueueEntry.LENGTH;
        boolean posted = r.invalidate && r.keyed
                ? qp.postSendWithInvalidate(wrId, rspMr, offset, CompletionQueueEntry.LENGTH, r.rkey, true)
                : qp.postSend(wrId, rspMr, offset, CompletionQueueEntry.LENGTH, true);
        r.state(RdmaTargetRequest.State.FREE);
        r.sendPending = true;
        r.sendWrs = wrs + 1;
        if (!posted) {
            fault(new IOException("RDMA queue " + qid + ": cannot post the response Send (send queue full)"));
        }
    }

    /** RDMA Writes of the segments to the host's keyed buffer; returns how many were posted, or -1 after a fault. */
    private int postWrites(RdmaTargetRequest r) {
        long remote = r.remoteAddress;
        boolean coalesce = r.segCount > MAX_WRITE_SEGMENTS;
        if (coalesce) {
            RegisteredBufferPool.Buffer b = pool.take(r.segBytes);
            int at = 0;
            for (int i = 0; i < r.segCount; i++) {
                b.view.put(at, r.segMemory[i], r.segOffset[i], r.segLength[i]);
                at += r.segLength[i];
            }
            r.coalesced = b;
            listener.copied(at);
            if (!qp.postWrite(KIND_WRITE | r.index, b.region, b.regionOffset, at, remote, r.rkey, false)) {
                fault(new IOException("RDMA queue " + qid + ": cannot post an RDMA Write (send queue full)"));
                return -1;
            }
            return 1;
        }
        for (int i = 0; i < r.segCount; i++) {
            MemoryRegion region = r.segRegion[i];
            int offset = r.segOffset[i];
            int length = r.segLength[i];
            if (region == null) {
                RegisteredBufferPool.Buffer b = pool.take(length);
                b.view.put(0, r.segMemory[i], offset, length);
                r.segBounce[i] = b;
                region = b.region;
                offset = b.regionOffset;
                listener.copied(length);
            } else {
                listener.placed(length);
            }
            if (!qp.postWrite(KIND_WRITE | r.index, region, offset, length, remote, r.rkey, false)) {
                fault(new IOException("RDMA queue " + qid + ": cannot post an RDMA Write (send queue full)"));
                return -1;
            }
            remote += length;
        }
        return r.segCount;
    }

    private void finishSend(RdmaTargetRequest r) {
        r.sendPending = false;
        r.releaseSegments(pool);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Faults and closing

    private void fault(Throwable cause) {
        if (closeCause == null) {
            closeCause = cause;
            LOG.log(Level.WARNING, cause.getMessage() + "; closing the queue");
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
        for (RdmaTargetRequest r : requests) {
            r.releaseSegments(pool);
            r.releaseData(pool);
            r.sendPending = false;
            r.state(RdmaTargetRequest.State.DEAD);
        }
        tasks.clear();
        freeRegions();
        listener.queueClosed(this);
    }

    private void freeRegions() {
        if (pool != null) {
            pool.close();
        }
        if (recvMr != null) {
            recvMr.close();
        }
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
        waker.wake();
    }

    @Override
    public boolean inQueueThread() {
        return Thread.currentThread() == thread;
    }

    @Override
    public void close() {
        closeRequested = true;
        waker.wake();
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

    @Override
    public String toString() {
        return "RdmaTargetQueue[qid=" + qid + " " + (conn != null ? conn.remoteAddress() : "") + "]";
    }
}

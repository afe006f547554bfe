package io.nvmeof.transport.rdma.soft;

import static io.nvmeof.transport.rdma.soft.Shm.INT;
import static io.nvmeof.transport.rdma.soft.Shm.LONG;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An RC queue pair and its completion queue. The receive queue and the CQ are rings in a memory-mapped file
 * ({@code <pid>-q<n>}) that the peer maps too, so the peer's posting thread does the work a responder RNIC would:
 * it takes our next posted receive, copies its payload into our registered buffer and writes the RECV completion into
 * our CQ. One-sided RDMA Write/Read copy straight into or out of the peer's registered region after the checks a
 * responder makes (rkey and its generation, PD, access flags, bounds). Nothing here takes a lock or allocates per
 * operation: posting, copying and polling are plain and atomic accesses to mapped memory. The file's layout is
 * {@link QueueFile}'s; the responder's part of each work request is {@link SoftResponder}'s, made at connect.
 *
 * <p>Work requests execute synchronously in the posting thread when they can; a Send that finds no receive posted
 * (receiver not ready) waits in a local send queue, with the work requests posted after it (RC ordering), and is retried
 * whenever the owner posts, polls or awaits, until the RNR timeout (rnr_retry 7 is treated as "retry for this long").
 * An error completion moves the QP to ERROR; the QP flushes its waiting sends and posted receives
 * ({@link WorkCompletion.Status#WR_FLUSH_ERR}) on the owner's next poll.
 */
final class SoftQueuePair implements QueuePair, CompletionQueue {
    static final int MAGIC = 0x53525150; // "SRQP"
    static final int INIT = 0, RTR = 1, RTS = 2, ERROR = 3;
    private static final State[] STATES = State.values();

    static final int OP_SEND = WorkCompletion.Opcode.SEND.ordinal();
    static final int OP_WRITE = WorkCompletion.Opcode.RDMA_WRITE.ordinal();
    static final int OP_READ = WorkCompletion.Opcode.RDMA_READ.ordinal();
    static final int OP_RECV = WorkCompletion.Opcode.RECV.ordinal();
    static final int SUCCESS = WorkCompletion.Status.SUCCESS.ordinal();
    static final int LOC_LEN_ERR = WorkCompletion.Status.LOC_LEN_ERR.ordinal();
    static final int LOC_PROT_ERR = WorkCompletion.Status.LOC_PROT_ERR.ordinal();
    static final int WR_FLUSH_ERR = WorkCompletion.Status.WR_FLUSH_ERR.ordinal();
    static final int REM_ACCESS_ERR = WorkCompletion.Status.REM_ACCESS_ERR.ordinal();
    static final int REM_INV_REQ_ERR = WorkCompletion.Status.REM_INV_REQ_ERR.ordinal();
    static final int RNR_RETRY_EXC_ERR = WorkCompletion.Status.RNR_RETRY_EXC_ERR.ordinal();
    static final int RETRY_EXC_ERR = WorkCompletion.Status.RETRY_EXC_ERR.ordinal();
    static final int GENERAL_ERR = WorkCompletion.Status.GENERAL_ERR.ordinal();
    private static final int DONE = 0, NOT_READY = 1;
    private static final int H_MAGIC = QueueFile.H_MAGIC, H_STATE = QueueFile.H_STATE, H_RQ_HEAD = QueueFile.H_RQ_HEAD;
    private static final int RQ_BASE = QueueFile.RQ_BASE, CQE = QueueFile.CQE;

    /** Live QPs of this JVM by file name, so a same-JVM peer can wake a thread parked in {@link #await}. */
    private static final Map<String, SoftQueuePair> LIVE = new ConcurrentHashMap<>();

    private static final java.util.concurrent.atomic.AtomicInteger QP_NUMBERS =
            new java.util.concurrent.atomic.AtomicInteger();

    final SoftDevice device;
    final SoftProtectionDomain pd;
    final QueuePairAttributes attributes;
    final int qpNumber;
    /** The CQ shared with other QPs (null: the ring in our own file), and our slot on it. */
    final SoftCompletionQueue sharedCq;

    private final int cqSlot;
    /** The shared receive queue our receives come from (null: the ring in our own file). */
    final SoftSharedReceiveQueue srq;
    /** Where our own completions go: our file or the shared CQ's. */
    private final ByteBuffer ownCq;

    final String fileName;
    private final Path path;
    private final ByteBuffer q;
    private final int rqMask;
    private final int cqBase;
    private final int cqMask;
    private final int cqCapacity;

    /** The responder's side of our work requests on the peer, set once when connected (before the owner has it). */
    private SoftResponder responder;

    int initiatorDepth;

    // Owner-thread state.
    private long rqTail;
    private long cqHead;
    private int sendOutstanding;
    private int recvOutstanding;
    private int unretired;
    /** Our posted receives as the flush takes them (owner thread). */
    private final PostedReceive flushed = new PostedReceive();

    /** The work requests waiting behind a receiver-not-ready Send, and the RNR timer (owner thread). */
    private final WaitingSends sq;

    /**
     * The owner's wait on this QP's own CQ: slices of 10 µs doubling to 200 µs (50 µs while a Send waits for a
     * receiver), 1 ms once the QP has been quiet for 1 ms, 10 ms once quiet for 10 ms, 100 ms once quiet for 100 ms
     * (each within the caller's timeout). A QP that only waits for a rare answer (an Asynchronous Event Request) so
     * wakes about 10 times a second.
     */
    private final QuietWait quiet = new QuietWait() {
        @Override
        boolean poll() {
            if (sq.count > 0) {
                progress();
            }
            return ready();
        }

        @Override
        long nextSlice(long park, long quietNanos) {
            if (sq.count > 0) {
                return Math.min(park * 2, 50_000);
            }
            if (quietNanos < 1_000_000) {
                return Math.min(park * 2, 200_000);
            }
            return quietNanos < 10_000_000 ? 1_000_000 : quietNanos < 100_000_000 ? 10_000_000 : 100_000_000;
        }
    };

    private volatile boolean closed;

    SoftQueuePair(SoftDevice device, QueuePairAttributes attributes, long rnrTimeoutNanos) throws IOException {
        this(device, attributes, rnrTimeoutNanos, null, null);
    }

    /** A QP whose completions go to {@code sharedCq} and receives come from {@code srq} (either may be null). */
    SoftQueuePair(
            SoftDevice device,
            QueuePairAttributes attributes,
            long rnrTimeoutNanos,
            SoftCompletionQueue sharedCq,
            SoftSharedReceiveQueue srq)
            throws IOException {
        this.device = device;
        this.pd = device.pd;
        this.attributes = attributes;
        this.qpNumber = QP_NUMBERS.incrementAndGet() & 0xFFFFFF;
        this.sharedCq = sharedCq;
        this.srq = srq;
        int rqCap = srq != null ? 1 : Shm.pow2(attributes.maxRecvWr());
        this.cqCapacity = sharedCq != null ? 1 : Shm.pow2(attributes.cqSize());
        this.rqMask = rqCap - 1;
        this.cqMask = cqCapacity - 1;
        this.cqBase = RQ_BASE + rqCap * QueueFile.RQE;
        this.fileName = device.newFileName('q');
        this.path = device.file(fileName);
        this.q = Shm.create(path, cqBase + (long) cqCapacity * CQE);
        QueueFile.initCompletionRing(q, cqBase, cqCapacity);
        int slot = 0;
        if (sharedCq != null) {
            try {
                slot = sharedCq.attach(this);
            } catch (IOException e) {
                Shm.delete(path);
                throw e;
            }
        }
        this.cqSlot = slot;
        this.ownCq = sharedCq != null ? sharedCq.q : q;
        INT.set(q, QueueFile.H_CQ_FILE, sharedCq != null ? sharedCq.fileNumber : 0);
        INT.set(q, QueueFile.H_CQ_SLOT, slot);
        INT.set(q, QueueFile.H_SRQ_FILE, srq != null ? srq.fileNumber : 0);
        INT.set(q, QueueFile.H_QPN, qpNumber);
        INT.set(q, H_STATE, INIT);
        INT.setRelease(q, H_MAGIC, MAGIC);
        sq = new WaitingSends(attributes.maxSendWr(), rnrTimeoutNanos, sharedCq);
        LIVE.put(fileName, this);
    }

    /** Maps the peer's queue file and deletes its name (both sides hold mappings now). Cold path. */
    void connectPeer(long peerPid, String peerFile, QueuePairAttributes peerAttributes, int peerPdId)
            throws IOException {
        SoftQueuePair local = peerPid == device.pid ? LIVE.get(peerFile) : null;
        this.responder = new SoftResponder(this, peerPid, peerFile, peerAttributes, peerPdId, local);
    }

    void setState(int s) {
        INT.setVolatile(q, H_STATE, s);
    }

    private int st() {
        return (int) INT.getVolatile(q, H_STATE);
    }

    @Override
    public State state() {
        return STATES[st()];
    }

    /** Moves this QP (and, for errors a responder detects too, the peer's) to ERROR; wakes the pollers. Any thread. */
    void toError(boolean alsoPeer) {
        setState(ERROR);
        errored(this);
        SoftResponder r = responder;
        if (alsoPeer && r != null) {
            r.peerToError();
        }
    }

    /** Wakes whoever polls {@code qp}'s completions after it went to ERROR (its shared CQ's owner flushes it). */
    static void errored(SoftQueuePair qp) {
        if (qp != null && qp.sharedCq != null) {
            qp.sharedCq.attention();
        } else {
            wake(qp);
        }
    }

    /** Wakes whoever polls {@code qp}'s completions (its own CQ's or its shared CQ's waiter); null: no one. */
    static void wake(SoftQueuePair qp) {
        if (qp != null) {
            if (qp.sharedCq != null) {
                qp.sharedCq.wake();
                return;
            }
            qp.quiet.wake();
        }
    }

    @Override
    public int qpNumber() {
        return qpNumber;
    }

    // ---------------------------------------------------------------- posting

    @Override
    public boolean postRecv(long wrId, MemoryRegion region, int offset, int length) {
        if (closed || srq != null || recvOutstanding >= attributes.maxRecvWr()) {
            return false;
        }
        recvOutstanding++;
        if (st() == ERROR) {
            putOwn(wrId, OP_RECV, WR_FLUSH_ERR, 0, 0, false, 0);
            return true;
        }
        QueueFile.postReceive(q, rqTail, rqMask, device, wrId, region, offset, length);
        rqTail++;
        return true;
    }

    @Override
    public boolean postSend(long wrId, MemoryRegion region, int offset, int length, boolean signaled) {
        return post(OP_SEND, wrId, region, offset, length, 0, 0, 0, signaled);
    }

    @Override
    public boolean postSendWithInvalidate(
            long wrId, MemoryRegion region, int offset, int length, int rkeyToInvalidate, boolean signaled) {
        return post(
                OP_SEND, wrId, region, offset, length, 0, 0, rkeyToInvalidate == 0 ? -1 : rkeyToInvalidate, signaled);
    }

    @Override
    public boolean postWrite(
            long wrId, MemoryRegion region, int offset, int length, long remoteAddress, int rkey, boolean signaled) {
        return post(OP_WRITE, wrId, region, offset, length, remoteAddress, rkey, 0, signaled);
    }

    @Override
    public boolean postRead(long wrId, MemoryRegion region, int offset, int length, long remoteAddress, int rkey) {
        return post(OP_READ, wrId, region, offset, length, remoteAddress, rkey, 0, true);
    }

    /** inv: 0 = plain Send, -1 = invalidate rkey 0 (never valid), otherwise the rkey to invalidate. */
    private boolean post(
            int op,
            long wrId,
            MemoryRegion mr,
            int offset,
            int length,
            long raddr,
            int rkey,
            int inv,
            boolean signaled) {
        if (closed) {
            return false;
        }
        int s = st();
        if (s == INIT || s == RTR || sendOutstanding >= attributes.maxSendWr()) {
            return false;
        }
        sendOutstanding++;
        quiet.active();
        if (sq.count > 0) {
            progress();
        }
        if (sq.count == 0 && execute(op, wrId, mr, offset, length, raddr, rkey, inv, signaled) == DONE) {
            return true;
        }
        sq.add(op, wrId, mr, offset, length, raddr, rkey, inv, signaled);
        return true;
    }

    /** Retries the waiting send queue from its head (owner thread). */
    private void progress() {
        while (sq.count > 0) {
            int i = sq.head;
            if (execute(
                            sq.op[i],
                            sq.wrId[i],
                            sq.mr[i],
                            sq.offset[i],
                            sq.length[i],
                            sq.raddr[i],
                            sq.rkey[i],
                            sq.inv[i],
                            sq.signaled[i])
                    == NOT_READY) {
                if (sq.headTimedOut()) {
                    completeSend(sq.wrId[i], sq.op[i], RNR_RETRY_EXC_ERR, sq.length[i]);
                    sq.removeHead();
                    toError(false);
                    continue; // the rest is flushed by execute() seeing ERROR
                }
                return;
            }
            sq.removeHead();
            sq.restartTimer();
        }
    }

    /** On a shared CQ's poll (owner thread): retries our waiting sends, if any. */
    void progressWaiting() {
        if (sq.count > 0 && !closed) {
            progress();
        }
    }

    /** On a shared CQ's poll after some QP went to ERROR (owner thread): flushes ours if it is this one. */
    void flushIfError() {
        if (!closed && st() == ERROR) {
            flush();
        }
    }

    /** A shared CQ polled one of our completions: the receive or the send-queue entries it retires are free. */
    void retired(int op, int retire) {
        if (op == OP_RECV) {
            if (srq == null) {
                recvOutstanding--;
            }
        } else {
            sendOutstanding -= retire;
        }
    }

    /** Performs one work request as requester and responder; NOT_READY when the peer has no receive posted. */
    private int execute(
            int op,
            long wrId,
            MemoryRegion mr,
            int offset,
            int length,
            long raddr,
            int rkey,
            int inv,
            boolean signaled) {
        if (st() == ERROR) {
            completeSend(wrId, op, WR_FLUSH_ERR, 0);
            return DONE;
        }
        if (!(mr instanceof SoftMemoryRegion m)
                || m.device != device
                || m.pd != pd
                || !m.valid()
                || offset < 0
                || length < 0
                || offset > m.length - length
                || (op == OP_READ && (m.access & ProtectionDomain.ACCESS_LOCAL_WRITE) == 0)) {
            completeSend(wrId, op, LOC_PROT_ERR, 0);
            toError(false);
            return DONE;
        }
        if (responder.peerInError()) {
            // The responder drops everything: on hardware the requester retries until its transport timer expires.
            completeSend(wrId, op, RETRY_EXC_ERR, 0);
            toError(false);
            return DONE;
        }
        int rst;
        if (op == OP_SEND) {
            rst = responder.send(m, offset, length, inv);
            if (rst == SoftResponder.NOT_READY) {
                return NOT_READY;
            }
        } else if (op == OP_WRITE) {
            rst = responder.write(m, offset, length, raddr, rkey);
        } else {
            rst = initiatorDepth == 0 ? REM_INV_REQ_ERR : responder.read(m, offset, length, raddr, rkey);
        }
        if (rst != SUCCESS) {
            completeSend(wrId, op, rst, 0);
            toError(true);
            return DONE;
        }
        if (signaled) {
            completeSend(wrId, op, SUCCESS, length);
        } else {
            unretired++;
        }
        return DONE;
    }

    // ---------------------------------------------------------------- completions

    private void completeSend(long wrId, int op, int status, int length) {
        int retire = unretired + 1;
        unretired = 0;
        putOwn(wrId, op, status, length, 0, false, retire);
    }

    private void putOwn(long wrId, int op, int status, int length, int inv, boolean withInv, int retire) {
        int word = op | status << 4 | (withInv ? 1 << 12 : 0);
        boolean ok = sharedCq != null
                ? QueueFile.putCompletion(
                        ownCq,
                        RQ_BASE,
                        sharedCq.mask,
                        wrId,
                        word | cqSlot << SoftCompletionQueue.SLOT_SHIFT,
                        length,
                        inv,
                        retire)
                : QueueFile.putCompletion(q, cqBase, cqMask, wrId, word, length, inv, retire);
        if (!ok) {
            toError(true); // CQ overrun: cannot happen within the posting limits
        }
    }

    @Override
    public int poll(WorkCompletion[] out) {
        if (closed) {
            return 0;
        }
        if (sharedCq != null) {
            throw new IllegalStateException("this QP's completions are on its shared CQ");
        }
        if (sq.count > 0) {
            progress();
        }
        if (st() == ERROR) {
            flush();
        }
        int n = 0;
        while (n < out.length) {
            int cell = cqBase + (int) (cqHead & cqMask) * CQE;
            if ((long) LONG.getAcquire(q, cell) != cqHead + 1) {
                break;
            }
            WorkCompletion wc = out[n++];
            int word = QueueFile.readCompletion(q, cell, wc);
            wc.qpNumber = qpNumber;
            int retire = (int) INT.get(q, cell + 28);
            LONG.setRelease(q, cell, cqHead + cqCapacity);
            cqHead++;
            if ((word & 0xf) == OP_RECV) {
                recvOutstanding--;
            } else {
                sendOutstanding -= retire;
            }
        }
        if (n > 0) {
            quiet.active();
        }
        return n;
    }

    /** In ERROR: the waiting sends and every posted receive complete with WR_FLUSH_ERR (owner thread). */
    private void flush() {
        while (sq.count > 0) {
            completeSend(sq.wrId[sq.head], sq.op[sq.head], WR_FLUSH_ERR, 0);
            sq.removeHead();
        }
        while (srq == null && flushed.take(q, rqMask)) {
            putOwn(flushed.wrId, OP_RECV, WR_FLUSH_ERR, 0, 0, false, 0);
        }
    }

    private boolean ready() {
        return (long) LONG.getAcquire(q, cqBase + (int) (cqHead & cqMask) * CQE) == cqHead + 1
                || (st() == ERROR && (sq.count > 0 || (long) LONG.getVolatile(q, H_RQ_HEAD) < rqTail))
                || closed;
    }

    /** Waits as {@link QuietWait} does, with the slices of {@link #quiet}. */
    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        return quiet.await(timeout, this);
    }

    @Override
    public int capacity() {
        return sharedCq != null ? sharedCq.capacity() : cqCapacity;
    }

    /** Frees the QP: it stops working, its file name goes (mappings stay valid until unreachable). */
    void destroy() {
        toError(false);
        closed = true;
        if (sharedCq != null) {
            sq.forget(); // owner thread: the waiting sends are forgotten with the QP
            sharedCq.detach(cqSlot);
        }
        LIVE.remove(fileName);
        Shm.delete(path);
    }

    Path path() {
        return path;
    }

    @Override
    public String toString() {
        return "soft QP " + fileName + " " + state();
    }
}

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
import java.lang.invoke.VarHandle;
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
 * operation: posting, copying and polling are plain and atomic accesses to mapped memory.
 *
 * <p>File layout: header {@code 0 int magic, 8 int state (QueuePair.State ordinal; either side may set ERROR), 64 long
 * rq head (consumers CAS it: the peer's sender, our flush), 128 long rq tail (we publish with release), 192 long cq tail
 * (producers CAS it)}; at 256 the receive ring ({@code 32-byte WQEs: long wrId, int lkey, int offset, int length}); then
 * the CQ ring ({@code 32-byte CQEs: long sequence (Vyukov bounded MPMC: a producer that claimed position p publishes
 * p + 1; the consumer frees it with p + capacity), long wrId, int opcode|status<<4|withInvalidate<<12, int byteLength,
 * int invalidated rkey, int send-queue entries retired}).
 *
 * <p>Work requests execute synchronously in the posting thread when they can; a Send that finds no receive posted
 * (receiver not ready) waits in a local send queue, with the work requests posted after it (RC ordering), and is retried
 * whenever the owner posts, polls or awaits, until the RNR timeout (rnr_retry 7 is treated as "retry for this long").
 * An error completion moves the QP to ERROR; the QP flushes its waiting sends and posted receives
 * ({@link WorkCompletion.Status#WR_FLUSH_ERR}) on the owner's next poll.
 */
final class SoftQueuePair implements QueuePair, CompletionQueue {
    static final int MAGIC = 0x53525150; // "SRQP"
    static final int H_MAGIC = 0, H_STATE = 8, H_RQ_HEAD = 64, H_RQ_TAIL = 128, H_CQ_TAIL = 192, RQ_BASE = 256;
    /** Header ints: the shared CQ's file number (0: the ring in this file), our slot on it, the SRQ's file number. */
    static final int H_CQ_FILE = 16, H_CQ_SLOT = 20, H_SRQ_FILE = 24, H_QPN = 28;

    static final int RQE = 32, CQE = 32;
    static final int INIT = 0, RTR = 1, RTS = 2, ERROR = 3;
    private static final State[] STATES = State.values();

    static final int OP_SEND = WorkCompletion.Opcode.SEND.ordinal();
    static final int OP_WRITE = WorkCompletion.Opcode.RDMA_WRITE.ordinal();
    static final int OP_READ = WorkCompletion.Opcode.RDMA_READ.ordinal();
    static final int OP_RECV = WorkCompletion.Opcode.RECV.ordinal();
    private static final WorkCompletion.Opcode[] OPCODES = WorkCompletion.Opcode.values();
    private static final WorkCompletion.Status[] STATUSES = WorkCompletion.Status.values();
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
    private final long rnrTimeoutNanos;

    // The peer, set once when connected (before the connection is handed to its owner).
    private ByteBuffer pq;
    /** The peer's receive ring (its file or its SRQ's) and completion ring (its file or its shared CQ's). */
    private ByteBuffer pRq;

    private int pRqMask;
    private ByteBuffer pCq;
    private int pCqBase;
    private int pCqMask;
    private int pCqSlotBits;
    private SoftDevice.Peer peer;
    private int peerPd;
    private SoftQueuePair localPeer;
    int initiatorDepth;

    // Owner-thread state.
    private long rqTail;
    private long cqHead;
    private int sendOutstanding;
    private int recvOutstanding;
    private int unretired;
    // Resolution scratch (owner thread).
    private ByteBuffer rBuf;
    private int rIndex;
    private long tkWrId;
    private int tkKey;
    private int tkOffset;
    private int tkLength;

    // The local send queue of work requests waiting behind a receiver-not-ready Send (owner thread).
    private final int[] sqOp;
    private final long[] sqWrId;
    private final MemoryRegion[] sqMr;
    private final int[] sqOffset;
    private final int[] sqLength;
    private final long[] sqRaddr;
    private final int[] sqRkey;
    private final int[] sqInv;
    private final boolean[] sqSignaled;
    private int sqHead;
    private int sqCount;
    private long rnrDeadline;
    /**
     * The owner's wait on this QP's own CQ: slices of 10 µs doubling to 200 µs (50 µs while a Send waits for a
     * receiver), 1 ms once the QP has been quiet for 1 ms, 10 ms once quiet for 10 ms, 100 ms once quiet for 100 ms
     * (each within the caller's timeout). A QP that only waits for a rare answer (an Asynchronous Event Request) so
     * wakes about 10 times a second.
     */
    private final QuietWait quiet = new QuietWait() {
        @Override
        boolean poll() {
            if (sqCount > 0) {
                progress();
            }
            return ready();
        }

        @Override
        long nextSlice(long park, long quietNanos) {
            if (sqCount > 0) {
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
        this.rnrTimeoutNanos = rnrTimeoutNanos;
        this.qpNumber = QP_NUMBERS.incrementAndGet() & 0xFFFFFF;
        this.sharedCq = sharedCq;
        this.srq = srq;
        int rqCap = srq != null ? 1 : Shm.pow2(attributes.maxRecvWr());
        this.cqCapacity = sharedCq != null ? 1 : Shm.pow2(attributes.cqSize());
        this.rqMask = rqCap - 1;
        this.cqMask = cqCapacity - 1;
        this.cqBase = RQ_BASE + rqCap * RQE;
        this.fileName = device.newFileName('q');
        this.path = device.file(fileName);
        this.q = Shm.create(path, cqBase + (long) cqCapacity * CQE);
        for (int i = 0; i < cqCapacity; i++) {
            LONG.set(q, cqBase + i * CQE, (long) i);
        }
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
        INT.set(q, H_CQ_FILE, sharedCq != null ? sharedCq.fileNumber : 0);
        INT.set(q, H_CQ_SLOT, slot);
        INT.set(q, H_SRQ_FILE, srq != null ? srq.fileNumber : 0);
        INT.set(q, H_QPN, qpNumber);
        INT.set(q, H_STATE, INIT);
        INT.setRelease(q, H_MAGIC, MAGIC);
        int n = attributes.maxSendWr();
        sqOp = new int[n];
        sqWrId = new long[n];
        sqMr = new MemoryRegion[n];
        sqOffset = new int[n];
        sqLength = new int[n];
        sqRaddr = new long[n];
        sqRkey = new int[n];
        sqInv = new int[n];
        sqSignaled = new boolean[n];
        LIVE.put(fileName, this);
    }

    /** Maps the peer's queue file and deletes its name (both sides hold mappings now). Cold path. */
    void connectPeer(long peerPid, String peerFile, QueuePairAttributes peerAttributes, int peerPdId)
            throws IOException {
        Path p = device.file(peerFile);
        ByteBuffer b = Shm.open(p);
        if ((int) INT.getAcquire(b, H_MAGIC) != MAGIC) {
            throw new IOException("software RNIC: " + p + " is not a queue pair");
        }
        int cqFile = (int) INT.get(b, H_CQ_FILE);
        int srqFile = (int) INT.get(b, H_SRQ_FILE);
        int rqCap = srqFile != 0 ? 1 : Shm.pow2(peerAttributes.maxRecvWr());
        int cqCap = cqFile != 0 ? 1 : Shm.pow2(peerAttributes.cqSize());
        if (b.capacity() != RQ_BASE + rqCap * RQE + cqCap * CQE) {
            throw new IOException("software RNIC: " + p + " does not match the peer's attributes");
        }
        this.peer = device.peer(peerPid);
        this.pq = b;
        if (srqFile != 0) {
            this.pRq = SoftSharedReceiveQueue.map(device, peerPid, srqFile);
            this.pRqMask = (int) INT.get(pRq, SoftSharedReceiveQueue.H_CAPACITY) - 1;
        } else {
            this.pRq = b;
            this.pRqMask = rqCap - 1;
        }
        if (cqFile != 0) {
            this.pCq = SoftCompletionQueue.map(device, peerPid, cqFile);
            this.pCqBase = RQ_BASE;
            this.pCqMask = (int) INT.get(pCq, SoftCompletionQueue.H_CAPACITY) - 1;
            this.pCqSlotBits = (int) INT.get(b, H_CQ_SLOT) << SoftCompletionQueue.SLOT_SHIFT;
        } else {
            this.pCq = b;
            this.pCqBase = RQ_BASE + rqCap * RQE;
            this.pCqMask = cqCap - 1;
        }
        this.peerPd = peerPdId;
        this.localPeer = peerPid == device.pid ? LIVE.get(peerFile) : null;
        Shm.delete(p);
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
        if (alsoPeer && pq != null) {
            INT.setVolatile(pq, H_STATE, ERROR);
            errored(localPeer);
        }
    }

    private static void errored(SoftQueuePair qp) {
        if (qp != null && qp.sharedCq != null) {
            qp.sharedCq.attention();
        } else {
            wake(qp);
        }
    }

    private static void wake(SoftQueuePair qp) {
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
        int e = RQ_BASE + (int) (rqTail & rqMask) * RQE;
        LONG.set(q, e, wrId);
        int key = region instanceof SoftMemoryRegion m && m.device == device ? m.key : 0;
        INT.set(q, e + 8, key);
        INT.set(q, e + 12, offset);
        INT.set(q, e + 16, length);
        LONG.setRelease(q, H_RQ_TAIL, ++rqTail);
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
        if (sqCount > 0) {
            progress();
        }
        if (sqCount == 0 && execute(op, wrId, mr, offset, length, raddr, rkey, inv, signaled) == DONE) {
            return true;
        }
        int i = (sqHead + sqCount) % sqOp.length;
        if (sqCount == 0) {
            rnrDeadline = System.nanoTime() + rnrTimeoutNanos;
            if (sharedCq != null) {
                sharedCq.waitingQps++;
            }
        }
        sqOp[i] = op;
        sqWrId[i] = wrId;
        sqMr[i] = mr;
        sqOffset[i] = offset;
        sqLength[i] = length;
        sqRaddr[i] = raddr;
        sqRkey[i] = rkey;
        sqInv[i] = inv;
        sqSignaled[i] = signaled;
        sqCount++;
        return true;
    }

    /** Retries the waiting send queue from its head (owner thread). */
    private void progress() {
        while (sqCount > 0) {
            int i = sqHead;
            if (execute(
                            sqOp[i],
                            sqWrId[i],
                            sqMr[i],
                            sqOffset[i],
                            sqLength[i],
                            sqRaddr[i],
                            sqRkey[i],
                            sqInv[i],
                            sqSignaled[i])
                    == NOT_READY) {
                if (System.nanoTime() - rnrDeadline >= 0) {
                    completeSend(sqWrId[i], sqOp[i], RNR_RETRY_EXC_ERR, sqLength[i]);
                    dequeue();
                    toError(false);
                    continue; // the rest is flushed by execute() seeing ERROR
                }
                return;
            }
            dequeue();
            rnrDeadline = System.nanoTime() + rnrTimeoutNanos;
        }
    }

    private void dequeue() {
        sqMr[sqHead] = null;
        sqHead = (sqHead + 1) % sqOp.length;
        sqCount--;
        if (sqCount == 0 && sharedCq != null) {
            sharedCq.waitingQps--;
        }
    }

    /** On a shared CQ's poll (owner thread): retries our waiting sends, if any. */
    void progressWaiting() {
        if (sqCount > 0 && !closed) {
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
        if ((int) INT.getVolatile(pq, H_STATE) == ERROR) {
            // The responder drops everything: on hardware the requester retries until its transport timer expires.
            completeSend(wrId, op, RETRY_EXC_ERR, 0);
            toError(false);
            return DONE;
        }
        if (op == OP_SEND) {
            if (!take(pRq, pRqMask)) {
                return NOT_READY;
            }
            int rst = length > tkLength
                    ? LOC_LEN_ERR
                    : resolve(tkKey, tkOffset, false, length, ProtectionDomain.ACCESS_LOCAL_WRITE)
                            ? SUCCESS
                            : LOC_PROT_ERR;
            if (rst == SUCCESS && inv != 0 && !invalidate(inv)) {
                rst = LOC_PROT_ERR;
            }
            if (rst != SUCCESS) {
                // The responder completes the receive in error and moves to ERROR; the requester sees a NAK.
                putPeer(tkWrId, OP_RECV, rst, 0, 0, false);
                completeSend(wrId, op, REM_INV_REQ_ERR, 0);
                toError(true);
                return DONE;
            }
            rBuf.put(rIndex, m.view, offset, length);
            putPeer(tkWrId, OP_RECV, SUCCESS, length, inv == -1 ? 0 : inv, inv != 0);
        } else if (op == OP_WRITE) {
            if (!resolve(rkey, raddr, true, length, ProtectionDomain.ACCESS_REMOTE_WRITE)) {
                completeSend(wrId, op, REM_ACCESS_ERR, 0);
                toError(true);
                return DONE;
            }
            rBuf.put(rIndex, m.view, offset, length);
        } else {
            if (initiatorDepth == 0) {
                completeSend(wrId, op, REM_INV_REQ_ERR, 0);
                toError(true);
                return DONE;
            }
            if (!resolve(rkey, raddr, true, length, ProtectionDomain.ACCESS_REMOTE_READ)) {
                completeSend(wrId, op, REM_ACCESS_ERR, 0);
                toError(true);
                return DONE;
            }
            m.view.put(offset, rBuf, rIndex, length);
        }
        if (signaled) {
            completeSend(wrId, op, SUCCESS, length);
        } else {
            unretired++;
        }
        return DONE;
    }

    /**
     * The checks a responder makes on (key, address or offset, length) against the peer's registry: the key and its
     * generation, the PD of the peer's QP, the access flags, the bounds. On success rBuf/rIndex name the bytes.
     */
    private boolean resolve(int key, long where, boolean byAddress, int length, int need) {
        int slot = key >>> 8;
        if (slot <= 0 || slot >= SoftDevice.SLOTS) {
            return false;
        }
        ByteBuffer reg = peer.registry;
        int o = SoftDevice.REG_HEADER + slot * SoftDevice.SLOT_SIZE;
        if ((int) INT.getAcquire(reg, o + SoftDevice.S_STATE) != key) {
            return false;
        }
        long serial = (long) LONG.get(reg, o + SoftDevice.S_SERIAL);
        long base = (long) LONG.get(reg, o + SoftDevice.S_BASE);
        long len = (long) LONG.get(reg, o + SoftDevice.S_LENGTH);
        long fileId = (long) LONG.get(reg, o + SoftDevice.S_FILE);
        long fileOffset = (long) LONG.get(reg, o + SoftDevice.S_FILE_OFF);
        int access = (int) INT.get(reg, o + SoftDevice.S_ACCESS);
        int regionPd = (int) INT.get(reg, o + SoftDevice.S_PD);
        VarHandle.acquireFence();
        if ((int) INT.getOpaque(reg, o + SoftDevice.S_STATE) != key || (access & need) != need || regionPd != peerPd) {
            return false;
        }
        long off = byAddress ? where - base : where;
        if (off < 0 || length < 0 || off > len - length) {
            return false;
        }
        SoftDevice.RegionView v = peer.views.get(slot);
        if (v == null || v.serial() != serial) {
            v = peer.map(slot, serial, fileId, fileOffset, len);
            if (v == null) {
                return false;
            }
        }
        rBuf = v.buffer();
        rIndex = (int) off;
        return true;
    }

    /** Send with Invalidate at the responder: the key must be a valid region of the peer's PD. */
    private boolean invalidate(int inv) {
        int slot = inv >>> 8;
        if (inv == -1 || slot <= 0 || slot >= SoftDevice.SLOTS) {
            return false;
        }
        int o = SoftDevice.REG_HEADER + slot * SoftDevice.SLOT_SIZE;
        return (int) INT.get(peer.registry, o + SoftDevice.S_PD) == peerPd
                && INT.compareAndSet(peer.registry, o + SoftDevice.S_STATE, inv, 0);
    }

    /** Consumes the next posted receive of the ring in {@code b} into tk*; false if none. */
    private boolean take(ByteBuffer b, int mask) {
        for (; ; ) {
            long head = (long) LONG.getVolatile(b, H_RQ_HEAD);
            long tail = (long) LONG.getAcquire(b, H_RQ_TAIL);
            if (head >= tail) {
                return false;
            }
            int e = RQ_BASE + (int) (head & mask) * RQE;
            long wrId = (long) LONG.get(b, e);
            int key = (int) INT.get(b, e + 8);
            int off = (int) INT.get(b, e + 12);
            int len = (int) INT.get(b, e + 16);
            if (LONG.compareAndSet(b, H_RQ_HEAD, head, head + 1)) {
                tkWrId = wrId;
                tkKey = key;
                tkOffset = off;
                tkLength = len;
                return true;
            }
        }
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
                ? put(
                        ownCq,
                        RQ_BASE,
                        sharedCq.mask,
                        wrId,
                        word | cqSlot << SoftCompletionQueue.SLOT_SHIFT,
                        length,
                        inv,
                        retire)
                : put(q, cqBase, cqMask, wrId, word, length, inv, retire);
        if (!ok) {
            toError(true); // CQ overrun: cannot happen within the posting limits
        }
    }

    private void putPeer(long wrId, int op, int status, int length, int inv, boolean withInv) {
        int word = op | status << 4 | (withInv ? 1 << 12 : 0) | pCqSlotBits;
        if (!put(pCq, pCqBase, pCqMask, wrId, word, length, inv, 0)) {
            toError(true);
        }
        wake(localPeer);
    }

    private static boolean put(ByteBuffer b, int base, int mask, long wrId, int word, int length, int inv, int retire) {
        for (; ; ) {
            long pos = (long) LONG.getVolatile(b, H_CQ_TAIL);
            int cell = base + (int) (pos & mask) * CQE;
            long seq = (long) LONG.getAcquire(b, cell);
            if (seq == pos) {
                if (LONG.compareAndSet(b, H_CQ_TAIL, pos, pos + 1)) {
                    LONG.set(b, cell + 8, wrId);
                    INT.set(b, cell + 16, word);
                    INT.set(b, cell + 20, length);
                    INT.set(b, cell + 24, inv);
                    INT.set(b, cell + 28, retire);
                    LONG.setRelease(b, cell, pos + 1);
                    return true;
                }
            } else if (seq < pos) {
                return false;
            } else {
                Thread.onSpinWait();
            }
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
        if (sqCount > 0) {
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
            int word = (int) INT.get(q, cell + 16);
            wc.wrId = (long) LONG.get(q, cell + 8);
            wc.opcode = OPCODES[word & 0xf];
            wc.status = STATUSES[(word >>> 4) & 0xff];
            wc.withInvalidate = (word & 1 << 12) != 0;
            wc.byteLength = (int) INT.get(q, cell + 20);
            wc.invalidatedRkey = (int) INT.get(q, cell + 24);
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
        while (sqCount > 0) {
            completeSend(sqWrId[sqHead], sqOp[sqHead], WR_FLUSH_ERR, 0);
            dequeue();
        }
        while (srq == null && take(q, rqMask)) {
            putOwn(tkWrId, OP_RECV, WR_FLUSH_ERR, 0, 0, false, 0);
        }
    }

    private boolean ready() {
        return (long) LONG.getAcquire(q, cqBase + (int) (cqHead & cqMask) * CQE) == cqHead + 1
                || (st() == ERROR && (sqCount > 0 || (long) LONG.getVolatile(q, H_RQ_HEAD) < rqTail))
                || closed;
    }

    /** Waits as {@link QuietWait} does, with the slices of {@link #quiet}. */
    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        return quiet.await(timeout, this);
    }

    /** Frees the QP: it stops working, its file name goes (mappings stay valid until unreachable). */
    void destroy() {
        toError(false);
        closed = true;
        if (sharedCq != null) {
            if (sqCount > 0) {
                sharedCq.waitingQps--; // owner thread: the waiting sends are forgotten with the QP
                sqCount = 0;
            }
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

package io.nvmeof.transport.rdma;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

/**
 * One thread serving many NVMe/RDMA queues, as an SPDK poll group does: one completion queue shared by all their
 * QPs, one shared receive queue whose buffers ({@link ReceiveBuffers}: 64 B + the in-capsule size each) every QP of
 * the group receives commands into, one pool of bounce buffers. The thread polls the CQ, finds each completion's queue
 * by its QP number ({@link QueueTable}), runs the core for it and posts every work request of every queue.
 *
 * <p>The CQ, SRQ and buffers are made with the first queue, in its connection's protection domain (both providers
 * have one PD per device); a device without SRQs (max_srq 0) leaves {@link #srqBuffers()} null and each queue posts
 * its own receive buffers to its QP, still on the shared CQ. The CQ's entries are a budget: each queue reserves its
 * receives, response Sends and RDMA Reads ({@link #reserve}); a group whose CQ is full takes no more queues.
 *
 * <p>Idle: the transports' {@code IdlePolicy} through {@link QueueThreadWaker}: busy-poll with {@code IoMode.busyPoll},
 * else spin for the window (200 µs by default), then sleep in the CQ's {@code await} (the software RNIC: park, woken
 * by a peer in this JVM; DiSNI: ibv_req_notify_cq + the completion channel) for up to {@value #AWAIT_MS} ms at a time.
 * Other threads wake it by {@link #execute} (tasks: a queue joining, closing, the core's own tasks).
 */
final class RdmaPollGroup implements Runnable {
    private static final Logger LOG = System.getLogger(RdmaPollGroup.class.getName());
    static final int AWAIT_MS = 10;
    private static final Duration AWAIT = Duration.ofMillis(AWAIT_MS);

    private final String name;
    private final boolean busyPoll;
    private final int cqEntries;
    private final int srqDepth;
    private final int recvSize;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final QueueThreadWaker waker = new QueueThreadWaker();
    private final BooleanSupplier hasWork = () -> !tasks.isEmpty();
    private final WorkCompletion[] wcs = new WorkCompletion[32];
    /** System.nanoTime of this loop turn, read by the turn's first command (0 until then). Group thread only. */
    private long turnNanos;

    /** Queues by tag (the wr_id of everything they post) and by QP number (for receives in the SRQ). */
    private volatile QueueTable byTag = QueueTable.EMPTY;

    private volatile QueueTable byQpNumber = QueueTable.EMPTY;
    private int nextTag;
    // Made with the first queue (under this group's lock), then only the group's thread uses them.
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private int cqCapacity;
    private SharedReceiveQueue srq;
    private ReceiveBuffers srqBuffers;
    private RegisteredBufferPool pool;
    private volatile Thread thread;
    private int cqReserved;
    private int queues;
    private volatile boolean stopping;

    /** {@code srqDepth} 0: no shared receive queue, each queue posts its own receive buffers. */
    RdmaPollGroup(String name, boolean busyPoll, int cqEntries, int srqDepth, int recvSize) {
        this.name = name;
        this.busyPoll = busyPoll;
        this.cqEntries = cqEntries;
        this.srqDepth = srqDepth;
        this.recvSize = recvSize;
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    /**
     * Makes the CQ, SRQ and receive buffers in {@code pd} and starts the thread, the first time (cold path, CM thread).
     *
     * @throws IOException if they cannot be made, or a queue of another device (PD) comes to this group
     */
    synchronized void prepare(ProtectionDomain connectionPd) throws IOException {
        if (stopping) {
            throw new IOException("poll group " + name + " is stopping");
        }
        if (pd != null) {
            if (pd != connectionPd) {
                throw new IOException("poll group " + name + " serves another RDMA device");
            }
            return;
        }
        CompletionQueue c = null;
        int entries = cqEntries;
        for (; ; ) {
            try {
                c = connectionPd.createCompletionQueue(entries);
                break;
            } catch (IOException e) {
                if (entries <= 1024) {
                    throw e;
                }
                entries /= 2; // the device's max_cqe may be lower
            }
        }
        SharedReceiveQueue s = null;
        ReceiveBuffers b = null;
        try {
            if (srqDepth == 0) {
                LOG.log(
                        Level.INFO,
                        () -> "poll group " + name + ": no shared receive queue (switched off): each queue posts its"
                                + " own receive buffers");
            } else {
                try {
                    // its receives are reserved in the CQ (below): at most half of it
                    s = connectionPd.createSharedReceiveQueue(Math.min(srqDepth, c.capacity() / 2));
                } catch (UnsupportedOperationException e) {
                    LOG.log(
                            Level.INFO,
                            () -> "poll group " + name + ": no shared receive queue (" + e.getMessage()
                                    + "): each queue posts its own receive buffers");
                }
            }
            if (s != null) {
                b = ReceiveBuffers.create(connectionPd, s.capacity(), recvSize, s, null, 0);
                int n = s.capacity();
                LOG.log(
                        Level.INFO,
                        () -> "poll group " + name + ": a shared receive queue of " + n + " buffers of " + recvSize
                                + " B");
            }
        } catch (IOException | RuntimeException e) {
            if (s != null) {
                s.close();
            }
            c.close();
            throw e;
        }
        this.cq = c;
        this.cqCapacity = c.capacity(); // the device may hold fewer than asked (DiSNI: its max_cqe)
        if (s != null) {
            cqReserved += s.capacity(); // every receive of the group's queues, whose own reservations leave them out
        }
        this.srq = s;
        this.srqBuffers = b;
        this.pool = new RegisteredBufferPool(connectionPd, ProtectionDomain.ACCESS_LOCAL_WRITE);
        this.pd = connectionPd;
        Thread t = new Thread(this, name);
        t.setDaemon(true);
        waker.owner(t);
        thread = t;
        t.start();
    }

    /**
     * Reserves CQ entries for a queue of {@code slots} commands that may have {@code readDepth} RDMA Reads outstanding:
     * its response Sends and Reads, and its receives unless the group's SRQ takes them. The SRQ's receives are reserved
     * once, when it is made, since no more than its capacity can complete before the group polls them. A group not
     * made yet reserves for receives too. Returns the entries reserved (give them back with {@link #release}), or 0 if
     * the CQ cannot take them (try another group).
     */
    synchronized int reserve(int slots, int readDepth) {
        int entries = slots + readDepth + (srq != null ? 0 : slots);
        if (stopping || (cq != null && cqReserved + entries > cqCapacity) || entries > cqEntries) {
            return 0;
        }
        cqReserved += entries;
        queues++;
        return entries;
    }

    /** Gives back a queue's reservation (it closed, or it was never accepted). */
    synchronized void release(int entries) {
        cqReserved -= entries;
        queues--;
    }

    /** Queues reserved on this group: the load {@code RdmaTargetListener} balances. */
    synchronized int load() {
        return queues;
    }

    /**
     * The queue's completions come to it from now on (before the CM accept goes out): found by the tag this returns,
     * which the queue puts in bits 32..47 of every wr_id it posts, or, for a command in an SRQ buffer (wr_id without a
     * tag), by its QP number. Completions are dispatched by wr_id wherever possible, as SPDK does: Soft-RoCE (rxe)
     * was seen reporting another QP's number in flushed completions on a shared CQ.
     */
    synchronized int register(int qpNumber, RdmaTargetQueue queue) {
        int t;
        do {
            nextTag = nextTag == 0xFFFF ? 1 : nextTag + 1;
            t = nextTag;
        } while (byTag.get(t) != null);
        byTag = byTag.with(t, queue);
        byQpNumber = byQpNumber.with(qpNumber, queue);
        return t;
    }

    synchronized void unregister(int qpNumber, int tag) {
        if (tag != 0 && byTag.get(tag) != null) {
            if (byQpNumber.get(qpNumber) == byTag.get(tag)) {
                byQpNumber = byQpNumber.without(qpNumber);
            }
            byTag = byTag.without(tag);
        }
    }

    /** Runs {@code task} on the group's thread (in order) and wakes it; from any thread. */
    void execute(Runnable task) {
        tasks.add(task);
        waker.wake();
    }

    /** Closes every queue, then stops the thread, which frees the CQ, SRQ and buffers. From any thread. */
    void stop() {
        execute(() -> {
            for (RdmaTargetQueue q : byTag.queues()) {
                q.closeNow();
            }
            stopping = true;
        });
        synchronized (this) {
            if (thread == null) {
                stopping = true;
            }
        }
    }

    // ---- for the queues (the group's thread) ----

    CompletionQueue cq() {
        return cq;
    }

    SharedReceiveQueue srq() {
        return srq;
    }

    /** The group's SRQ buffers, or null when the provider has no SRQ. */
    ReceiveBuffers srqBuffers() {
        return srqBuffers;
    }

    RegisteredBufferPool pool() {
        return pool;
    }

    Thread thread() {
        return thread;
    }

    String name() {
        return name;
    }

    // ---- the loop ----

    @Override
    public void run() {
        try {
            while (!stopping) {
                int n = cq.poll(wcs);
                turnNanos = 0;
                for (int i = 0; i < n; i++) {
                    dispatch(wcs[i]);
                }
                int t = runTasks();
                waker.afterTurn(n + t, busyPoll, cq, AWAIT, hasWork);
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "RDMA poll group " + name + " failed; closing its queues", t);
            for (RdmaTargetQueue q : byTag.queues()) {
                q.closeNow();
            }
        }
        stopping = true;
        runTasks(); // tasks that came in late (a joining queue closes itself when the group is stopping)
        if (srq != null) {
            srq.close();
        }
        if (srqBuffers != null) {
            srqBuffers.close();
        }
        cq.close();
        pool.close();
    }

    private void dispatch(WorkCompletion wc) {
        int tag = (int) (wc.wrId >>> RdmaTargetQueue.TAG_SHIFT) & 0xFFFF;
        if (tag != 0) {
            RdmaTargetQueue q = byTag.get(tag);
            if (q != null) {
                q.onCompletion(wc);
            }
            return; // else a late completion of a closed queue: nothing of the group's is in it
        }
        // A receive in the SRQ: its QP says whose command it is (only a successful one: an error completion's QP
        // number is not trusted, and the SRQ is never flushed).
        RdmaTargetQueue q = wc.ok() ? byQpNumber.get(wc.qpNumber) : null;
        if (q != null) {
            q.onCompletion(wc);
        } else if (srqBuffers != null) {
            // A command for a queue that has closed, or a failed receive: the buffer goes back to the SRQ.
            srqBuffers.taken();
            srqBuffers.post((int) (wc.wrId & 0xFFFF));
        }
    }

    /**
     * The arrival time of a command received in this loop turn: the clock is read once per turn, by its first
     * command, for all the commands that one CQ poll brought (the latency statistics; group thread only).
     */
    long arrivalNanos() {
        if (turnNanos == 0) {
            turnNanos = System.nanoTime();
        }
        return turnNanos;
    }

    /** Runs the tasks queued so far (a queue whose completion came before its start task runs them early too). */
    int runTasks() {
        int n = 0;
        Runnable r;
        while ((r = tasks.poll()) != null) {
            n++;
            try {
                r.run();
            } catch (Throwable t) {
                LOG.log(Level.ERROR, "task on RDMA poll group " + name + " failed", t);
            }
        }
        return n;
    }

    boolean stopping() {
        return stopping;
    }

    @Override
    public String toString() {
        return "RdmaPollGroup[" + name + ", " + byTag.size() + " queues]";
    }
}

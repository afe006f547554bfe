package io.nvmeof.transport.rdma;

import io.nvmeof.core.host.HostDataCheck;
import io.nvmeof.core.host.SubmissionList;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import io.nvmeof.transport.rdma.verbs.RdmaRejectedException;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The host side of one NVMe/RDMA queue (one RC QP, nvmeof-protocol.md §6): the {@link HostQueue} an initiator uses.
 *
 * <ul>
 *   <li>Connect (nvmeof-protocol.md §6.1): CM connect with the 32-byte request private data (RECFMT 0, QID, HRQSIZE = queue size,
 *       HSQSIZE = queue size − 1, CNTLID), responder_resources {@value #RESPONDER_RESOURCES} so the target can RDMA
 *       Read; queue-size receive buffers of 16 bytes (one CQE each) posted before the connect goes out. A reject is an
 *       {@link NvmeRdmaRejectedException} with the STS.</li>
 *   <li>Registered once at connect: the receive region, a send region of one capsule per CID (64 B + up to
 *       {@value #MAX_IN_CAPSULE} bytes in-capsule; both {@link RdmaHostCapsules}), and a pool of data buffers in size classes up to 1 MiB
 *       (LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE). No I/O registers memory.</li>
 *   <li>Data (nvmeof-protocol.md §6.4): in the capsule, or a keyed SGL naming a caller buffer from
 *       {@link #allocateBuffer} (zero copy) or a pool buffer (one copy): {@link RdmaHostData}.</li>
 *   <li>Responses: a received message shorter than 16 bytes, a CID not in flight, or a remote invalidation of a key
 *       that command did not offer for invalidation is fatal to the queue (as on Linux, nvmeof-protocol.md §6.2, §6.4).</li>
 * </ul>
 *
 * <p>Threads: one thread per queue polls the CQ and posts every work request; every {@link HostCommand} callback and the
 * close listener run on it. {@link #submit} works from any thread without a lock or an allocation: the data description
 * is checked ({@link HostDataCheck}), the CID is claimed in the queue's {@link SubmissionList}; on the queue thread the
 * capsule is posted at once, from another thread the command is pushed on the list and, when the list was empty, a
 * sleeping queue thread is woken ({@link QueueThreadWaker}). Atomic operations per command on this path: the claim
 * (1); from another thread also the push (1), a share of the drain's getAndSet and, when the thread sleeps, the
 * wake-up. The release of the CID on the response is a plain release store. Idle: the transports' spin window, then a
 * sleep in the CQ while a command is outstanding, or a park off the CQ while none is (nothing can complete then).
 */
public final class RdmaHostQueue implements HostQueue, Runnable {
    private static final Logger LOG = System.getLogger(RdmaHostQueue.class.getName());

    /** RDMA Reads the host lets the target have outstanding against it (nvmeof-protocol.md §6.1: at least 1). */
    public static final int RESPONDER_RESOURCES = 16;
    /** In-capsule bytes a capsule slot can carry (the controller's IOCCSZ may allow less). */
    public static final int MAX_IN_CAPSULE = 8192;

    /** wr_id kinds: a receive (bits 0..15: its index), a capsule Send (bits 0..15: the CID). */
    static final long KIND_RECV = 0L;

    static final long KIND_SEND = 1L << 62;
    private static final Duration AWAIT = Duration.ofMillis(10);
    /**
     * The CQ wait of a queue with a command outstanding that has had nothing to do for {@link #QUIET} (an admin queue
     * holding only an Asynchronous Event Request): fewer wake-ups where the CQ is polled in slices (the software
     * RNIC); over DiSNI, whose await a submit cannot interrupt, a submit to such a queue may wait this long.
     */
    private static final Duration QUIET_AWAIT = Duration.ofMillis(100);

    private static final long QUIET = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * How long the thread of a queue with no command outstanding parks at a time: nothing can complete then, so it
     * does not watch the CQ; a submit, a task, a close or the CM's disconnect wakes it.
     */
    private static final Duration IDLE_PARK = Duration.ofSeconds(1);

    private final int qid;
    private final int queueSize;
    private final boolean busyPoll;
    private final String peer;
    private RdmaConnection conn;
    private QueuePair qp;
    private CompletionQueue cq;
    private ProtectionDomain pd;
    private RdmaHostCapsules capsules;
    private RdmaHostData data;
    private final WorkCompletion[] wcs = new WorkCompletion[32];

    /** Which CIDs are claimed, and the commands other threads queued for this queue's thread. */
    private final SubmissionList commands;

    private final SubmissionList.Sender sender = this::send;

    // Per CID, queue thread only.
    private final HostCommand[] inFlight;
    /** Commands posted and not yet answered (queue thread only): with none, the idle thread parks off the CQ. */
    private int outstanding;

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final QueueThreadWaker waker = new QueueThreadWaker();
    private final java.util.function.BooleanSupplier hasWork = this::hasWork;
    private volatile int maxInCapsuleData;
    private volatile boolean closeRequested;
    private volatile boolean disconnected;
    private volatile boolean terminated;
    private Throwable fatal;
    private final AtomicReference<Consumer<Throwable>> closeListener = new AtomicReference<>();
    private volatile boolean listenerCalled;
    private Throwable listenerCause;
    private final CountDownLatch done = new CountDownLatch(1);
    private Thread thread;

    private RdmaHostQueue(HostQueueOptions options) {
        this.qid = options.qid();
        this.queueSize = options.queueSize();
        this.busyPoll = options.ioMode().busyPoll();
        this.peer = options.address().toString();
        this.commands = new SubmissionList(qid, queueSize);
        this.inFlight = new HostCommand[queueSize];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    /** Connects one queue (blocks up to the connect timeout). */
    static RdmaHostQueue connect(RdmaProvider provider, HostQueueOptions options) throws IOException {
        if (options.queueSize() > 65535) {
            throw new IllegalArgumentException("an NVMe/RDMA queue has at most 65535 entries (HRQSIZE is 16 bits)");
        }
        RdmaHostQueue q = new RdmaHostQueue(options);
        ByteBuffer priv = ByteBuffer.allocate(RdmaCmRequest.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        RdmaCmRequest req = new RdmaCmRequest();
        req.wrap(priv, 0);
        req.set(options.qid(), options.queueSize(), options.queueSize() - 1, options.cntlid());
        int n = options.queueSize();
        QueuePairAttributes attrs = new QueuePairAttributes(n + 1, n, 1, 1, 2 * n + 1, RESPONDER_RESOURCES, 0);
        RdmaConnection conn;
        try {
            conn = provider.connect(options.address(), attrs, priv, q::setup, options.connectTimeout());
        } catch (NvmeRdmaRejectedException e) {
            q.freeRegions();
            throw e;
        } catch (RdmaRejectedException e) {
            q.freeRegions();
            throw NvmeRdmaRejectedException.of(
                    e, "controller at " + options.address() + " rejected NVMe/RDMA queue " + options.qid());
        } catch (IOException | RuntimeException e) {
            q.freeRegions();
            throw e instanceof IOException
                    ? (IOException) e
                    : new IOException(
                            "cannot connect NVMe/RDMA queue " + options.qid() + " to " + options.address() + ": "
                                    + e.getMessage(),
                            e);
        }
        q.conn = conn;
        q.start();
        return q;
    }

    /** Before the connect request goes out: register everything and post the receives (nvmeof-protocol.md §6.2). */
    private void setup(RdmaConnection c) {
        this.conn = c;
        this.qp = c.queuePair();
        this.cq = c.completionQueue();
        this.pd = c.protectionDomain();
        try {
            capsules = new RdmaHostCapsules(qp, queueSize);
            capsules.register(pd);
            data = new RdmaHostData(pd, queueSize);
            capsules.postReceives();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void start() {
        conn.onDisconnect(() -> {
            disconnected = true;
            waker.wake();
        });
        thread = new Thread(this, "nvme-rdma-host-q" + qid + "-" + conn.remoteAddress());
        thread.setDaemon(true);
        waker.owner(thread);
        thread.start();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Zero-copy buffers

    /**
     * A direct, little-endian buffer of {@code size} bytes registered for remote access in this queue's protection
     * domain: a command on <em>any</em> host queue of this process in the same protection domain whose
     * {@code dataBuffer()} is this buffer, or a slice or duplicate of it, moves its data straight between it and the
     * controller (no copy on the host), except host→controller data small enough to go in the capsule. Registration is
     * slow: allocate once and reuse. Valid until {@link #freeBuffer} or this queue closes. Any thread.
     */
    @Override
    public ByteBuffer allocateBuffer(int size) throws IOException {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        if (terminated) {
            throw new IllegalStateException("queue " + qid + " is closed");
        }
        MemoryRegion mr = pd.register(
                pd.allocate(size),
                ProtectionDomain.ACCESS_LOCAL_WRITE
                        | ProtectionDomain.ACCESS_REMOTE_READ
                        | ProtectionDomain.ACCESS_REMOTE_WRITE);
        ByteBuffer b = mr.buffer().order(ByteOrder.LITTLE_ENDIAN);
        HostBuffers.add(new HostBuffers.Entry(b, HostBuffers.address(b), size, mr, pd, this));
        if (terminated) { // closed meanwhile: terminate() may have missed it
            HostBuffers.removeAll(this);
            throw new IllegalStateException("queue " + qid + " is closed");
        }
        return b;
    }

    /** Deregisters a buffer from {@link #allocateBuffer}; no command in flight may use it. */
    public void freeBuffer(ByteBuffer buffer) {
        if (!HostBuffers.remove(buffer, this)) {
            throw new IllegalArgumentException("not a buffer of this queue");
        }
    }

    /** Data bytes copied through the pool or into the capsule, and moved straight from/to registered ones. */
    long copiedBytes() {
        return data.copiedBytes();
    }

    long directBytes() {
        return data.directBytes();
    }

    int poolGrowths() {
        return data.poolGrowths();
    }

    // ---------------------------------------------------------------------------------------------------------
    // HostQueue

    @Override
    public int qid() {
        return qid;
    }

    @Override
    public void maxInCapsuleData(int bytes) {
        this.maxInCapsuleData = Math.max(0, Math.min(bytes, MAX_IN_CAPSULE));
    }

    @Override
    public void submit(HostCommand command) {
        if (terminated || closeRequested) {
            throw new IllegalStateException("queue " + qid + " to " + peer + " is closed");
        }
        HostDataCheck.check(command, RdmaTransport.MAX_TRANSFER);
        if (!commands.claim(command)) {
            return; // a close raced with the claim and has failed the command
        }
        if (Thread.currentThread() == thread) {
            commands.drain(sender); // anything queued before it goes first
            try {
                send(command);
            } catch (RuntimeException e) {
                commands.release(command.command().cid());
                throw e;
            }
        } else if (commands.offer(command.command().cid())) {
            waker.wake();
        }
    }

    @Override
    public void onClose(Consumer<Throwable> listener) {
        if (!closeListener.compareAndSet(null, listener)) {
            throw new IllegalStateException("onClose listener already set");
        }
        if (terminated) {
            callListener();
        }
    }

    private void callListener() {
        Consumer<Throwable> l = closeListener.get();
        if (l == null) {
            return;
        }
        synchronized (this) {
            if (listenerCalled || !terminated) {
                return;
            }
            listenerCalled = true;
        }
        try {
            l.accept(listenerCause);
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "close listener of RDMA queue " + qid + " failed", t);
        }
    }

    @Override
    public void execute(Runnable task) {
        if (terminated) {
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
    public boolean isOpen() {
        return !terminated && !closeRequested && !disconnected;
    }

    @Override
    public void close() {
        closeRequested = true;
        waker.wake();
        if (Thread.currentThread() != thread) {
            try {
                done.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // The queue thread

    @Override
    public void run() {
        try {
            while (fatal == null && !closeRequested && !disconnected) {
                int n = cq.poll(wcs);
                for (int i = 0; i < n && fatal == null; i++) {
                    handle(wcs[i]);
                }
                int d = fatal == null ? drain() : 0;
                Runnable task;
                while (fatal == null && (task = tasks.poll()) != null) {
                    d++;
                    try {
                        task.run();
                    } catch (Throwable t) {
                        LOG.log(Level.ERROR, "task on RDMA host queue " + qid + " failed", t);
                    }
                }
                if (outstanding > 0) {
                    boolean quiet = n + d == 0 && waker.idleNanos(System.nanoTime()) >= QUIET;
                    waker.afterTurn(n + d, busyPoll, cq, quiet ? QUIET_AWAIT : AWAIT, hasWork);
                } else {
                    waker.afterTurn(n + d, busyPoll, null, IDLE_PARK, hasWork);
                }
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "RDMA host queue " + qid + " to " + peer + " failed", t);
            if (fatal == null) {
                fatal = t;
            }
        }
        terminate();
    }

    private boolean hasWork() {
        return commands.hasQueued() || !tasks.isEmpty() || closeRequested || disconnected;
    }

    private int drain() {
        return commands.drain(sender);
    }

    /**
     * Builds the capsule of a claimed command in its CID's send slot and posts the Send (nvmeof-protocol.md §6.3,
     * §6.4). After a fault nothing more is posted: the close fails the command.
     */
    private void send(HostCommand command) {
        if (fatal != null) {
            return;
        }
        int cid = command.command().cid();
        int inCapsule;
        try {
            inCapsule = capsules.build(command, data, qid > 0 ? maxInCapsuleData : 0);
        } catch (IOException e) {
            fail(cid, command, e);
            return;
        }
        inFlight[cid] = command;
        outstanding++;
        if (!capsules.postSend(cid, inCapsule)) {
            fault(new IOException("RDMA queue " + qid + " to " + peer + ": cannot post a Send (send queue full)"));
        }
    }

    private void fail(int cid, HostCommand command, Throwable cause) {
        commands.release(cid);
        try {
            command.onTransportError(cause);
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "onTransportError failed", t);
        }
    }

    private void handle(WorkCompletion wc) {
        long kind = wc.wrId & (3L << 62);
        int index = (int) (wc.wrId & 0xFFFF);
        if (!wc.ok()) {
            if (wc.status == WorkCompletion.Status.WR_FLUSH_ERR) {
                // Flushed: the QP is in ERROR. With no error completion of ours before it, the controller
                // disconnected and the flush overtook the CM's disconnect event: report that, not a work error.
                disconnected = true;
                return;
            }
            fault(new IOException("RDMA queue " + qid + " to " + peer + ": work completion error " + wc.status + " on "
                    + (kind == KIND_RECV ? "a receive" : "a Send") + " (index " + index + ")"));
            return;
        }
        if (kind == KIND_RECV) {
            onResponse(index, wc);
        }
    }

    private void onResponse(int index, WorkCompletion wc) {
        if (wc.byteLength < CompletionQueueEntry.LENGTH) {
            fault(new NvmeRdmaProtocolException("controller at " + peer + " sent a " + wc.byteLength
                    + "-byte response on queue " + qid + " (a CQE is 16 bytes)"));
            return;
        }
        CompletionQueueEntry cqe = capsules.response(index);
        int cid = cqe.cid();
        HostCommand command = cid < queueSize ? inFlight[cid] : null;
        if (command == null) {
            fault(new NvmeRdmaProtocolException("controller at " + peer + " answered CID " + cid + " on queue " + qid
                    + ", which is not in flight"));
            return;
        }
        int offered = data.offeredKey(cid);
        if (wc.withInvalidate && (offered == 0 || wc.invalidatedRkey != offered)) {
            fault(new NvmeRdmaProtocolException("controller at " + peer + " invalidated rkey 0x"
                    + Integer.toHexString(wc.invalidatedRkey) + " answering CID " + cid
                    + ", which offered none for invalidation (bogus remote invalidation)"));
            return;
        }
        data.complete(cid, command);
        inFlight[cid] = null;
        outstanding--;
        commands.release(cid);
        try {
            command.onResponse(cqe);
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "onResponse of CID " + cid + " on RDMA queue " + qid + " failed", t);
        }
        if (!capsules.postReceive(index)) {
            fault(new IOException("RDMA queue " + qid + ": cannot re-post a receive"));
        }
    }

    private void fault(Throwable cause) {
        if (fatal == null) {
            fatal = cause;
            LOG.log(Level.WARNING, cause.getMessage() + "; closing the queue");
        }
    }

    /** Closes the QP first (no more DMA into callers' buffers), then fails every command once, then the listener. */
    private void terminate() {
        Throwable cause = fatal;
        if (cause == null && disconnected && !closeRequested) {
            cause = new IOException("controller at " + peer + " disconnected RDMA queue " + qid);
        }
        // The cause first, then the volatile flag: an onClose on another thread that sees terminated also sees it.
        listenerCause = cause;
        terminated = true;
        Throwable forCommands = cause != null ? cause : new IOException("queue " + qid + " to " + peer + " closed");
        try {
            conn.close();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "closing the connection failed: " + e);
        }
        java.util.Arrays.fill(inFlight, null);
        commands.close(forCommands);
        tasks.clear();
        freeRegions();
        HostBuffers.removeAll(this);
        done.countDown();
        callListener();
    }

    private void freeRegions() {
        if (data != null) {
            data.close();
        }
        if (capsules != null) {
            capsules.close();
        }
    }

    @Override
    public String toString() {
        return "RdmaHostQueue[qid=" + qid + " " + peer + "]";
    }
}

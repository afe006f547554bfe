package io.nvmeof.initiator;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One reusable command of a {@link CommandQueue}; its index is its CID (nvmeof-protocol.md §1.1). It owns a 64-byte SQE and remembers the
 * data buffer, the deadline and where the completion goes: an {@link IoCallback} with an attachment (I/O, allocation
 * free on success) or a future of the raw {@link Completion} (admin and fabrics commands, which check statuses
 * themselves).
 *
 * <p>State, advanced only by compare-and-set so that a response, a transport error, a timeout and the controller's
 * recovery race safely:
 * <pre>
 *   FREE ─acquire─► PREPARING ─submit─► IN_FLIGHT ─response / transport error─► DONE ─callback─► FREE
 *                                           ├─deadline passed─► TIMED_OUT ─late response / queue closed─► FREE
 *   (I/O commands of a controller that reconnects, {@link #retriable()}:)
 *                                           ├─deadline passed─► EXPIRED ─response─► DONE
 *                                           │                      └─queue torn down─► PARKED
 *                                           ├─transport error, or submitted while reconnecting─► PARKED
 *                                           └─error status without DNR─► IN_FLIGHT again, or RETRY_WAIT (CRD delay)
 *   PARKED ─queue live again─► IN_FLIGHT (the same CID, SQE and buffer: a retry)
 *   PARKED ─fast_io_fail_tmo / ctrl_loss_tmo / close─► DONE
 *   RETRY_WAIT ─its time (timer scan)─► IN_FLIGHT
 * </pre>
 * A retry allocates nothing: the slot keeps everything it needs. At most {@link #MAX_RETRIES} retries per command, as
 * the Linux host's nvme_max_retries (RetryRules).
 */
final class CommandSlot implements HostCommand {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");
    static final int FREE = 0;
    static final int PREPARING = 1;
    static final int IN_FLIGHT = 2;
    static final int DONE = 3;
    static final int TIMED_OUT = 4;
    static final int EXPIRED = 5;
    static final int PARKED = 6;
    static final int RETRY_WAIT = 7;
    /** Retries of one command: the Linux host's nvme_max_retries default. */
    static final int MAX_RETRIES = 5;

    private static final AtomicIntegerFieldUpdater<CommandSlot> STATE =
            AtomicIntegerFieldUpdater.newUpdater(CommandSlot.class, "state");
    private static final VarHandle DEADLINE;

    static {
        try {
            DEADLINE = MethodHandles.lookup().findVarHandle(CommandSlot.class, "deadline", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@link #deadline}: the command has no timeout. */
    private static final long NO_DEADLINE = 0;
    /** {@link #deadline}: sent, not yet seen by the timeout scan, which stamps it (scan time + timeout). */
    private static final long UNSTAMPED = Long.MIN_VALUE;

    /** A completion as admin code sees it (nvmeof-protocol.md §1.2). */
    record Completion(int dw0, int dw1, int status) {
        long result64() {
            return (dw0 & 0xFFFFFFFFL) | ((long) dw1 << 32);
        }

        boolean ok() {
            return Status.isSuccess(status);
        }
    }

    final CommandQueue queue;
    final int index;
    private final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    private volatile int state = FREE;
    private ByteBuffer data;
    private int dataOffset;
    private int dataLength;
    /**
     * When the command times out (System.nanoTime), {@link #NO_DEADLINE} or {@link #UNSTAMPED}. Stamped by the timeout
     * scan, not at dispatch, so that sending a command reads no clock: the first scan after the dispatch sets scan
     * time + timeout, and a command therefore times out between one timeout and one timeout plus two scan ticks
     * (timeout/20 each, ControllerTimer) after it was sent.
     */
    private long deadline;

    private long timeoutNanos;
    private IoCallback callback;
    private Object attachment;
    private CompletableFuture<Completion> future;
    /** Retries so far (transport errors, timeouts and statuses without DNR). */
    private int retries;
    /** When a RETRY_WAIT command goes out again (System.nanoTime). */
    private long retryAt;
    /** The connection the command last went out on (to tell a stale error from a current one). */
    private HostQueue sentOn;
    /** Set for the controller's own commands during a reconnect: they go on this connection past the gate. */
    private HostQueue via;

    /** False for {@link CommandQueue#connectSlot}: its CID is not the free list's. */
    private final boolean pooled;

    CommandSlot(CommandQueue queue, int index) {
        this(queue, index, true);
    }

    CommandSlot(CommandQueue queue, int index, boolean pooled) {
        this.queue = queue;
        this.index = index;
        this.pooled = pooled;
        sqe.wrap(ByteBuffer.allocateDirect(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN), 0);
    }

    /** Clears the SQE and sets FLAGS 0x40 (SGL, required on fabrics, nvmeof-protocol.md §1.1) and CID; the caller fills the rest. */
    SubmissionQueueEntry prepare() {
        // Release stores (no fence) for the plain state changes of the I/O path: the transport's hand-off (same thread,
        // or the compare-and-set of its SubmissionList push) and the free list's CAS order them; the timer thread only
        // needs them eventually.
        STATE.lazySet(this, PREPARING);
        sqe.clear();
        sqe.flags(SubmissionQueueEntry.FLAGS_SGL).cid(index);
        return sqe;
    }

    /** Sends the prepared command; the outcome goes to {@code cb} with {@code att}. */
    void submit(ByteBuffer buf, int off, int len, long timeout, IoCallback cb, Object att) {
        this.callback = cb;
        this.attachment = att;
        this.future = null;
        this.retries = 0;
        send(buf, off, len, timeout);
    }

    /** Sends the prepared command; the raw completion (whatever its status) goes to the returned future. */
    CompletableFuture<Completion> submit(ByteBuffer buf, int off, int len, long timeout) {
        CompletableFuture<Completion> f = new CompletableFuture<>();
        this.callback = null;
        this.attachment = null;
        this.future = f;
        send(buf, off, len, timeout);
        return f;
    }

    private void release() {
        if (pooled) {
            queue.release(this);
        }
    }

    /** Sends this command on {@code connection} even while the queue is gated (the recovery's own commands). */
    CommandSlot via(HostQueue connection) {
        this.via = connection;
        return this;
    }

    private void send(ByteBuffer buf, int off, int len, long timeout) {
        this.data = len == 0 ? null : buf;
        this.dataOffset = off;
        this.dataLength = len;
        this.timeoutNanos = timeout;
        STATE.lazySet(this, IN_FLIGHT);
        dispatch();
    }

    /**
     * Sends the command (state IN_FLIGHT) on the queue's live connection: the first time, or again as a retry. While
     * the controller reconnects (no live connection) a retriable command parks and the others fail.
     */
    void dispatch() {
        DEADLINE.setRelease(this, timeoutNanos <= 0 ? NO_DEADLINE : UNSTAMPED);
        HostQueue v = via;
        HostQueue t = v != null ? v : queue.live;
        if (t == null) {
            if (retriable() && STATE.compareAndSet(this, IN_FLIGHT, PARKED)) {
                afterPark(null);
            } else if (STATE.compareAndSet(this, IN_FLIGHT, DONE)) {
                finish(0, 0, 0, queue.controller.recovery().notLiveError(describe()));
            }
            return;
        }
        sentOn = t;
        try {
            t.submit(this);
        } catch (RuntimeException e) {
            // IllegalStateException: the connection is closed and the command was not taken (HostQueue.submit).
            if (v == null && retriable() && STATE.compareAndSet(this, IN_FLIGHT, PARKED)) {
                queue.controller
                        .recovery()
                        .connectionLost(
                                queue,
                                t,
                                new NvmeTransportException(queue.name() + " is closed: " + e.getMessage(), e));
                afterPark(t);
            } else if (STATE.compareAndSet(this, IN_FLIGHT, DONE)) {
                NvmeException cause = queue.closedCause;
                finish(
                        0,
                        0,
                        0,
                        cause != null
                                ? cause
                                : new NvmeTransportException(queue.name() + " is closed: " + describe(), e));
            }
        }
    }

    /**
     * Whether this command is retried across a reconnect: an I/O command (callback form) of a controller that
     * reconnects, not one of the controller's own commands.
     */
    boolean retriable() {
        return future == null && callback != null && via == null && queue.qid != 0 && queue.controller.reconnects();
    }

    /**
     * After parking: the other side of the hand-off with the recovery ({@link CommandQueue#goLive}, {@link
     * #failParked}). If the queue went live on another connection than {@code failedOn} meanwhile, go out there; if the
     * controller was lost (or fast_io_fail_tmo passed), fail. Whoever moves the state out of PARKED first does it.
     */
    private void afterPark(HostQueue failedOn) {
        NvmeException dead = queue.controller.recovery().parkedFailure();
        if (dead != null) {
            failParked(dead);
            return;
        }
        HostQueue t = queue.live;
        if (t != null && t != failedOn && STATE.compareAndSet(this, PARKED, IN_FLIGHT)) {
            retries++;
            dispatch();
        }
    }

    /** Sends a parked command again (the queue is live again); false if it was not parked. */
    boolean resumeParked() {
        if (state == PARKED && STATE.compareAndSet(this, PARKED, IN_FLIGHT)) {
            retries++;
            dispatch();
            return true;
        }
        return false;
    }

    /** Fails a parked (or retry-waiting) command with {@code cause}; false if it was neither. */
    boolean failParked(NvmeException cause) {
        int s = state;
        if ((s == PARKED || s == RETRY_WAIT) && STATE.compareAndSet(this, s, DONE)) {
            String what = describe() + " did not complete: " + cause.getMessage();
            finish(
                    0,
                    0,
                    0,
                    cause instanceof NvmeFastIoFailException
                            ? new NvmeFastIoFailException(what, cause)
                            : cause instanceof NvmeControllerLostException
                                    ? new NvmeControllerLostException(what, cause)
                                    : new NvmeTransportException(what, cause));
            return true;
        }
        return false;
    }

    /** Whether the slot is free (the recovery checks its spare Connect slot before reusing it). */
    boolean isFree() {
        return state == FREE;
    }

    /** The namespace of this command if it is parked or waiting to be retried, else 0. */
    int parkedNsid() {
        int s = state;
        return s == PARKED || s == RETRY_WAIT ? sqe.nsid() : 0;
    }

    // ---- HostCommand ----

    @Override
    public SubmissionQueueEntry command() {
        return sqe;
    }

    @Override
    public ByteBuffer dataBuffer() {
        return data;
    }

    @Override
    public int dataOffset() {
        return dataOffset;
    }

    @Override
    public int dataLength() {
        return dataLength;
    }

    @Override
    public void onResponse(CompletionQueueEntry response) {
        if (STATE.compareAndSet(this, IN_FLIGHT, DONE) || STATE.compareAndSet(this, EXPIRED, DONE)) {
            int status = response.status();
            NvmeException error = null;
            if (future == null && !Status.isSuccess(status)) {
                if (retriable() && RetryRules.mayRetry(status, retries)) {
                    retryAfter(RetryRules.delayNanos(status, queue.controller.commandRetryDelays()));
                    return;
                }
                error = NvmeStatusException.of(status, sqe.opcode(), describe());
            }
            finish(response.dw0(), response.dw1(), status, error);
        } else if (STATE.compareAndSet(this, TIMED_OUT, FREE)) {
            release(); // the late answer of a timed-out command: only now may its CID be reused
        }
    }

    @Override
    public void onTransportError(Throwable cause) {
        if (retries < MAX_RETRIES
                && retriable()
                && (STATE.compareAndSet(this, IN_FLIGHT, PARKED) || STATE.compareAndSet(this, EXPIRED, PARKED))) {
            // Its outcome is unknown: it goes again once the controller is back (the Linux host requeues it too).
            afterPark(sentOn);
        } else if (STATE.compareAndSet(this, IN_FLIGHT, DONE)) {
            finish(0, 0, 0, transportError(cause));
        } else if (STATE.compareAndSet(this, EXPIRED, DONE)) {
            finish(
                    0,
                    0,
                    0,
                    new NvmeTimeoutException(describe() + " on " + queue.name() + " got no answer within "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms, " + retries + " retries"));
        } else if (STATE.compareAndSet(this, TIMED_OUT, FREE)) {
            release();
        }
    }

    /** An error status the retry rules retry: at once, or after the Command Retry Delay on the timer's scan. */
    private void retryAfter(long delayNanos) {
        retries++;
        if (delayNanos <= 0) {
            STATE.lazySet(this, IN_FLIGHT);
            dispatch();
        } else {
            retryAt = System.nanoTime() + delayNanos;
            STATE.set(this, RETRY_WAIT);
        }
    }

    private NvmeException transportError(Throwable cause) {
        NvmeException reason = queue.controller.teardown().failure();
        if (reason == null) {
            reason = queue.closedCause;
        }
        String why = reason != null
                ? reason.getMessage()
                : cause != null ? String.valueOf(cause.getMessage()) : "queue closed";
        return new NvmeTransportException(
                describe() + " on " + queue.name() + " did not complete: " + why, cause != null ? cause : reason);
    }

    /** Called by the timer thread. */
    void checkTimeout(long now) {
        int s = state;
        if (s == RETRY_WAIT) {
            if (now - retryAt >= 0 && STATE.compareAndSet(this, RETRY_WAIT, IN_FLIGHT)) {
                dispatch();
            }
            return;
        }
        if (s != IN_FLIGHT) {
            return;
        }
        long d = (long) DEADLINE.getAcquire(this);
        if (d == UNSTAMPED) {
            DEADLINE.compareAndSet(this, UNSTAMPED, now + timeoutNanos);
            return;
        }
        if (d == NO_DEADLINE || now - d < 0) {
            return;
        }
        if (retriable() && retries < MAX_RETRIES) {
            // Not told yet: the controller reconnects (Linux's timeout handler starts error recovery) and the command
            // is retried, unless its answer comes first.
            if (STATE.compareAndSet(this, IN_FLIGHT, EXPIRED)) {
                queue.controller
                        .recovery()
                        .connectionLost(
                                queue,
                                sentOn,
                                new NvmeTimeoutException(describe() + " on " + queue.name() + " got no answer within "
                                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
            }
            return;
        }
        if (STATE.compareAndSet(this, IN_FLIGHT, TIMED_OUT)) {
            NvmeTimeoutException e = new NvmeTimeoutException(describe() + " on " + queue.name()
                    + " got no answer within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
            deliver(0, 0, 0, e);
            // The slot stays TIMED_OUT (its CID unusable) until an answer or the queue's close gives it back.
            queue.controller.recovery().commandTimedOut(queue, sentOn, e);
        }
    }

    /**
     * Frees the slot, then delivers the outcome: a callback may issue its next command at once, even on a queue whose
     * every other slot is in flight (the transport's CID is already free too, see {@code HostCommand.onResponse}).
     */
    private void finish(int dw0, int dw1, int status, NvmeException error) {
        IoCallback cb = callback;
        Object att = attachment;
        CompletableFuture<Completion> f = future;
        callback = null;
        attachment = null;
        future = null;
        data = null;
        via = null;
        STATE.lazySet(this, FREE);
        release();
        callBack(cb, att, f, dw0, dw1, status, error);
    }

    private void deliver(int dw0, int dw1, int status, NvmeException error) {
        IoCallback cb = callback;
        Object att = attachment;
        CompletableFuture<Completion> f = future;
        callback = null;
        attachment = null;
        future = null;
        data = null;
        via = null;
        callBack(cb, att, f, dw0, dw1, status, error);
    }

    private static void callBack(
            IoCallback cb,
            Object att,
            CompletableFuture<Completion> f,
            int dw0,
            int dw1,
            int status,
            NvmeException error) {
        try {
            if (f != null) {
                if (error != null) {
                    f.completeExceptionally(error);
                } else {
                    f.complete(new Completion(dw0, dw1, status));
                }
            } else if (cb != null) {
                if (error == null) {
                    cb.completed(att);
                } else {
                    cb.failed(error, att);
                }
            }
        } catch (Throwable t) {
            LOG.log(Level.WARNING, "an I/O callback threw; the initiator ignores it", t);
        }
    }

    /** E.g. "Read (opc 0x02) nsid 1 slba 100 nlb 8" or "Connect (fabrics 0x01) qid 3". Cold path. */
    String describe() {
        int opc = sqe.opcode();
        if (opc == FabricsCommandType.OPCODE) {
            FabricsCommandType t = FabricsCommandType.of(sqe.fctype());
            String name = t == null ? "Fabrics" : words(t.name());
            String s = String.format("%s (fabrics 0x%02x)", name, sqe.fctype());
            if (t == FabricsCommandType.CONNECT) {
                s += " qid " + sqe.connectQid();
            } else if (t == FabricsCommandType.PROPERTY_GET || t == FabricsCommandType.PROPERTY_SET) {
                s += String.format(" offset 0x%x", sqe.propertyOffset());
            }
            return s;
        }
        if (queue.qid == 0) {
            AdminOpcode a = AdminOpcode.of(opc);
            String s = String.format("%s (admin opc 0x%02x)", a == null ? "Admin command" : words(a.name()), opc);
            if (a == AdminOpcode.IDENTIFY) {
                s += String.format(" cns 0x%02x nsid %d", sqe.cdw10() & 0xFF, sqe.nsid());
            } else if (a == AdminOpcode.GET_LOG_PAGE
                    || a == AdminOpcode.SET_FEATURES
                    || a == AdminOpcode.GET_FEATURES) {
                s += String.format(" %s 0x%02x", a == AdminOpcode.GET_LOG_PAGE ? "lid" : "fid", sqe.cdw10() & 0xFF);
            }
            return s;
        }
        NvmOpcode o = NvmOpcode.of(opc);
        String s =
                String.format("%s (opc 0x%02x) nsid %d", o == null ? "I/O command" : words(o.name()), opc, sqe.nsid());
        if (o == NvmOpcode.READ || o == NvmOpcode.WRITE || o == NvmOpcode.COMPARE || o == NvmOpcode.WRITE_ZEROES) {
            s += " slba " + sqe.slba() + " nlb " + (sqe.nlb() + 1);
        } else if (o == NvmOpcode.DATASET_MANAGEMENT) {
            s += " ranges " + ((sqe.cdw10() & 0xFF) + 1);
        }
        return s;
    }

    private static String words(String enumName) {
        StringBuilder b = new StringBuilder();
        for (String w : enumName.split("_")) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(w.charAt(0)).append(w.substring(1).toLowerCase(java.util.Locale.ROOT));
        }
        return b.toString().replace("Io ", "I/O ").replace("Sq", "SQ").replace("Cq", "CQ");
    }
}

package io.nvmeof.initiator;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.lang.System.Logger.Level;
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
 * <p>State, advanced only by compare-and-set so that a response, a transport error and a timeout race safely:
 * <pre>
 *   FREE ─acquire─► PREPARING ─submit─► IN_FLIGHT ─response / transport error─► DONE ─callback─► FREE
 *                                           └─deadline passed─► TIMED_OUT ─late response / queue closed─► FREE
 * </pre>
 */
final class CommandSlot implements HostCommand {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");
    static final int FREE = 0;
    static final int PREPARING = 1;
    static final int IN_FLIGHT = 2;
    static final int DONE = 3;
    static final int TIMED_OUT = 4;
    private static final AtomicIntegerFieldUpdater<CommandSlot> STATE =
            AtomicIntegerFieldUpdater.newUpdater(CommandSlot.class, "state");

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
    private long deadline;
    private long timeoutNanos;
    private IoCallback callback;
    private Object attachment;
    private CompletableFuture<Completion> future;

    CommandSlot(CommandQueue queue, int index) {
        this.queue = queue;
        this.index = index;
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

    private void send(ByteBuffer buf, int off, int len, long timeout) {
        this.data = len == 0 ? null : buf;
        this.dataOffset = off;
        this.dataLength = len;
        this.timeoutNanos = timeout;
        this.deadline = timeout <= 0 ? 0 : System.nanoTime() + timeout;
        STATE.lazySet(this, IN_FLIGHT);
        try {
            queue.transport.submit(this);
        } catch (RuntimeException e) {
            // IllegalStateException: the queue is closed and the command was not taken (HostQueue.submit).
            if (STATE.compareAndSet(this, IN_FLIGHT, DONE)) {
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
        if (STATE.compareAndSet(this, IN_FLIGHT, DONE)) {
            int status = response.status();
            NvmeException error = null;
            if (future == null && !Status.isSuccess(status)) {
                error = NvmeStatusException.of(status, sqe.opcode(), describe());
            }
            finish(response.dw0(), response.dw1(), status, error);
        } else if (STATE.compareAndSet(this, TIMED_OUT, FREE)) {
            queue.release(this); // the late answer of a timed-out command: only now may its CID be reused
        }
    }

    @Override
    public void onTransportError(Throwable cause) {
        if (STATE.compareAndSet(this, IN_FLIGHT, DONE)) {
            finish(0, 0, 0, transportError(cause));
        } else if (STATE.compareAndSet(this, TIMED_OUT, FREE)) {
            queue.release(this);
        }
    }

    private NvmeException transportError(Throwable cause) {
        NvmeException reason = queue.controller.failureCause();
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
        if (state != IN_FLIGHT) {
            return;
        }
        long d = deadline;
        if (d == 0 || now - d < 0) {
            return;
        }
        if (STATE.compareAndSet(this, IN_FLIGHT, TIMED_OUT)) {
            NvmeTimeoutException e = new NvmeTimeoutException(describe() + " on " + queue.name()
                    + " got no answer within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
            deliver(0, 0, 0, e);
            // The slot stays TIMED_OUT (its CID unusable) until an answer or the queue's close gives it back.
            queue.controller.commandTimedOut(e);
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
        STATE.lazySet(this, FREE);
        queue.release(this);
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

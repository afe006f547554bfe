package io.nvmeof.initiator.multipath;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.host.CommandIdAllocator;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.LbaRange;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.NvmeTimeoutException;
import io.nvmeof.initiator.NvmeTransportException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends the commands of a {@link MultipathNamespace} on the path its {@link PathSelector} picks, and fails them over
 * (Linux: {@code nvme_ns_head_submit_bio}, {@code nvme_failover_req}, the head's requeue list and work).
 *
 * <p><b>Normal path.</b> A command takes a preallocated {@link MultipathRequest} from a lock-free free list (the
 * core's {@link CommandIdAllocator}; an empty list is the back-pressure, as for a queue's command slots), is sent on
 * the selected path's {@link Namespace} with the request as its callback, and on success the request goes back to
 * the list before the caller's callback runs. No lock, no allocation.
 *
 * <p><b>Path errors</b> (the Linux host's disposition FAILOVER): a status of the path-related type (SCT 3h: ANA
 * Persistent Loss 01h, ANA Inaccessible 02h, ANA Transition 03h, internal path error 00h, the host's own path errors
 * 60h–7Fh) without DNR, a transport error or a command timeout (which in Linux end as host path errors after the
 * controller reset), or a path whose controller or namespace went away. The command is counted as a failover, its path
 * is marked (ANA pending: the path's ANA log is read again; lost: the path reconnects), and it goes to the requeue
 * thread, which sends it again on the path the selector picks then. Every command is retried this way, writes too,
 * as Linux does: a write that reached the target on the lost path is written again with the same data. Any other
 * error status without DNR is sent again the same way at most 5 times (Linux's RETRY disposition, nvme_max_retries;
 * the Command Retry Delay is not applied here); a status with DNR, or the sixth, completes the command with it. The
 * paths' controllers themselves neither retry nor reconnect (they connect with {@code ctrl_loss_tmo=0}).
 *
 * <p><b>No usable path.</b> A command waits on the requeue thread (checked every 10 ms and whenever a path changes)
 * until a path is usable, at most the no-path timeout counted from its first path error or wait; then it fails with
 * an {@link NvmeTransportException} naming the last path error.
 */
final class RequestDispatcher {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator.multipath");
    private static final long RETRY_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Retries of an error status that is not a path error: the Linux host's nvme_max_retries default. */
    static final int MAX_RETRIES = 5;

    private final MultipathRequest[] requests;
    private final CommandIdAllocator free;
    private final PathSelector selector;
    private final long waitNanos;
    private final long noPathNanos;
    private final String name;
    private final ConcurrentLinkedQueue<MultipathRequest> requeue = new ConcurrentLinkedQueue<>();
    private final AtomicLong failovers = new AtomicLong();
    private final Thread thread;
    private volatile boolean closed;
    private volatile NvmeException closedCause;

    RequestDispatcher(int size, PathSelector selector, long waitNanos, long noPathNanos, String name) {
        this.requests = new MultipathRequest[size];
        for (int i = 0; i < size; i++) {
            requests[i] = new MultipathRequest(this, i);
        }
        this.free = new CommandIdAllocator(size);
        this.selector = selector;
        this.waitNanos = waitNanos;
        this.noPathNanos = noPathNanos;
        this.name = name;
        this.thread = new Thread(this::requeueLoop, name + "-requeue");
        thread.setDaemon(true);
        thread.start();
    }

    /** Commands failed over to another path (or sent again on the same one) after a path error. */
    long failovers() {
        return failovers.get();
    }

    /**
     * Sends a command. {@code wait}: the waiting forms (wait up to the command timeout for a free request and a free
     * slot; always true). Else the try forms: false when no request or no slot of the selected path is free.
     */
    boolean submit(
            boolean wait,
            int op,
            long lba,
            int blocks,
            ByteBuffer buf,
            List<LbaRange> ranges,
            IoCallback callback,
            Object attachment) {
        NvmeException dead = closedCause;
        if (dead != null) {
            callback.failed(dead, attachment);
            return true;
        }
        int id = free.tryAcquire();
        if (id == CommandIdAllocator.NONE) {
            if (!wait) {
                return false;
            }
            id = acquireWaiting(callback, attachment);
            if (id == CommandIdAllocator.NONE) {
                return true;
            }
        }
        MultipathRequest r = requests[id];
        r.set(op, lba, blocks, buf, ranges, callback, attachment);
        NamespacePath p = selector.select();
        if (p == null) {
            park(r);
            return true;
        }
        return send(r, p, wait);
    }

    private int acquireWaiting(IoCallback callback, Object attachment) {
        int id;
        try {
            id = free.acquire(waitNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            callback.failed(new NvmeException("interrupted while waiting for a free multipath request"), attachment);
            return CommandIdAllocator.NONE;
        }
        if (id == CommandIdAllocator.NONE) {
            NvmeException c = closedCause;
            callback.failed(
                    c != null
                            ? c
                            : new NvmeTimeoutException("no free multipath request on " + name + " within "
                                    + TimeUnit.NANOSECONDS.toMillis(waitNanos) + " ms (all " + requests.length
                                    + " in flight)"),
                    attachment);
        }
        return id;
    }

    /** Sends {@code r} on {@code p}; false (and {@code r} freed) if a try send found no free slot. */
    private boolean send(MultipathRequest r, NamespacePath p, boolean wait) {
        Namespace ns = p.namespace();
        if (ns == null) {
            park(r); // lost since it was selected
            return true;
        }
        boolean count = selector.countsActive();
        r.path = p;
        r.countedActive = count;
        p.started(count);
        // From here on r may complete (and be reused) on another thread at any moment: do not touch it.
        if (!r.sendOn(ns, wait)) {
            p.finished(count);
            r.clear();
            free.release(r.index);
            return false;
        }
        return true;
    }

    // ---- completions (a path's queue thread, or inline) ----

    void completed(MultipathRequest r) {
        NamespacePath p = r.path;
        if (p != null) {
            p.finished(r.countedActive);
        }
        IoCallback cb = r.callback;
        Object att = r.attachment;
        r.clear();
        free.release(r.index);
        deliver(cb, att, null);
    }

    void failed(MultipathRequest r, NvmeException error) {
        NamespacePath p = r.path;
        if (p != null) {
            p.finished(r.countedActive);
        }
        if (!closed && !isPathError(error, p) && error instanceof NvmeStatusException se && mayRetry(se, r)) {
            // RETRY: an error status without DNR, at most 5 times, on the path the selector picks then (usually
            // the same one).
            r.retries++;
            r.lastError = error;
            r.path = null;
            park(r);
            return;
        }
        if (!closed && isPathError(error, p)) {
            failovers.incrementAndGet();
            r.lastError = error;
            if (r.deadline == 0) {
                r.deadline = System.nanoTime() + noPathNanos;
            }
            if (p != null) {
                if (error instanceof NvmeStatusException se && isAnaError(se.status())) {
                    p.anaError();
                } else if (!(error instanceof NvmeStatusException)) {
                    p.transportError();
                }
            }
            r.path = null;
            park(r);
            return;
        }
        finish(r, error);
    }

    private void finish(MultipathRequest r, NvmeException error) {
        IoCallback cb = r.callback;
        Object att = r.attachment;
        r.clear();
        free.release(r.index);
        deliver(cb, att, error);
    }

    private static void deliver(IoCallback cb, Object att, NvmeException error) {
        try {
            if (error == null) {
                cb.completed(att);
            } else {
                cb.failed(error, att);
            }
        } catch (Throwable t) {
            LOG.log(Level.WARNING, "an I/O callback threw; the multipath namespace ignores it", t);
        }
    }

    /**
     * The Linux host's failover decision (nvme_decide_disposition, nvme_is_path_error): DNR never; SCT 3h without DNR;
     * a transport error or timeout; or any error on a path that is no longer usable.
     */
    static boolean isPathError(NvmeException e, NamespacePath p) {
        if (e instanceof NvmeStatusException se) {
            if (se.dnr()) {
                return false;
            }
            return se.sct() == Status.SCT_PATH;
        }
        if (e instanceof NvmeTransportException || e instanceof NvmeTimeoutException) {
            return true;
        }
        Namespace ns = p == null ? null : p.namespace();
        return ns == null || !ns.isActive();
    }

    /** Linux's RETRY disposition: no DNR and fewer than nvme_max_retries (5) retries so far. */
    static boolean mayRetry(NvmeStatusException e, MultipathRequest r) {
        return !e.dnr() && r.retries < MAX_RETRIES;
    }

    /** ANA Persistent Loss, Inaccessible, Transition (SCT 3h, SC 01h–03h). */
    static boolean isAnaError(int status) {
        return Status.is(status, Status.ANA_PERSISTENT_LOSS)
                || Status.is(status, Status.ANA_INACCESSIBLE)
                || Status.is(status, Status.ANA_TRANSITION);
    }

    // ---- the requeue thread (failure path: may allocate) ----

    private void park(MultipathRequest r) {
        if (r.deadline == 0) {
            r.deadline = System.nanoTime() + noPathNanos;
        }
        requeue.add(r);
        LockSupport.unpark(thread);
        if (closed) {
            // The requeue thread may be gone already: fail what it did not take.
            MultipathRequest w;
            while ((w = requeue.poll()) != null) {
                finish(w, closedCause);
            }
        }
    }

    /** A path may have become usable: try the waiting commands now. */
    void kick() {
        LockSupport.unpark(thread);
    }

    private void requeueLoop() {
        ArrayDeque<MultipathRequest> waiting = new ArrayDeque<>();
        while (true) {
            MultipathRequest r;
            while ((r = requeue.poll()) != null) {
                waiting.add(r);
            }
            if (closed) {
                NvmeException c = closedCause;
                for (MultipathRequest w : waiting) {
                    finish(w, c);
                }
                while ((r = requeue.poll()) != null) {
                    finish(r, c);
                }
                return;
            }
            for (Iterator<MultipathRequest> it = waiting.iterator(); it.hasNext(); ) {
                MultipathRequest w = it.next();
                if (System.nanoTime() - w.deadline >= 0) {
                    it.remove();
                    finish(w, noPath(w));
                    continue;
                }
                NamespacePath p = selector.select();
                if (p == null) {
                    continue;
                }
                it.remove();
                send(w, p, true);
            }
            LockSupport.parkNanos(this, waiting.isEmpty() ? TimeUnit.SECONDS.toNanos(1) : RETRY_TICK_NANOS);
        }
    }

    private NvmeTransportException noPath(MultipathRequest r) {
        NvmeException last = r.lastError;
        return new NvmeTransportException(
                "no usable path to " + name + " within " + TimeUnit.NANOSECONDS.toMillis(noPathNanos) + " ms"
                        + (last != null ? "; last path error: " + last.getMessage() : ""),
                last);
    }

    /** Fails every waiting command with {@code cause} and stops the requeue thread; commands on paths fail as the paths close. */
    void close(NvmeException cause) {
        closedCause = cause;
        closed = true;
        free.close();
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

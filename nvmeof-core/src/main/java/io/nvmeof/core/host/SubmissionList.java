package io.nvmeof.core.host;

import io.nvmeof.core.spi.HostCommand;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The commands of one host queue from {@code HostQueue.submit} until their outcome: which CIDs are in flight, and the
 * hand-off of commands submitted by other threads to the queue's thread. Both host transports (NVMe/TCP, NVMe/RDMA)
 * use it the same way; the Linux host's nvme-tcp does the same with its lock-less {@code req_list}.
 *
 * <p><b>Ownership.</b> A command is the list's from {@link #claim} until {@link #release} (the transport's, on the queue
 * thread, just before the command's callback) or until a close fails it. Each command gets exactly one outcome:
 * {@link HostCommand#onResponse} from the transport, or {@link HostCommand#onTransportError} from the transport or
 * from this list.
 *
 * <ul>
 *   <li>{@link #claim}: one compare-and-set on the CID's entry (null → command). A CID in flight is refused at once,
 *       from any thread.</li>
 *   <li>From the queue's own thread the transport sends at once ({@link #drain} first if anything is queued, to keep
 *       the order). From another thread, {@link #offer} pushes the CID on a lock-free stack (one compare-and-set; the
 *       link lives in a per-CID array, so nothing is allocated) and says whether the stack was empty: only that
 *       submitter wakes the queue thread. No flag, no separate queue.</li>
 *   <li>{@link #drain}, on the queue thread: takes the whole stack with one getAndSet, reverses it to submission order
 *       and hands each command to the transport.</li>
 *   <li>{@link #release}: a release store (no fence): the next claim of that CID is ordered after it by whatever
 *       handed the CID on (the initiator's {@link CommandIdAllocator}, or the callback's own thread).</li>
 *   <li>{@link #close}, on the queue thread: refuses later claims and fails every claimed command, queued or in
 *       flight, exactly once (one getAndSet per CID, closing only). A claim re-reads the close flag after its
 *       compare-and-set, so a claim and a close that race are settled by one more compare-and-set on the entry: the
 *       claim is undone (submit throws, the command is not taken) or the close failed it (submit returns). Either way
 *       no callback runs on the submitting thread, and nothing is left for a queue thread that may be gone.</li>
 * </ul>
 *
 * <p>Atomic operations per command: claim 1 compare-and-set; from another thread also the push (1) and a share of one
 * getAndSet per drained batch; release none. Nothing locks, nothing allocates.
 */
public final class SubmissionList {
    private static final System.Logger LOG = System.getLogger(SubmissionList.class.getName());

    /** What the transport does with a command on its queue thread: build and send it. */
    public interface Sender {
        void send(HostCommand command);
    }

    private final int qid;
    private final AtomicReferenceArray<HostCommand> claimed;
    /** Stack links: next[cid] = the CID pushed before it, + 1 (0 = bottom). Written before the push that publishes it. */
    private final int[] next;
    /** The top of the stack: CID + 1, or 0 when empty. */
    private final AtomicInteger top = new AtomicInteger();

    private volatile boolean closed;
    private volatile Throwable closeCause;

    /** The list of queue {@code qid} (named in messages), for CIDs 0..queueSize-1. */
    public SubmissionList(int qid, int queueSize) {
        this.qid = qid;
        this.claimed = new AtomicReferenceArray<>(queueSize);
        this.next = new int[queueSize];
    }

    public int queueSize() {
        return next.length;
    }

    /**
     * Takes the command's CID for it. Returns true when the caller must now send it (on the queue thread) or
     * {@link #offer} it; false when a close raced with the claim and has already failed the command (its outcome is
     * given: the caller just returns).
     *
     * @throws IllegalArgumentException if the CID is outside 0..queueSize-1
     * @throws IllegalStateException    if the CID is in flight (claimed and not released), or the list is closed (the
     *                                  command is not taken)
     */
    public boolean claim(HostCommand command) {
        int cid = command.command().cid();
        if (cid >= next.length) {
            throw new IllegalArgumentException(
                    "CID " + cid + " is outside 0.." + (next.length - 1) + " of queue " + qid);
        }
        if (closed) {
            throw new IllegalStateException("queue " + qid + " is closed");
        }
        if (!claimed.compareAndSet(cid, null, command)) {
            throw new IllegalStateException("CID " + cid + " is already in flight on queue " + qid);
        }
        if (closed) {
            // The close came between the two reads: whoever takes the entry back decides the outcome.
            if (claimed.compareAndSet(cid, command, null)) {
                throw new IllegalStateException("queue " + qid + " is closed");
            }
            return false; // the close's sweep took it and failed it
        }
        return true;
    }

    /**
     * Hands a claimed command to the queue thread, from another thread. Returns true when the list was empty: the
     * caller must then wake the queue thread (run {@link #drain} there).
     */
    public boolean offer(int cid) {
        int prev;
        do {
            prev = top.get();
            next[cid] = prev;
        } while (!top.compareAndSet(prev, cid + 1));
        return prev == 0;
    }

    /** Whether commands wait for {@link #drain} (a volatile read). */
    public boolean hasQueued() {
        return top.get() != 0;
    }

    /**
     * On the queue thread: every command queued so far goes to {@code sender}, oldest first; returns how many. A
     * sender that throws fails that command (released, {@link HostCommand#onTransportError}) and the rest still go.
     * After {@link #close} the queued commands are failed instead of sent.
     */
    public int drain(Sender sender) {
        if (top.get() == 0) {
            return 0;
        }
        int first = reverse(top.getAndSet(0));
        if (closed) {
            failChain(first, closeCause);
            return 0;
        }
        int n = 0;
        for (int c = first; c != 0; ) {
            int cid = c - 1;
            c = next[cid];
            HostCommand command = claimed.get(cid);
            if (command == null) {
                continue;
            }
            n++;
            try {
                sender.send(command);
            } catch (Throwable t) {
                release(cid);
                fail(command, t);
            }
        }
        return n;
    }

    /** On the queue thread, when the command's outcome is known and before its callback: the CID is free again. */
    public HostCommand release(int cid) {
        HostCommand c = claimed.get(cid);
        claimed.lazySet(cid, null);
        return c;
    }

    /** The command holding {@code cid}, or null (a volatile read). */
    public HostCommand command(int cid) {
        return cid < next.length ? claimed.get(cid) : null;
    }

    /**
     * On the queue thread, once: later claims are refused, and every claimed command, queued or in flight, gets
     * {@link HostCommand#onTransportError} with {@code cause} (after the transport has stopped touching callers'
     * buffers).
     */
    public void close(Throwable cause) {
        if (closed) {
            return;
        }
        closeCause = cause;
        closed = true;
        for (int cid = 0; cid < next.length; cid++) {
            HostCommand c = claimed.getAndSet(cid, null);
            if (c != null) {
                fail(c, cause);
            }
        }
        failQueued(cause);
    }

    public boolean isClosed() {
        return closed;
    }

    /** Takes what is on the stack and fails each command not failed yet (close races). */
    private void failQueued(Throwable cause) {
        failChain(reverse(top.getAndSet(0)), cause);
    }

    private void failChain(int first, Throwable cause) {
        for (int c = first, n = 0; c != 0 && n < next.length; n++) {
            int cid = c - 1;
            c = next[cid];
            HostCommand command = claimed.getAndSet(cid, null);
            if (command != null) {
                fail(command, cause);
            }
        }
    }

    /** Reverses a taken chain in place (newest first → oldest first); returns its new head. */
    private int reverse(int head) {
        int prev = 0;
        for (int c = head, n = 0; c != 0 && n < next.length; n++) {
            int after = next[c - 1];
            next[c - 1] = prev;
            prev = c;
            c = after;
        }
        return prev;
    }

    private static void fail(HostCommand command, Throwable cause) {
        try {
            command.onTransportError(cause);
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "HostCommand.onTransportError failed", t);
        }
    }
}

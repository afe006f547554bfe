package io.nvmeof.initiator;

import io.nvmeof.core.spi.HostQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The host side of one queue (admin or I/O) on top of a transport {@link HostQueue}: a fixed array of reusable
 * {@link CommandSlot}s, one per command ID (CID = slot index, nvmeof-protocol.md §1.1), like the CID-indexed arrays of the Linux host and
 * SPDK (docs/ARCHITECTURE.md).
 *
 * <p>Slot acquisition is lock-free: a Treiber stack of slot indexes whose head carries a version tag against ABA. A
 * {@link Semaphore} with one permit per slot gives back-pressure: {@link #tryAcquire()} never waits, {@link #acquire}
 * waits at most the command timeout. Neither allocates unless a caller has to wait (the semaphore's wait node).
 *
 * <p>A slot whose command timed out stays taken until the controller answers it or the queue closes, so its CID is
 * never reused while the controller may still answer it.
 */
final class CommandQueue {
    final Controller controller;
    final HostQueue transport;
    final int qid;
    final CommandSlot[] slots;
    private final int[] next;
    /** (version << 32) | (index + 1); low word 0 = empty. */
    private final AtomicLong head = new AtomicLong();

    private final Semaphore permits;
    /** Set once when the queue is closed or failed: the reason later submissions fail. */
    volatile NvmeException closedCause;

    CommandQueue(Controller controller, HostQueue transport, int qid, int size) {
        this.controller = controller;
        this.transport = transport;
        this.qid = qid;
        this.slots = new CommandSlot[size];
        this.next = new int[size];
        for (int i = size - 1; i >= 0; i--) {
            slots[i] = new CommandSlot(this, i);
            push(i);
        }
        this.permits = new Semaphore(size);
    }

    int size() {
        return slots.length;
    }

    /** A free slot, or null if every slot is in use. Never waits. */
    CommandSlot tryAcquire() {
        if (!permits.tryAcquire()) {
            return null;
        }
        return pop();
    }

    /**
     * A free slot, waiting up to {@code timeoutNanos} for one.
     *
     * @throws NvmeTimeoutException   if none became free in time
     * @throws NvmeTransportException if the queue is closed
     * @throws NvmeException          if the caller is this queue's own thread, which cannot wait for itself
     */
    CommandSlot acquire(long timeoutNanos) throws NvmeException {
        NvmeException closed = closedCause;
        if (closed != null) {
            throw closed;
        }
        if (permits.tryAcquire()) {
            return pop();
        }
        if (transport.inQueueThread()) {
            // Slots are freed on this very thread: waiting here would wait for ever.
            throw new NvmeException("every command slot of queue " + qid + " is in use and the caller is that queue's "
                    + "own thread, which cannot wait: use the try* forms inside callbacks");
        }
        boolean got;
        try {
            got = permits.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NvmeException("interrupted while waiting for a free command slot on queue " + qid);
        }
        if (!got) {
            closed = closedCause;
            if (closed != null) {
                throw closed;
            }
            throw new NvmeTimeoutException("no free command slot on queue " + qid + " within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (all " + slots.length + " in flight)");
        }
        return pop();
    }

    /** Gives a slot back. */
    void release(CommandSlot slot) {
        push(slot.index);
        permits.release();
    }

    /** Slots currently free (a snapshot, for tests and diagnostics). */
    int freeSlots() {
        return permits.availablePermits();
    }

    private CommandSlot pop() {
        while (true) {
            long h = head.get();
            int top = (int) h;
            if (top == 0) {
                // The semaphore guarantees a free index; a momentary race with a pusher that has released the permit
                // before its CAS cannot happen because push() comes before permits.release().
                throw new IllegalStateException("command slot free list empty with a permit held");
            }
            int nextTop = next[top - 1];
            long nh = (((h >>> 32) + 1) << 32) | (nextTop & 0xFFFFFFFFL);
            if (head.compareAndSet(h, nh)) {
                return slots[top - 1];
            }
        }
    }

    private void push(int index) {
        while (true) {
            long h = head.get();
            next[index] = (int) h;
            long nh = (((h >>> 32) + 1) << 32) | ((index + 1) & 0xFFFFFFFFL);
            if (head.compareAndSet(h, nh)) {
                return;
            }
        }
    }

    /** Fails commands whose deadline has passed; called from the controller's timer thread. */
    void checkTimeouts(long nowNanos) {
        for (CommandSlot s : slots) {
            s.checkTimeout(nowNanos);
        }
    }

    /** Marks the queue closed (later submissions fail with {@code cause}) and closes the transport queue. */
    void close(NvmeException cause) {
        if (closedCause == null) {
            closedCause = cause;
        }
        transport.close();
    }

    String name() {
        return qid == 0 ? "admin queue" : "I/O queue " + qid;
    }
}

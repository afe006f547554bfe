package io.nvmeof.core.host;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The free command IDs of one host queue: CIDs 0..size-1 (nvmeof-protocol.md §1.1), each held by at most one caller
 * from {@link #tryAcquire()} or {@link #acquire} until {@link #release}. Like the tag set of the Linux block layer that
 * gives the Linux host its CIDs, it bounds the commands in flight: with every CID held, {@link #tryAcquire()} says so at
 * once and {@link #acquire} waits for one.
 *
 * <p><b>Ownership.</b> The allocator owns the free CIDs; a caller owns a CID from acquire to release and decides when
 * to give it back. A CID whose command timed out must stay held until the controller answers it or the queue closes,
 * so that a late answer can never be taken for a new command's; the allocator cannot know, the holder does.
 *
 * <p><b>Cost.</b> The free list is a lock-free stack of indexes (a Treiber stack) whose 64-bit head carries a version
 * tag against ABA: one compare-and-set to take a CID, one to give it back, no lock, no allocation. No semaphore: an
 * empty stack is the back-pressure. Only a caller that must wait allocates (its node in the waiter queue) and parks.
 *
 * <p><b>Waiting.</b> A waiter enqueues itself, then tries the stack again, then parks; {@link #release} pushes, then
 * wakes one waiter if any is queued (a volatile read when none is). Either the waiter's second try sees the pushed
 * CID or the releaser sees the waiter, so no wake-up is lost. Any thread.
 */
public final class CommandIdAllocator {
    /** Returned by {@link #tryAcquire()} and {@link #acquire} when no CID was taken. */
    public static final int NONE = -1;

    private final int[] next;
    /** (version << 32) | (cid + 1); low word 0 = empty. */
    private final AtomicLong head = new AtomicLong();

    private final ConcurrentLinkedQueue<Thread> waiters = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /** An allocator with every CID of {@code size} free, CID 0 on top. */
    public CommandIdAllocator(int size) {
        if (size < 1 || size > 65536) {
            throw new IllegalArgumentException("a queue has 1..65536 command IDs: " + size);
        }
        this.next = new int[size];
        for (int cid = size - 1; cid >= 0; cid--) {
            push(cid);
        }
    }

    public int size() {
        return next.length;
    }

    /** A free CID, or {@link #NONE} if every CID is held. Never waits. */
    public int tryAcquire() {
        while (true) {
            long h = head.get();
            int top = (int) h;
            if (top == 0) {
                return NONE;
            }
            long nh = (((h >>> 32) + 1) << 32) | (next[top - 1] & 0xFFFFFFFFL);
            if (head.compareAndSet(h, nh)) {
                return top - 1;
            }
        }
    }

    /**
     * A free CID, waiting up to {@code timeoutNanos} for one; {@link #NONE} if none became free in time or the
     * allocator is (or gets) closed. The caller must not be the thread whose releases it would wait for.
     *
     * @throws InterruptedException if the thread is interrupted while it waits
     */
    public int acquire(long timeoutNanos) throws InterruptedException {
        int cid = tryAcquire();
        if (cid != NONE || closed) {
            return cid;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        Thread me = Thread.currentThread();
        while (true) {
            waiters.add(me);
            cid = tryAcquire();
            long left = deadline - System.nanoTime();
            if (cid != NONE || closed || left <= 0) {
                waiters.remove(me);
                return cid;
            }
            LockSupport.parkNanos(this, left);
            waiters.remove(me); // still there unless a release took it out to wake it
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for a free command ID");
            }
        }
    }

    /** Gives a held CID back and wakes one waiter, if any. Any thread. */
    public void release(int cid) {
        push(cid);
        if (!waiters.isEmpty()) {
            Thread t = waiters.poll();
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /** Wakes every waiter; {@link #acquire} takes nothing from now on. {@link #tryAcquire()} and release still work. */
    public void close() {
        closed = true;
        for (Thread t; (t = waiters.poll()) != null; ) {
            LockSupport.unpark(t);
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * How many CIDs are free: a walk of the free list, exact while no other thread takes or gives back one (tests,
     * diagnostics).
     */
    public int available() {
        int n = 0;
        for (int top = (int) head.get(); top != 0 && n < next.length; top = next[top - 1]) {
            n++;
        }
        return n;
    }

    private void push(int cid) {
        if (cid < 0 || cid >= next.length) {
            throw new IllegalArgumentException("CID " + cid + " is outside 0.." + (next.length - 1));
        }
        while (true) {
            long h = head.get();
            next[cid] = (int) h;
            long nh = (((h >>> 32) + 1) << 32) | (cid + 1);
            if (head.compareAndSet(h, nh)) {
                return;
            }
        }
    }
}

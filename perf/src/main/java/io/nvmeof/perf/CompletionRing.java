package io.nvmeof.perf;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * How completions reach the job thread in a {@link Job} the job thread drives ({@code --verify}, {@code --rate_iops}):
 * each completion, on the queue's thread, puts its unit's index in; the job thread takes them out, and parks here
 * when there is nothing to do. A bounded lock-free MPSC queue of ints: at most {@code iodepth} entries are ever in
 * it and the capacity is larger, so it never fills. Owned by one job; the job thread is its only consumer.
 */
final class CompletionRing {
    /** Index + 1 of a handed-back unit, 0 for an empty slot. */
    private final AtomicIntegerArray ring;

    private final int mask;
    private final AtomicLong tail = new AtomicLong();
    /** The consumer's next slot; the job thread's only. */
    private long head;
    /** The consumer is parked (or about to park) in {@link #await}. */
    private volatile boolean parked;

    CompletionRing(int depth) {
        int cap = Integer.highestOneBit(Math.max(2, depth) * 2 - 1);
        this.ring = new AtomicIntegerArray(cap);
        this.mask = cap - 1;
    }

    /** Any thread: hands unit {@code index} back, and wakes {@code consumer} if it waits in {@link #await}. */
    void handBack(int index, Thread consumer) {
        long t = tail.getAndIncrement();
        ring.set((int) (t & mask), index + 1);
        if (parked) {
            LockSupport.unpark(consumer);
        }
    }

    /** The consumer: the next handed-back unit's index, or -1 if there is none. */
    int poll() {
        int at = (int) (head & mask);
        int v = ring.get(at);
        if (v == 0) {
            return -1;
        }
        ring.lazySet(at, 0);
        head++;
        return v - 1;
    }

    /** The consumer: waits up to {@code nanos} (1 µs..50 ms) for a unit to come back. */
    void await(long nanos) {
        // spin briefly (a completion is often microseconds away), then park until a completion unparks us
        for (int i = 0; i < 64; i++) {
            if (ring.get((int) (head & mask)) != 0) {
                return;
            }
            Thread.onSpinWait();
        }
        parked = true;
        if (ring.get((int) (head & mask)) == 0) {
            LockSupport.parkNanos(Math.max(1000, Math.min(nanos, 50_000_000L)));
        }
        parked = false;
    }
}

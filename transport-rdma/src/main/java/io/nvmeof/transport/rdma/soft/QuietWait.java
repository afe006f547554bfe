package io.nvmeof.transport.rdma.soft;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * How the software RNIC's owner thread waits for work on a queue (a QP with its own CQ, or a shared CQ): a short spin
 * (20 µs) when the queue first goes quiet, since an answer from a busy peer is usually microseconds away, then parks
 * in slices that keep growing across calls while nothing arrives ({@link #nextSlice}, from 10 µs). A peer in another
 * process cannot unpark the owner, so it looks again after each slice; a peer in this JVM unparks it at once
 * ({@link #wake}).
 *
 * <p>Threads: {@link #await} and {@link #active} on the owner thread only; {@link #wake} from any thread.
 */
abstract class QuietWait {
    private static final long SPIN_NANOS = 20_000;
    private static final long FIRST_SLICE_NANOS = 10_000;

    /** When {@link #await} last found nothing (0: something arrived or was posted since). */
    private long quietSince;
    /** The current park slice. */
    private long park;

    private volatile Thread waiter;

    /** Moves whatever is pending along and looks for work: true when there is some (owner thread). */
    abstract boolean poll();

    /** The slice after one of {@code park} ns, the queue having been quiet for {@code quietNanos}. */
    abstract long nextSlice(long park, long quietNanos);

    /** Something was posted or arrived: the next quiet spell starts with the spin again (owner thread). */
    final void active() {
        quietSince = 0;
    }

    /** Unparks the owner if it is parked in {@link #await} (any thread). */
    final void wake() {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** Waits until {@link #poll} finds work (true) or the timeout passes (false); parks on {@code blocker}. */
    final boolean await(Duration timeout, Object blocker) throws InterruptedException {
        long now = System.nanoTime();
        long deadline = now + timeout.toNanos();
        if (poll()) {
            quietSince = 0;
            return true;
        }
        boolean firstQuiet = quietSince == 0;
        if (firstQuiet) {
            quietSince = now;
            park = FIRST_SLICE_NANOS;
        }
        waiter = Thread.currentThread();
        try {
            long spinUntil = firstQuiet ? now + SPIN_NANOS : now;
            for (; ; ) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (poll()) {
                    quietSince = 0;
                    return true;
                }
                now = System.nanoTime();
                if (now - deadline >= 0) {
                    return false;
                }
                if (now - spinUntil < 0) {
                    Thread.onSpinWait();
                    continue;
                }
                LockSupport.parkNanos(blocker, Math.min(park, deadline - now));
                park = nextSlice(park, now - quietSince);
            }
        } finally {
            waiter = null;
        }
    }
}

package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.IdlePolicy;
import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Lets other threads wake a host queue thread or a target poll-group thread that sleeps in {@link CompletionQueue#await} (a submit, a task, a close).
 * The sleeper publishes AWAITING, re-checks for work, then awaits; a waker that moves AWAITING → WAKING interrupts it
 * (the software RNIC's await is interruptible; a provider whose await is not still returns at the timeout). The
 * interrupt never escapes the await: the sleeper waits for the waker to finish interrupting, then clears the flag, so
 * no stray interrupt can hit the thread later (e.g. while it maps memory). Allocation-free; the waker never blocks.
 */
final class QueueThreadWaker {
    private static final int RUNNING = 0;
    private static final int AWAITING = 1;
    private static final int WAKING = 2;
    private static final int WOKEN = 3;

    private final AtomicInteger state = new AtomicInteger(RUNNING);
    private volatile Thread owner;
    /** nanoTime when the owner's loop went idle; 0 while it has work. Owner thread only. */
    private long idleSince;

    void owner(Thread thread) {
        this.owner = thread;
    }

    /**
     * On the owner thread: sleeps in {@code cq.await(timeout)} unless {@code hasWork} says there is work already; with
     * {@code cq} null, when nothing can complete, it parks the thread instead (a wake or the timeout ends it).
     */
    void await(CompletionQueue cq, Duration timeout, BooleanSupplier hasWork) {
        state.set(AWAITING);
        try {
            if (!hasWork.getAsBoolean()) {
                if (cq != null) {
                    cq.await(timeout);
                } else {
                    LockSupport.parkNanos(this, timeout.toNanos());
                }
            }
        } catch (InterruptedException e) {
            // woken by wake(); handled below
        } finally {
            if (!state.compareAndSet(AWAITING, RUNNING)) {
                while (state.get() != WOKEN) {
                    Thread.onSpinWait();
                }
                Thread.interrupted();
                state.set(RUNNING);
            }
        }
    }

    /**
     * On the owner thread, after one turn of its loop that did {@code work} things: returns at once after work;
     * otherwise follows the transports' {@link IdlePolicy}: spins (always with {@code busyPoll}; else for the spin
     * window, 200 µs unless {@code io.nvmeof.spinMicros} says otherwise), then sleeps as {@link #await} does (in
     * {@code cq}, or parked when it is null). The window starts at the first turn without work after a turn with
     * work; a sleep that ends with nothing to do does not start it again (an idle thread does not spin after each
     * timeout).
     */
    void afterTurn(int work, boolean busyPoll, CompletionQueue cq, Duration timeout, BooleanSupplier hasWork) {
        if (work > 0) {
            idleSince = 0;
            return;
        }
        long now = System.nanoTime();
        if (idleSince == 0) {
            idleSince = now;
        }
        if (!IdlePolicy.of(busyPoll).shouldSleep(now - idleSince)) {
            Thread.onSpinWait();
            return;
        }
        await(cq, timeout, hasWork);
    }

    /** On the owner thread: how long its loop has had no work (0 while it has some). */
    long idleNanos(long now) {
        return idleSince == 0 ? 0 : now - idleSince;
    }

    /** From any thread, after publishing the work: wakes the owner if it sleeps. */
    void wake() {
        if (state.get() == AWAITING && state.compareAndSet(AWAITING, WAKING)) {
            Thread t = owner;
            if (t != null) {
                t.interrupt();
            }
            state.set(WOKEN);
        }
    }
}

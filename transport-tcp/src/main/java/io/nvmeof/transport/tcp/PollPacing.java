package io.nvmeof.transport.tcp;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * The pace of a polling queue thread's idle turns ({@link BusyPollIoHandler}), set by how many NVMe capsules its
 * connections received in its last turn that received any: commands on a target, completions on a host.
 * <ul>
 *   <li><b>One</b>: the peer has one command outstanding at a time (queue depth 1), so the next capsule is the
 *       answer to one the peer is waiting for. The thread polls on every idle turn and yields the core only on every
 *       {@value #POLLS_PER_YIELD}th, so the capsule waits for about half an {@code epoll_wait} (~0.5 µs on the
 *       2-core VM) instead of half an {@code epoll_wait} plus a {@code sched_yield} (~1.2 µs), and a thread waiting
 *       on this one (an application thread blocked on a completion, the JIT) still gets the core within a few µs.</li>
 *   <li><b>Several</b>: the peer works at depth; every idle turn yields. The pause between polls lets the peer's
 *       next burst arrive whole: without it, writes at queue depth 32 were slower in most runs, by up to a quarter
 *       (perf/README.md, "idle turns, one loop thread per core" and "what the idle turn's yield buys").</li>
 * </ul>
 * A turn whose reads completed no capsule (part of a PDU, an H2CData) keeps the pace. One per polling thread,
 * touched only by that thread; the connection handlers find it with {@link #of} when they are added on their loop.
 */
final class PollPacing {
    /** While capsules come one at a time: idle polls per {@code sched_yield}. */
    static final int POLLS_PER_YIELD = 4;

    private static final FastThreadLocal<PollPacing> CURRENT = new FastThreadLocal<>();

    private int capsules;
    private boolean oneAtATime;
    private int idlePolls;

    /** Makes {@code pacing} the calling thread's (a polling loop's, when it starts), or none with null. */
    static void install(PollPacing pacing) {
        CURRENT.set(pacing);
    }

    /**
     * The pacing a connection handler added on {@code loop} reports to: the loop thread's when the handler is added
     * on it and the loop polls, else one of the handler's own that nobody reads (a sleeping-only loop).
     */
    static PollPacing of(EventExecutor loop) {
        PollPacing p = loop.inEventLoop() ? CURRENT.getIfExists() : null;
        return p != null ? p : new PollPacing();
    }

    /** A connection of this thread received a capsule in the current turn. */
    void capsule() {
        capsules++;
    }

    /** A turn with I/O events ended: its capsules set the pace of the idle turns that follow. */
    void turnEnded() {
        if (capsules > 0) {
            oneAtATime = capsules == 1;
            capsules = 0;
            idlePolls = 0;
        }
    }

    /** An idle turn ended: whether the thread should yield the core now. */
    boolean yieldOnIdleTurn() {
        return !oneAtATime || ++idlePolls % POLLS_PER_YIELD == 0;
    }
}

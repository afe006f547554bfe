package io.nvmeof.transport.tcp;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;

/**
 * Polling for any Netty {@link IoHandler}: after each turn with I/O events the event loop keeps asking the wrapped
 * handler to poll without blocking ({@link IoHandlerContext#canBlock()} false) for an idle window, and only then
 * sleeps in the kernel as Netty's loops normally do, until the next event or task. For epoll a poll is
 * {@code epoll_wait(.., 0)}, for io_uring a look at the completion ring, for NIO {@code selectNow()}; tasks and timers
 * keep running between polls. This is how the TCP queue threads follow the transports' one
 * {@link io.nvmeof.core.spi.IdlePolicy} ({@link IoEngine#factory} picks the window):
 * <ul>
 *   <li><b>default mode: the policy's spin window</b> (200 µs, system property {@code io.nvmeof.spinMicros}, formerly
 *       {@code io.nvmeof.tcp.spinMicros}; 0 turns it off and the loops sleep as soon as they are idle). An answer
 *       that comes within the window (a response to a command just sent, the next batch of a busy host) is picked up
 *       without a wake-up. On a VM a cross-core wake-up costs tens of µs of latency and of CPU, so this window cuts
 *       the queue-depth-1 latency about six-fold and raises queue-depth-32 IOPS about two-fold at a lower CPU cost
 *       per I/O (perf/README.md, "Measured"). A 50 µs window was not enough: at queue depth 32 a side that works
 *       through a batch for longer lets the other fall asleep, and the run settles into sleep/wake-up half the time.
 *       The price is paid at low rates: at most one window of spinning per event, e.g. 2000 paced I/Os per second
 *       cost 1.7× (host) and 2.3× (target) the CPU per I/O of pure sleeping. The RDMA queues use the same window
 *       (QueueThreadWaker).</li>
 *   <li><b>{@code busyPoll} (fio's {@code --hipri}): {@link #BUSY_IDLE_NANOS}</b> (100 ms, system property
 *       {@code io.nvmeof.tcp.busyPollIdleMillis}): the thread spins as long as the queue is in use; a loop is shared
 *       by connections and cannot see whether they are in use, so one without an I/O event for that long (its last
 *       connection closed) stops spinning.</li>
 * </ul>
 * An idle turn calls {@link Thread#yield()}, so a thread that waits for this one's results (an application thread
 * blocked on a completion, a JIT or GC thread) gets the core at once instead of at the next time slice; with nothing
 * else runnable the yield returns at once. While the loop's connections receive one capsule at a time (queue depth 1)
 * only every {@value PollPacing#POLLS_PER_YIELD}th idle turn yields, so the answer is seen sooner ({@link PollPacing}).
 *
 * <p>Why not Netty's {@code SelectStrategy.BUSY_WAIT}: {@code EpollIoHandler} then spins inside native code until a
 * file descriptor is ready and, because it never arms its wake-up, a task posted from another thread (a host submit,
 * a shutdown) waits for the next network event. Polling from Java costs one syscall per idle turn but sees tasks at
 * once.
 */
final class BusyPollIoHandler implements IoHandler {
    /** With busy polling: the time without an I/O event after which a shared loop takes itself as unused. */
    static final long BUSY_IDLE_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
            Math.max(0L, Long.getLong("io.nvmeof.tcp.busyPollIdleMillis", 100)));

    private final IoHandler delegate;
    private final long idleNanos;
    private final NonBlocking context = new NonBlocking();
    /** What this loop's connections received in its turns; installed on the loop's thread by {@link #initialize}. */
    private final PollPacing pacing = new PollPacing();
    /** nanoTime of the last turn with I/O events. */
    private long lastEvent = System.nanoTime();

    private boolean sleeping;

    private BusyPollIoHandler(IoHandler delegate, long idleNanos) {
        this.delegate = delegate;
        this.idleNanos = idleNanos;
    }

    /** Handlers of {@code f} that poll for {@code idleNanos} after the last turn with I/O events, then sleep. */
    static IoHandlerFactory factory(IoHandlerFactory f, long idleNanos) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(ThreadAwareExecutor executor) {
                return new BusyPollIoHandler(f.newHandler(executor), idleNanos);
            }

            @Override
            public boolean isChangingThreadSupported() {
                return f.isChangingThreadSupported();
            }
        };
    }

    @Override
    public void initialize() {
        PollPacing.install(pacing);
        delegate.initialize();
    }

    @Override
    public int run(IoHandlerContext outer) {
        if (sleeping) {
            int n = delegate.run(outer); // may block, as in the default mode
            if (n > 0) {
                sleeping = false;
                lastEvent = System.nanoTime();
                pacing.turnEnded();
            }
            return n;
        }
        context.outer = outer;
        int n = delegate.run(context);
        if (n > 0) {
            lastEvent = System.nanoTime();
            pacing.turnEnded();
        } else if (System.nanoTime() - lastEvent > idleNanos) {
            sleeping = true;
        } else if (pacing.yieldOnIdleTurn()) {
            Thread.yield();
        }
        return n;
    }

    /** Whether the loop has fallen back to sleeping after an idle spell (tests). */
    boolean sleeping() {
        return sleeping;
    }

    @Override
    public void prepareToDestroy() {
        delegate.prepareToDestroy();
    }

    @Override
    public void destroy() {
        delegate.destroy();
    }

    @Override
    public IoRegistration register(IoHandle handle) throws Exception {
        return delegate.register(handle);
    }

    @Override
    public void wakeup() {
        delegate.wakeup();
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return delegate.isCompatible(handleType);
    }

    /** The loop's context with blocking turned off; one per handler, reused every turn. */
    private static final class NonBlocking implements IoHandlerContext {
        IoHandlerContext outer;

        @Override
        public boolean canBlock() {
            return false;
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return outer.delayNanos(currentTimeNanos);
        }

        @Override
        public long deadlineNanos() {
            return outer.deadlineNanos();
        }

        @Override
        public void reportActiveIoTime(long activeNanos) {
            outer.reportActiveIoTime(activeNanos);
        }

        @Override
        public boolean shouldReportActiveIoTime() {
            return outer.shouldReportActiveIoTime();
        }
    }
}

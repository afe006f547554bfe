package io.nvmeof.transport.tcp;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;

/**
 * Busy polling for any Netty {@link IoHandler}: the event loop asks the wrapped handler to poll without blocking on
 * every turn ({@link IoHandlerContext#canBlock()} is always false), so the thread never sleeps in the kernel. For
 * epoll that is {@code epoll_wait(.., 0)} per turn, for io_uring a look at the completion ring, for NIO
 * {@code selectNow()}; tasks and timers keep running between polls, as in the sleeping mode.
 *
 * <p>Two things keep a spinning thread from hurting its neighbours, which matters on a small machine:
 * <ul>
 *   <li>an idle turn calls {@link Thread#yield()}, so a thread that waits for this one's results (an application
 *       thread blocked on a completion, a JIT or GC thread) gets the core at once instead of at the next time
 *       slice; with nothing else runnable the yield returns at once;</li>
 *   <li>after {@link #IDLE_NANOS} without a single I/O event (default 100 ms, system property
 *       {@code io.nvmeof.tcp.busyPollIdleMillis}) the loop sleeps as in the default mode, until the next event or
 *       task, and then spins again. A loop whose last connection closed therefore stops spinning.</li>
 * </ul>
 *
 * <p>Why not Netty's {@code SelectStrategy.BUSY_WAIT}: {@code EpollIoHandler} then spins inside native code until a
 * file descriptor is ready and, because it never arms its wake-up, a task posted from another thread (a host submit,
 * a shutdown) waits for the next network event. Polling from Java costs one syscall per idle turn but sees tasks at
 * once.
 */
final class BusyPollIoHandler implements IoHandler {
    static final long IDLE_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
            Long.getLong("io.nvmeof.tcp.busyPollIdleMillis", 100));

    private final IoHandler delegate;
    private final NonBlocking context = new NonBlocking();
    /** nanoTime of the last turn with I/O events. */
    private long lastEvent = System.nanoTime();
    private boolean sleeping;

    private BusyPollIoHandler(IoHandler delegate) {
        this.delegate = delegate;
    }

    static IoHandlerFactory factory(IoHandlerFactory f) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(ThreadAwareExecutor executor) {
                return new BusyPollIoHandler(f.newHandler(executor));
            }

            @Override
            public boolean isChangingThreadSupported() {
                return f.isChangingThreadSupported();
            }
        };
    }

    @Override
    public void initialize() {
        delegate.initialize();
    }

    @Override
    public int run(IoHandlerContext outer) {
        if (sleeping) {
            int n = delegate.run(outer); // may block, as in the default mode
            if (n > 0) {
                sleeping = false;
                lastEvent = System.nanoTime();
            }
            return n;
        }
        context.outer = outer;
        int n = delegate.run(context);
        if (n > 0) {
            lastEvent = System.nanoTime();
        } else if (System.nanoTime() - lastEvent > IDLE_NANOS) {
            sleeping = true;
        } else {
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

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
 * <p>Why not Netty's {@code SelectStrategy.BUSY_WAIT}: {@code EpollIoHandler} then spins inside native code until a
 * file descriptor is ready and, because it never arms its wake-up, a task posted from another thread (a host submit,
 * a shutdown) waits for the next network event. Polling from Java costs one syscall per idle turn but sees tasks at
 * once.
 */
final class BusyPollIoHandler implements IoHandler {
    private final IoHandler delegate;
    private final NonBlocking context = new NonBlocking();

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
        context.outer = outer;
        int n = delegate.run(context);
        if (n == 0) {
            Thread.onSpinWait();
        }
        return n;
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

package io.nvmeof.transport.tcp;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.FastThreadLocalThread;

/**
 * The thread factory of every event-loop group of this transport (host queues, target queues, accept loops), and the
 * question "is the caller one of those threads?". A blocking call such as {@link TcpTransport#connect} asks it to
 * refuse to run on a loop it might wait for. Daemon threads named {@code <prefix>-<pool>-<thread>}, as Netty's
 * {@link DefaultThreadFactory} names them; they are {@link FastThreadLocalThread}s, as Netty's own are.
 */
final class EventLoopThreads extends DefaultThreadFactory {
    EventLoopThreads(String prefix) {
        super(prefix, true);
    }

    @Override
    protected Thread newThread(Runnable r, String name) {
        return new LoopThread(threadGroup, r, name);
    }

    /** Whether the calling thread is an event-loop thread of this transport. */
    static boolean inEventLoop() {
        return Thread.currentThread() instanceof LoopThread;
    }

    private static final class LoopThread extends FastThreadLocalThread {
        LoopThread(ThreadGroup group, Runnable r, String name) {
            super(group, r, name);
        }
    }
}

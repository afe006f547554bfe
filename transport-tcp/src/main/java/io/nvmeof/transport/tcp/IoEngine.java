package io.nvmeof.transport.tcp;

import io.netty.channel.Channel;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.nvmeof.core.spi.IdlePolicy;
import io.nvmeof.core.spi.IoMode;
import java.io.IOException;
import java.util.Locale;

/**
 * The Netty I/O engines this transport can run on, and how an {@link IoMode} picks one.
 *
 * <ul>
 *   <li>{@code epoll}: Netty's native epoll transport (level of maturity: the default since the start);</li>
 *   <li>{@code io_uring}: Netty 4.2's {@link IoUringIoHandler} (needs a kernel with io_uring and no seccomp filter
 *       blocking it);</li>
 *   <li>{@code nio}: the JDK selector, always available;</li>
 *   <li>{@code auto}: epoll, else io_uring, else NIO.</li>
 * </ul>
 *
 * <p>An engine named explicitly that cannot load is an {@link IOException} "io_uring unavailable: cause", never a
 * silent fallback. Queue threads poll for 200 µs after each I/O event before they sleep; with {@link IoMode#busyPoll()}
 * they spin as long as their queues are in use ({@link BusyPollIoHandler}).
 */
enum IoEngine {
    EPOLL("epoll"),
    IO_URING("io_uring"),
    NIO("nio");

    final String id;

    IoEngine(String id) {
        this.id = id;
    }

    /**
     * The engine an {@link IoMode} asks for.
     *
     * @param allowNative false makes "auto" mean NIO (tests, diagnosis)
     * @throws IllegalArgumentException for an unknown engine name
     * @throws IOException              for an engine named explicitly that cannot load here, with the cause
     */
    static IoEngine resolve(IoMode mode, boolean allowNative) throws IOException {
        String name = mode == null ? "auto" : mode.engine().toLowerCase(Locale.ROOT);
        switch (name) {
            case "auto":
                if (!allowNative) {
                    return NIO;
                }
                if (Epoll.isAvailable()) {
                    return EPOLL;
                }
                return IoUring.isAvailable() ? IO_URING : NIO;
            case "epoll":
                if (!Epoll.isAvailable()) {
                    throw new IOException(
                            "epoll unavailable: " + cause(Epoll.unavailabilityCause()), Epoll.unavailabilityCause());
                }
                return EPOLL;
            case "io_uring":
            case "io-uring":
            case "iouring":
                if (!IoUring.isAvailable()) {
                    throw new IOException(
                            "io_uring unavailable: " + cause(IoUring.unavailabilityCause()),
                            IoUring.unavailabilityCause());
                }
                return IO_URING;
            case "nio":
                return NIO;
            default:
                throw new IllegalArgumentException(
                        "unknown I/O engine '" + mode.engine() + "' for tcp (auto, epoll, io_uring, nio)");
        }
    }

    private static String cause(Throwable t) {
        if (t == null) {
            return "unknown cause";
        }
        StringBuilder b = new StringBuilder(String.valueOf(t));
        for (Throwable c = t.getCause(); c != null && c != t; c = c.getCause()) {
            b.append("; caused by ").append(c);
            if (c.getCause() == c) {
                break;
            }
        }
        return b.toString();
    }

    /**
     * A factory for this engine's IoHandler for queue threads, following the transports' {@link IdlePolicy}: polling
     * for the policy's spin window after the last I/O event (unwrapped if it is 0), or busy polling. A busy loop is
     * shared by connections and sees only events, not whether its queues are in use, so it takes
     * {@link BusyPollIoHandler#BUSY_IDLE_NANOS} without an event as "no queue in use" and sleeps then.
     */
    IoHandlerFactory factory(boolean busyPoll) {
        IdlePolicy policy = IdlePolicy.of(busyPoll);
        long idle = policy.busyPoll() ? BusyPollIoHandler.BUSY_IDLE_NANOS : policy.spinNanos();
        return policy.busyPoll() || idle > 0 ? BusyPollIoHandler.factory(sleepingFactory(), idle) : sleepingFactory();
    }

    /** A factory for this engine's IoHandler as Netty has it: it sleeps whenever idle (accept loops). */
    IoHandlerFactory sleepingFactory() {
        return switch (this) {
            case EPOLL -> EpollIoHandler.newFactory();
            case IO_URING -> IoUringIoHandler.newFactory();
            case NIO -> NioIoHandler.newFactory();
        };
    }

    Class<? extends ServerChannel> serverChannel() {
        return switch (this) {
            case EPOLL -> EpollServerSocketChannel.class;
            case IO_URING -> IoUringServerSocketChannel.class;
            case NIO -> NioServerSocketChannel.class;
        };
    }

    Class<? extends Channel> socketChannel() {
        return switch (this) {
            case EPOLL -> EpollSocketChannel.class;
            case IO_URING -> IoUringSocketChannel.class;
            case NIO -> NioSocketChannel.class;
        };
    }

    @Override
    public String toString() {
        return id;
    }
}

package io.nvmeof.transport.tcp;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;

import java.io.IOException;
import java.net.BindException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The NVMe/TCP transport (TRTYPE 3, protocol reference §3.3, §5), target side: Netty on epoll when the native
 * transport loads, else NIO. Found through {@code META-INF/services/io.nvmeof.core.spi.Transport}.
 *
 * <p>{@link #listen} binds one port; each accepted connection is one NVMe queue (§5.1) served by an
 * {@link NvmeTcpPduDecoder} and an {@link NvmeTcpTargetHandler} on one event-loop thread of the listener's own
 * worker group, which is also the queue's thread in the SPI sense.
 */
public final class TcpTransport implements Transport {
    /** TRTYPE for TCP in discovery log entries (§3.3). */
    public static final int TRTYPE_TCP = PortInfo.TRTYPE_TCP;
    /** Identify SGLS for TCP: SGLs supported, transport data block descriptors (§5.12, §7.7). */
    public static final int SGLS = 0x00100001;
    /** TSAS for TCP: SECTYPE 0, no security (§3.3). */
    private static final byte SECTYPE_NONE = 0;

    private final boolean allowNative;

    /** The transport as ServiceLoader creates it: epoll when available, else NIO. */
    public TcpTransport() {
        this(true);
    }

    /** @param allowNative false forces NIO even where epoll is available (tests, diagnosis) */
    TcpTransport(boolean allowNative) {
        this.allowNative = allowNative;
    }

    @Override
    public String name() {
        return "tcp";
    }

    @Override
    public int transportType() {
        return TRTYPE_TCP;
    }

    @Override
    public TargetListener listen(ListenerOptions options, QueueAcceptor acceptor) throws IOException {
        if (options == null || acceptor == null) {
            throw new IllegalArgumentException("listen needs options and an acceptor");
        }
        InetSocketAddress requested = options.address();
        boolean epoll = allowNative && Epoll.isAvailable();
        IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        Class<? extends ServerChannel> channelClass = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        String tag = requested.getPort() == 0 ? "any" : Integer.toString(requested.getPort());
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("nvme-tcp-accept-" + tag, true),
                factory);
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(Math.max(0, options.ioThreads()),
                new DefaultThreadFactory("nvme-tcp-io-" + tag, true), factory);
        ChannelGroup connections = new DefaultChannelGroup("nvme-tcp-" + tag, ImmediateEventExecutor.INSTANCE);
        Listener listener = new Listener(boss, workers, connections);
        try {
            ServerBootstrap b = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(channelClass)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            connections.add(ch);
                            NvmeTcpTargetHandler.install(ch.pipeline(), options, listener.portInfo, acceptor);
                        }
                    });
            ChannelFuture bind = b.bind(requested).awaitUninterruptibly();
            if (!bind.isSuccess()) {
                throw bindFailure(requested, bind.cause());
            }
            listener.bound(bind.channel(), options);
            return listener;
        } catch (IOException | RuntimeException | Error e) {
            listener.close();
            throw e;
        }
    }

    private static IOException bindFailure(InetSocketAddress address, Throwable cause) {
        String host = address.getHostString();
        String message = cause == null ? "" : String.valueOf(cause.getMessage());
        if (cause instanceof BindException || message.toLowerCase(Locale.ROOT).contains("in use")) {
            return new IOException("port " + address.getPort() + " on " + host + " is already in use", cause);
        }
        return new IOException("cannot listen on " + host + ":" + address.getPort() + ": " + message, cause);
    }

    /** One bound port: its server channel, its accepted connections and its own event loops. */
    private static final class Listener implements TargetListener {
        private final EventLoopGroup boss;
        private final EventLoopGroup workers;
        private final ChannelGroup connections;
        private volatile Channel server;
        private volatile InetSocketAddress localAddress;
        volatile PortInfo portInfo;
        private volatile boolean closed;

        Listener(EventLoopGroup boss, EventLoopGroup workers, ChannelGroup connections) {
            this.boss = boss;
            this.workers = workers;
            this.connections = connections;
        }

        void bound(Channel server, ListenerOptions options) {
            InetSocketAddress local = (InetSocketAddress) server.localAddress();
            this.portInfo = new PortInfo(PortInfo.TRTYPE_TCP,
                    local.getAddress() instanceof Inet6Address ? PortInfo.ADRFAM_IPV6 : PortInfo.ADRFAM_IPV4,
                    local.getAddress().getHostAddress(), Integer.toString(local.getPort()), options.portId(),
                    options.maxQueueSize(), options.inCapsuleDataSize(), SGLS, 0,
                    PortInfo.TREQ_SQFLOW_DISABLE_SUPPORTED, new byte[] {SECTYPE_NONE});
            this.localAddress = local;
            this.server = server;
        }

        @Override
        public InetSocketAddress localAddress() {
            return localAddress;
        }

        @Override
        public PortInfo portInfo() {
            return portInfo;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            Channel s = server;
            if (s != null) {
                s.close();
            }
            connections.close();
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            if (!onOwnThread()) {
                boss.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
                workers.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
            }
        }

        private boolean onOwnThread() {
            for (EventExecutor e : workers) {
                if (e.inEventLoop()) {
                    return true;
                }
            }
            for (EventExecutor e : boss) {
                if (e.inEventLoop()) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public String toString() {
            return "TcpTargetListener[" + localAddress + "]";
        }
    }
}

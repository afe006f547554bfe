package io.nvmeof.transport.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.NettyRuntime;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.core.tls.SecureChannel;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The NVMe/TCP transport (TRTYPE 3, nvmeof-protocol.md §3.3, §5), target and host side: Netty on epoll, io_uring or
 * NIO as the {@code IoMode} of the listener or queue says ({@link IoEngine}), sleeping or busy-polling. Found through {@code META-INF/services/io.nvmeof.core.spi.Transport}.
 *
 * <p>{@link #listen} binds one port; each accepted connection is one NVMe queue (nvmeof-protocol.md §5.1) served by an
 * {@link NvmeTcpPduDecoder} and an {@link NvmeTcpTargetHandler} on one event-loop thread of the listener's own
 * worker group, which is also the queue's thread in the SPI sense.
 *
 * <p>{@link #connect} opens one host queue: a connection on the JVM-wide host event loops ({@link HostEventLoops}),
 * served by an {@link NvmeTcpPduDecoder} in the HOST role and a {@link TcpHostQueue}, returned once the
 * ICReq/ICResp exchange succeeded.
 */
public final class TcpTransport implements Transport {
    /** TRTYPE for TCP in discovery log entries (nvmeof-protocol.md §3.3). */
    public static final int TRTYPE_TCP = PortInfo.TRTYPE_TCP;
    /** Identify SGLS for TCP: SGLs supported, transport data block descriptors (nvmeof-protocol.md §5.12, §7.7). */
    public static final int SGLS = 0x00100001;

    private final boolean allowNative;
    private final SocketBuffers buffers;

    /**
     * The transport as ServiceLoader creates it: each listener and queue picks its engine from its {@code IoMode},
     * and its sockets' buffer sizes from {@code io.nvmeof.tcp.socketBufferBytes} (host queues) or
     * {@code io.nvmeof.tcp.targetSocketBufferBytes} (listeners), read at each connect and listen
     * ({@link SocketBuffers}).
     */
    public TcpTransport() {
        this(true);
    }

    /** @param allowNative false makes engine "auto" mean NIO even where epoll is available (tests, diagnosis) */
    TcpTransport(boolean allowNative) {
        this(allowNative, null);
    }

    /**
     * @param buffers the kernel buffer sizes of every socket this transport opens or accepts; null: from the system
     *                properties at each connect and listen
     */
    TcpTransport(boolean allowNative, SocketBuffers buffers) {
        this.allowNative = allowNative;
        this.buffers = buffers;
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
        IoEngine engine = IoEngine.resolve(options.ioMode(), allowNative);
        boolean busy = options.ioMode().busyPoll();
        Class<? extends ServerChannel> channelClass = engine.serverChannel();
        String tag = requested.getPort() == 0 ? "any" : Integer.toString(requested.getPort());
        // Accepting never polls. The I/O threads poll for the IdlePolicy's window after each event (IoEngine.factory),
        // so under load they never sleep: one per core, not Netty's default of two, which put two polling threads on
        // each core (writes into a target pinned to one core: +5 % on the medians with one, perf/README.md). When
        // asked to busy-poll they spin without end, and then there is one per two cores.
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(
                1, new EventLoopThreads("nvme-tcp-accept-" + tag), engine.sleepingFactory());
        int cores = NettyRuntime.availableProcessors();
        int threads = options.ioThreads() > 0 ? options.ioThreads() : busy ? Math.max(1, cores / 2) : cores;
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(
                threads, new EventLoopThreads("nvme-tcp-io-" + tag), engine.factory(busy));
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
                            installTarget(ch, options, listener, acceptor);
                        }
                    });
            (buffers != null ? buffers : SocketBuffers.forTarget()).applyTo(b);
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

    /**
     * The pipeline of an accepted connection: the NVMe/TCP handlers; with TLS required, the TLS handler first, which
     * adds them once the handshake is done; with TLS allowed, a handler that picks one of the two by the first byte.
     */
    private static void installTarget(Channel ch, ListenerOptions options, Listener listener, QueueAcceptor acceptor) {
        SecureChannel sc = options.secureChannel();
        if (!sc.tls()) {
            NvmeTcpTargetHandler.install(ch.pipeline(), options, listener.portInfo, acceptor);
            return;
        }
        BcTlsPskHandler tls = BcTlsPskHandler.server(
                options.pskResolver(),
                ctx -> NvmeTcpTargetHandler.install(ctx.pipeline(), options, listener.portInfo, acceptor));
        if (sc == SecureChannel.REQUIRED) {
            ch.pipeline().addLast("nvme-tls", tls);
        } else {
            ch.pipeline()
                    .addLast(
                            "nvme-tls-or-plain",
                            new TlsOrPlainHandler(
                                    tls, p -> NvmeTcpTargetHandler.install(p, options, listener.portInfo, acceptor)));
        }
    }

    /**
     * Connects, exchanges ICReq/ICResp (nvmeof-protocol.md §5.4) and returns the ready queue; blocks the caller meanwhile, for at most
     * {@code options.connectTimeout()} in all.
     *
     * @throws IllegalStateException if called on an event-loop thread (it would block the loop it waits for)
     * @throws IOException           naming the controller and what went wrong: refused, no answer, no ICResp in time,
     *                               or an ICResp the host cannot accept
     */
    @Override
    public HostQueue connect(HostQueueOptions options) throws IOException {
        if (options == null) {
            throw new IllegalArgumentException("connect needs options");
        }
        if (EventLoopThreads.inEventLoop()) {
            throw new IllegalStateException("connect blocks until the controller answers; call it from an application "
                    + "thread, not from the event loop "
                    + Thread.currentThread().getName());
        }
        String peer = TcpHostQueue.describe(options.address());
        Duration timeout = options.connectTimeout();
        long timeoutMillis = Math.max(1, Math.min(timeout.toMillis(), Integer.MAX_VALUE));
        long deadline = System.nanoTime() + timeout.toNanos();
        IoEngine engine = IoEngine.resolve(options.ioMode(), allowNative);
        // The admin queue carries keep-alives and events, not I/O: it never busy-polls.
        boolean busy = options.ioMode().busyPoll() && options.qid() != 0;
        TcpHostQueue[] handler = new TcpHostQueue[1];
        Bootstrap b = new Bootstrap()
                .group(HostEventLoops.group(engine, busy))
                .channel(engine.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) timeoutMillis)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (options.tlsPsk() != null) {
                            ch.pipeline()
                                    .addLast(
                                            "nvme-tls",
                                            BcTlsPskHandler.client(
                                                    options.tlsPsk(),
                                                    options.tlsPsk().tlsHash()));
                        }
                        handler[0] = TcpHostQueue.install(ch.pipeline(), options);
                    }
                });
        (buffers != null ? buffers : SocketBuffers.forHost()).applyTo(b);
        ChannelFuture connect = b.connect(options.address());
        // Netty's CONNECT_TIMEOUT_MILLIS fails the future in time; the margin only guards against a lost wake-up.
        if (!connect.awaitUninterruptibly(timeoutMillis + 2000)) {
            connect.channel().close();
            throw new IOException(
                    "cannot connect to controller at " + peer + ": no answer within " + describe(timeout));
        }
        if (!connect.isSuccess()) {
            throw connectFailure(peer, timeout, connect.cause());
        }
        TcpHostQueue queue = handler[0];
        try {
            queue.ready().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            return queue;
        } catch (TimeoutException e) {
            queue.close();
            throw new IOException("controller at " + peer + " sent no ICResp within " + describe(timeout));
        } catch (ExecutionException e) {
            queue.close();
            Throwable cause = e.getCause();
            throw new IOException(cause.getMessage(), cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            queue.close();
            throw new InterruptedIOException("interrupted while connecting to controller at " + peer);
        }
    }

    private static IOException connectFailure(String peer, Duration timeout, Throwable cause) {
        if (cause instanceof ConnectTimeoutException) {
            return new IOException(
                    "cannot connect to controller at " + peer + ": no answer within " + describe(timeout), cause);
        }
        if (cause instanceof ConnectException) {
            return new IOException("cannot connect to controller at " + peer + ": connection refused", cause);
        }
        return new IOException("cannot connect to controller at " + peer + ": " + cause, cause);
    }

    /** "10 s" or "250 ms". */
    static String describe(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
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
            this.portInfo = new PortInfo(
                    PortInfo.TRTYPE_TCP,
                    local.getAddress() instanceof Inet6Address ? PortInfo.ADRFAM_IPV6 : PortInfo.ADRFAM_IPV4,
                    local.getAddress().getHostAddress(),
                    Integer.toString(local.getPort()),
                    options.portId(),
                    options.maxQueueSize(),
                    options.inCapsuleDataSize(),
                    SGLS,
                    0,
                    PortInfo.TREQ_SQFLOW_DISABLE_SUPPORTED
                            | options.secureChannel().treqBits(),
                    new byte[] {(byte) options.secureChannel().sectype()});
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

package io.nvmeof.testsupport;

import io.nvmeof.core.command.DataDirection;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.TargetRequestBase;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The "loop" transport (TRTYPE 0xFE, like Linux nvme-loop): host and target queues inside one JVM, with no socket.
 * Each queue has a host thread and a target thread, so the threading contract of the SPI holds as it does over TCP.
 * Data is copied between the host's buffer and the target, the way an RDMA NIC would move it.
 *
 * <p>For tests only, with fault injection a socket cannot give deterministically: {@link #pause(int)} holds every
 * command sent to a port (a stalled target) until {@link #resume(int)}; {@link #disconnect(int)} drops every
 * connection to a port as if the network failed.
 *
 * <p>Ports are numbers in a JVM-wide registry: {@code listen} on port 0 takes a free one from 20000 up; {@code connect}
 * finds the listener by port and ignores the address.
 */
public final class LoopTransport implements Transport {
    /** TRTYPE "intra-host" / loop (nvmeof-protocol.md §3.3). */
    public static final int TRTYPE_LOOP = 0xFE;

    private static final Map<Integer, Listener> LISTENERS = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(20000);
    private static final AtomicInteger IDS = new AtomicInteger();

    @Override
    public String name() {
        return "loop";
    }

    @Override
    public int transportType() {
        return TRTYPE_LOOP;
    }

    @Override
    public TargetListener listen(ListenerOptions options, QueueAcceptor acceptor) throws IOException {
        int port = options.address().getPort();
        InetAddress addr = options.address().getAddress() != null
                ? options.address().getAddress()
                : InetAddress.getLoopbackAddress();
        while (true) {
            int p = port != 0 ? port : NEXT_PORT.getAndIncrement();
            Listener l = new Listener(new InetSocketAddress(addr, p), options, acceptor);
            if (LISTENERS.putIfAbsent(p, l) == null) {
                return l;
            }
            if (port != 0) {
                throw new IOException("loop port " + port + " is already in use");
            }
        }
    }

    @Override
    public HostQueue connect(HostQueueOptions options) throws IOException {
        Listener l = LISTENERS.get(options.address().getPort());
        if (l == null) {
            throw new IOException("connection refused: nothing listens on loop port "
                    + options.address().getPort());
        }
        return l.connect(options);
    }

    /** Holds every command sent to {@code port} from now on (the target stalls) until {@link #resume(int)}. */
    public static void pause(int port) {
        listener(port).paused = true;
    }

    /** Delivers the held commands and stops holding. */
    public static void resume(int port) {
        Listener l = listener(port);
        l.paused = false;
        for (Connection c : l.connections) {
            c.releaseHeld();
        }
    }

    /** Drops every connection to {@code port}: both sides see the queue fail. The listener stays. */
    public static void disconnect(int port) {
        for (Connection c : listener(port).connections) {
            c.close(new IOException("loop connection to port " + port + " dropped"));
        }
    }

    /** Connections currently open to {@code port}. */
    public static int connectionCount(int port) {
        return listener(port).connections.size();
    }

    private static Listener listener(int port) {
        Listener l = LISTENERS.get(port);
        if (l == null) {
            throw new IllegalArgumentException("nothing listens on loop port " + port);
        }
        return l;
    }

    private static final class Listener implements TargetListener {
        final InetSocketAddress address;
        final ListenerOptions options;
        final QueueAcceptor acceptor;
        final PortInfo portInfo;
        final List<Connection> connections = new CopyOnWriteArrayList<>();
        volatile boolean paused;
        final AtomicBoolean open = new AtomicBoolean(true);

        Listener(InetSocketAddress address, ListenerOptions options, QueueAcceptor acceptor) {
            this.address = address;
            this.options = options;
            this.acceptor = acceptor;
            this.portInfo = new PortInfo(
                    TRTYPE_LOOP,
                    PortInfo.ADRFAM_IPV4,
                    address.getAddress().getHostAddress(),
                    Integer.toString(address.getPort()),
                    options.portId(),
                    options.maxQueueSize(),
                    options.inCapsuleDataSize(),
                    0x00100001,
                    0,
                    0,
                    new byte[0]);
        }

        Connection connect(HostQueueOptions o) throws IOException {
            if (!open.get()) {
                throw new IOException("connection refused: loop port " + address.getPort() + " is closed");
            }
            Connection c = new Connection(this, o);
            connections.add(c);
            c.start();
            return c;
        }

        @Override
        public InetSocketAddress localAddress() {
            return address;
        }

        @Override
        public PortInfo portInfo() {
            return portInfo;
        }

        @Override
        public void close() {
            if (open.compareAndSet(true, false)) {
                LISTENERS.remove(address.getPort(), this);
                for (Connection c : connections) {
                    c.close(new IOException("loop listener on port " + address.getPort() + " closed"));
                }
            }
        }
    }

    /** One queue: the host end (this {@link HostQueue}) and the target end ({@link #targetEnd}). */
    private static final class Connection implements HostQueue {
        final Listener listener;
        final HostQueueOptions options;
        final int id = IDS.incrementAndGet();
        final ExecutorService hostThread;
        final ExecutorService targetThread;
        volatile Thread hostThreadRef;
        volatile Thread targetThreadRef;
        final HostCommand[] inflight;
        final AtomicBoolean open = new AtomicBoolean(true);
        /** Set on the host thread by the close task; later host tasks fail their commands. */
        boolean hostClosed;
        /** Set on the target thread by the close task. */
        boolean targetClosed;

        volatile Consumer<Throwable> closeListener;
        volatile int maxInCapsule;
        volatile int connectedQid = -1;
        QueueHandler handler;
        final List<Request> held = new ArrayList<>();

        Connection(Listener listener, HostQueueOptions options) {
            this.listener = listener;
            this.options = options;
            this.inflight = new HostCommand[options.queueSize()];
            this.hostThread = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "loop-host-" + id + "-q" + options.qid());
                t.setDaemon(true);
                hostThreadRef = t;
                return t;
            });
            this.targetThread = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "loop-target-" + id + "-q" + options.qid());
                t.setDaemon(true);
                targetThreadRef = t;
                return t;
            });
        }

        void start() throws IOException {
            try {
                handler = targetThread
                        .submit(() -> listener.acceptor.accept(targetEnd))
                        .get();
            } catch (Exception e) {
                throw new IOException("the target refused the loop connection: " + e, e);
            }
        }

        // ---- host side ----

        @Override
        public int qid() {
            return options.qid();
        }

        @Override
        public void maxInCapsuleData(int bytes) {
            maxInCapsule = bytes;
        }

        @Override
        public void submit(HostCommand command) {
            if (!open.get()) {
                throw new IllegalStateException("loop queue " + options.qid() + " is closed");
            }
            try {
                hostThread.execute(() -> send(command));
            } catch (RejectedExecutionException e) {
                throw new IllegalStateException("loop queue " + options.qid() + " is closed");
            }
        }

        /** Host thread: registers the command and hands a copy of it (and its data) to the target thread. */
        private void send(HostCommand command) {
            if (hostClosed) {
                command.onTransportError(new IOException("loop queue closed"));
                return;
            }
            int cid = command.command().cid();
            if (cid >= inflight.length || inflight[cid] != null) {
                throw new IllegalStateException("CID " + cid + " is out of range or in flight");
            }
            inflight[cid] = command;
            Request r = new Request(this, command);
            if (listener.paused) {
                synchronized (held) {
                    held.add(r);
                }
                return;
            }
            deliver(r);
        }

        void releaseHeld() {
            List<Request> copy;
            synchronized (held) {
                copy = new ArrayList<>(held);
                held.clear();
            }
            for (Request r : copy) {
                deliver(r);
            }
        }

        private void deliver(Request r) {
            try {
                targetThread.execute(() -> {
                    if (!targetClosed) {
                        handler.onCommand(r);
                    }
                });
            } catch (RejectedExecutionException e) {
                // closing: the host side fails the command
            }
        }

        /** Target thread → host thread: the response. */
        void respond(Request r) {
            ByteBuffer cqe = ByteBuffer.allocate(CompletionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            cqe.put(0, r.response().buffer(), r.response().offset(), CompletionQueueEntry.LENGTH);
            try {
                hostThread.execute(() -> {
                    if (hostClosed) {
                        return;
                    }
                    CompletionQueueEntry e = new CompletionQueueEntry();
                    e.wrap(cqe, 0);
                    HostCommand c = inflight[e.cid()];
                    if (c == null) {
                        return;
                    }
                    inflight[e.cid()] = null;
                    c.onResponse(e);
                });
            } catch (RejectedExecutionException e) {
                // closed meanwhile
            }
        }

        @Override
        public void onClose(Consumer<Throwable> listener) {
            this.closeListener = listener;
        }

        @Override
        public void execute(Runnable task) {
            try {
                hostThread.execute(task);
            } catch (RejectedExecutionException e) {
                // dropped after close
            }
        }

        @Override
        public boolean inQueueThread() {
            return Thread.currentThread() == hostThreadRef;
        }

        @Override
        public boolean isOpen() {
            return open.get();
        }

        @Override
        public void close() {
            close(null);
        }

        void close(Throwable cause) {
            if (!open.compareAndSet(true, false)) {
                return;
            }
            listener.connections.remove(this);
            try {
                targetThread.execute(() -> {
                    targetClosed = true;
                    if (handler != null) {
                        handler.onClose(cause);
                    }
                });
            } catch (RejectedExecutionException e) {
                // already down
            }
            targetThread.shutdown();
            hostThread.execute(() -> {
                hostClosed = true;
                Throwable error = cause != null ? cause : new IOException("loop queue " + options.qid() + " closed");
                for (int i = 0; i < inflight.length; i++) {
                    HostCommand c = inflight[i];
                    if (c != null) {
                        inflight[i] = null;
                        c.onTransportError(error);
                    }
                }
                synchronized (held) {
                    held.clear();
                }
                Consumer<Throwable> l = closeListener;
                if (l != null) {
                    l.accept(cause);
                }
            });
            hostThread.shutdown();
        }

        /** The target end of the connection, as the target core sees it. */
        final QueueChannel targetEnd = new QueueChannel() {
            @Override
            public PortInfo portInfo() {
                return listener.portInfo;
            }

            @Override
            public SocketAddress remoteAddress() {
                return new InetSocketAddress(InetAddress.getLoopbackAddress(), 40000 + id % 20000);
            }

            @Override
            public SocketAddress localAddress() {
                return listener.address;
            }

            @Override
            public void connected(int qid, int sqsize, boolean sqFlowControlDisabled) {
                connectedQid = qid;
            }

            @Override
            public void execute(Runnable task) {
                try {
                    targetThread.execute(() -> {
                        if (!targetClosed) {
                            task.run();
                        }
                    });
                } catch (RejectedExecutionException e) {
                    // dropped after close, as QueueChannel allows
                }
            }

            @Override
            public boolean inQueueThread() {
                return Thread.currentThread() == targetThreadRef;
            }

            @Override
            public void close() {
                Connection.this.close(new IOException("the target closed loop queue " + options.qid()));
            }

            @Override
            public boolean isOpen() {
                return open.get();
            }
        };
    }

    /** One command as the target sees it: copies of the SQE and of host-to-controller data. */
    private static final class Request extends TargetRequestBase {
        final Connection connection;
        final HostCommand host;
        ByteBuffer data;
        int produced;

        Request(Connection connection, HostCommand host) {
            this.connection = connection;
            this.host = host;
            SubmissionQueueEntry sqe = command();
            sqe.buffer().put(0, host.command().buffer(), host.command().offset(), SubmissionQueueEntry.LENGTH);
            begin();
            int length = host.dataLength();
            int opc = sqe.opcode();
            boolean toController = DataDirection.of(sqe) == DataDirection.HOST_TO_CONTROLLER;
            // In-capsule like NVMe/TCP: fabrics and admin commands up to 8192 bytes, I/O up to the negotiated size.
            int limit =
                    opc == FabricsCommandType.OPCODE || connection.options.qid() == 0 ? 8192 : connection.maxInCapsule;
            boolean inCapsule = toController && length > 0 && length <= limit;
            dataLength(length);
            inCapsuleData(inCapsule);
            sqe.sgl().set(inCapsule ? SglDescriptor.ID_IN_CAPSULE : SglDescriptor.ID_TCP_TRANSPORT, 0, length);
            if (toController && length > 0) {
                data = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
                data.put(0, host.dataBuffer(), host.dataOffset(), length);
            }
        }

        @Override
        protected void transferData(DataReceiver receiver) {
            receiver.onData(this, 0);
        }

        @Override
        public ByteBuffer data() {
            return data;
        }

        @Override
        public void addData(ByteBuffer source, int offset, int len, DataRelease release) {
            try {
                if (produced + len > dataLength()) {
                    throw new IllegalStateException("more data than the command's " + dataLength() + " bytes");
                }
                // Like an RDMA Write: straight into the host's buffer.
                host.dataBuffer().put(host.dataOffset() + produced, source, offset, len);
                produced += len;
            } finally {
                release.release();
            }
        }

        @Override
        protected void sendResponse() {
            connection.respond(this);
        }
    }
}

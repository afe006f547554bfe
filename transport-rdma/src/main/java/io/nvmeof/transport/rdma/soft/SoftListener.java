package io.nvmeof.transport.rdma.soft;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.ConnectionRequest;
import io.nvmeof.transport.rdma.verbs.ConnectionRequestHandler;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/** A CM listener: a TCP server socket; one provider thread per incoming request, which later reads its CM messages. */
final class SoftListener implements RdmaListener {
    private static final Logger LOG = Logger.getLogger(SoftListener.class.getName());

    private final SoftRdmaProvider provider;
    private final SoftDevice device;
    private final ConnectionRequestHandler handler;
    private final ServerSocket server;
    private final InetSocketAddress localAddress;
    private volatile boolean closed;

    SoftListener(
            SoftRdmaProvider provider, SoftDevice device, InetSocketAddress address, ConnectionRequestHandler handler)
            throws IOException {
        this.provider = provider;
        this.device = device;
        this.handler = handler;
        this.server = new ServerSocket();
        try {
            server.setReuseAddress(true);
            server.bind(address, 128);
        } catch (IOException e) {
            server.close();
            throw new IOException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
        this.localAddress = (InetSocketAddress) server.getLocalSocketAddress();
        Thread t = new Thread(this::acceptLoop, "softrnic-listen-" + localAddress.getPort());
        t.setDaemon(true);
        t.start();
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    private void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(Level.WARNING, "software RNIC listener on " + localAddress + " failed", e);
                }
                return;
            }
            Thread t = new Thread(() -> handle(s), "softrnic-cm-" + localAddress.getPort() + "-" + s.getPort());
            t.setDaemon(true);
            t.start();
        }
    }

    private void handle(Socket s) {
        Request req;
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout(10_000);
            req = new Request(s);
            if (Cm.readType(req.in) != Cm.REQ) {
                throw new IOException("expected a connect request");
            }
            req.hello = Cm.readHello(req.in);
            if (req.hello.privateData().length > Cm.MAX_REQ_PRIVATE) {
                throw new IOException("connect private data too long");
            }
            s.setSoTimeout(0);
        } catch (IOException e) {
            close(s);
            return;
        }
        try {
            handler.onConnectionRequest(req);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "connection request handler failed; rejecting", e);
            if (req.decided.compareAndSet(false, true)) {
                req.rejectNow(new byte[0]);
            }
        }
        try {
            req.decision.await();
        } catch (InterruptedException e) {
            close(s);
            return;
        }
        if (req.connection != null) {
            req.connection.runReader();
        }
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    private final class Request implements ConnectionRequest {
        final Socket socket;
        final java.io.DataInputStream in;
        final java.io.DataOutputStream out;
        final AtomicBoolean decided = new AtomicBoolean();
        final CountDownLatch decision = new CountDownLatch(1);
        Cm.Hello hello;
        volatile SoftConnection connection;

        Request(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new java.io.DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
            this.out = new java.io.DataOutputStream(new java.io.BufferedOutputStream(socket.getOutputStream()));
        }

        @Override
        public ByteBuffer privateData() {
            return Cm.view(hello.privateData());
        }

        @Override
        public InetSocketAddress remoteAddress() {
            return (InetSocketAddress) socket.getRemoteSocketAddress();
        }

        @Override
        public InetSocketAddress localAddress() {
            return (InetSocketAddress) socket.getLocalSocketAddress();
        }

        @Override
        public int peerResponderResources() {
            return hello.attributes().responderResources();
        }

        @Override
        public ProtectionDomain protectionDomain() {
            return device.pd;
        }

        @Override
        public RdmaConnection accept(
                QueuePairAttributes attributes,
                CompletionQueue sharedCq,
                SharedReceiveQueue srq,
                Consumer<RdmaConnection> receivesToPost,
                ByteBuffer privateData)
                throws IOException {
            if ((sharedCq != null && !(sharedCq instanceof SoftCompletionQueue c && c.device == device))
                    || (srq != null && !(srq instanceof SoftSharedReceiveQueue r && r.device == device))) {
                throw new IllegalArgumentException("the shared CQ and SRQ must come from this device's PD");
            }
            byte[] priv = Cm.bytes(privateData, Cm.MAX_REP_PRIVATE, "accept");
            if (!decided.compareAndSet(false, true)) {
                throw new IllegalStateException("connection request already accepted or rejected");
            }
            SoftQueuePair qp = null;
            try {
                qp = new SoftQueuePair(
                        device,
                        attributes,
                        provider.rnrTimeoutNanos(),
                        (SoftCompletionQueue) sharedCq,
                        (SoftSharedReceiveQueue) srq);
                SoftConnection conn = new SoftConnection(qp, socket, in, out);
                qp.connectPeer(hello.pid(), hello.qpFile(), hello.attributes(), hello.pd());
                qp.initiatorDepth =
                        Math.min(attributes.initiatorDepth(), hello.attributes().responderResources());
                conn.peerPrivateData = Cm.view(hello.privateData());
                if (receivesToPost != null) {
                    receivesToPost.accept(conn);
                }
                qp.setState(SoftQueuePair.RTS); // rdma_accept moves the QP through RTR to RTS
                synchronized (out) {
                    Cm.writeHello(out, Cm.REP, new Cm.Hello(device.pid, qp.fileName, attributes, qp.pd.id, priv));
                }
                connection = conn;
                return conn;
            } catch (IOException | RuntimeException e) {
                if (qp != null) {
                    qp.destroy();
                }
                close(socket);
                throw e;
            } finally {
                decision.countDown();
            }
        }

        @Override
        public void reject(ByteBuffer privateData) throws IOException {
            byte[] priv = Cm.bytes(privateData, Cm.MAX_REJ_PRIVATE, "reject");
            if (!decided.compareAndSet(false, true)) {
                throw new IllegalStateException("connection request already accepted or rejected");
            }
            try {
                Cm.writeReject(out, priv);
            } finally {
                rejectNow(null);
            }
        }

        void rejectNow(byte[] priv) {
            try {
                if (priv != null) {
                    Cm.writeReject(out, priv);
                }
            } catch (IOException ignored) {
                // the requester is gone
            } finally {
                // Delete the requester's queue file: it never got mapped by us. The requester also deletes it.
                close(socket);
                decision.countDown();
            }
        }
    }
}

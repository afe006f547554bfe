package io.nvmeof.transport.rdma.soft;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A software RNIC connection: a QP/CQ in shared memory plus the CM socket. The socket's reader thread handles DREQ
 * and the socket closing (the peer process died): either moves both QPs to ERROR and tells the listeners once.
 */
final class SoftConnection implements RdmaConnection {
    private static final Logger LOG = Logger.getLogger(SoftConnection.class.getName());

    final SoftQueuePair qp;
    private final Socket socket;
    final DataInputStream in;
    final DataOutputStream out;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final AtomicBoolean dreqSent = new AtomicBoolean();
    private final List<Runnable> listeners = new ArrayList<>();
    private boolean gone;
    private volatile Thread reader;
    volatile ByteBuffer peerPrivateData = Cm.view(new byte[0]);

    SoftConnection(SoftQueuePair qp, Socket socket) throws IOException {
        this(
                qp,
                socket,
                new DataInputStream(new BufferedInputStream(socket.getInputStream())),
                new DataOutputStream(new BufferedOutputStream(socket.getOutputStream())));
    }

    SoftConnection(SoftQueuePair qp, Socket socket, DataInputStream in, DataOutputStream out) {
        this.qp = qp;
        this.socket = socket;
        this.in = in;
        this.out = out;
        this.local = (InetSocketAddress) socket.getLocalSocketAddress();
        this.remote = (InetSocketAddress) socket.getRemoteSocketAddress();
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return qp.pd;
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public CompletionQueue completionQueue() {
        return qp.sharedCq != null ? qp.sharedCq : qp;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public int initiatorDepth() {
        return qp.initiatorDepth;
    }

    @Override
    public ByteBuffer peerPrivateData() {
        return peerPrivateData.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public void onDisconnect(Runnable listener) {
        synchronized (this) {
            if (!gone) {
                listeners.add(listener);
                return;
            }
        }
        listener.run();
    }

    @Override
    public void disconnect() {
        if (!dreqSent.compareAndSet(false, true)) {
            return;
        }
        qp.toError(true);
        try {
            synchronized (out) {
                Cm.writeDisconnect(out);
            }
        } catch (IOException e) {
            closeSocket(); // the reader sees it and reports the disconnect
        }
    }

    /** Starts the CM reader on a new daemon thread (connecting side). */
    void startReader() {
        Thread t = new Thread(this::runReader, "softrnic-cm-" + local.getPort() + "-" + remote.getPort());
        t.setDaemon(true);
        reader = t;
        t.start();
    }

    /** Reads CM messages until DREQ or the socket closes, then reports the disconnect (on this provider thread). */
    void runReader() {
        reader = Thread.currentThread();
        try {
            socket.setSoTimeout(0);
            for (; ; ) {
                int type = Cm.readType(in);
                if (type == Cm.DREQ) {
                    break;
                }
                throw new IOException("unexpected CM message " + type);
            }
        } catch (IOException e) {
            // socket closed: peer died or closed without DREQ
        } finally {
            qp.toError(true);
            if (dreqSent.compareAndSet(false, true)) {
                try {
                    synchronized (out) {
                        Cm.writeDisconnect(out);
                    }
                } catch (IOException ignored) {
                    // the peer is gone
                }
            }
            closeSocket();
            fireGone();
        }
    }

    private void fireGone() {
        List<Runnable> toRun;
        synchronized (this) {
            if (gone) {
                return;
            }
            gone = true;
            toRun = new ArrayList<>(listeners);
            listeners.clear();
        }
        for (Runnable r : toRun) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "onDisconnect listener failed", e);
            }
        }
    }

    private void closeSocket() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    /**
     * Disconnects (both QPs to ERROR at once, DREQ sent), closes the CM socket and frees the QP, without waiting for
     * the peer's DREQ: the reader thread sees the socket close and tells the listeners. Never blocks, so a thread
     * that serves many connections (a target poll group) can close one without stalling the others.
     */
    @Override
    public void close() {
        disconnect();
        closeSocket();
        if (reader == null) {
            fireGone();
        }
        qp.destroy();
    }

    @Override
    public String toString() {
        return "soft RC connection " + local + " -> " + remote + " (" + qp + ")";
    }
}

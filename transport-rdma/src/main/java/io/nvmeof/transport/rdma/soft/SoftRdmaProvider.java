package io.nvmeof.transport.rdma.soft;

import io.nvmeof.transport.rdma.verbs.ConnectionRequestHandler;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import io.nvmeof.transport.rdma.verbs.RdmaRejectedException;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The software RNIC ("soft"): RC verbs between threads or processes of one host through shared memory, for machines
 * without RDMA hardware. Everything measured over it is labelled {@value #DESCRIPTION}.
 *
 * <p>Memory regions live in memory-mapped files under {@code /dev/shm/nvmeof-softrnic} (system property
 * {@code nvmeof.softrnic.dir}); one-sided RDMA Write/Read copy straight into/out of the peer's registered region without
 * the peer's threads; a Send is placed into the peer's next posted receive by the sending thread. Connection management
 * runs over a loopback TCP socket at the listener's address. The receiver-not-ready retry time is
 * {@code nvmeof.softrnic.rnrTimeoutMs} (default 1000 ms) or the constructor's argument.
 */
public final class SoftRdmaProvider implements RdmaProvider {
    public static final String NAME = "soft";
    public static final String DESCRIPTION = "software RNIC (emulated)";
    public static final String RNR_TIMEOUT_PROPERTY = "nvmeof.softrnic.rnrTimeoutMs";

    private final long rnrTimeoutNanos;

    /** The ServiceLoader constructor: RNR timeout from {@value #RNR_TIMEOUT_PROPERTY}, default 1 s. */
    public SoftRdmaProvider() {
        this(Duration.ofMillis(Long.getLong(RNR_TIMEOUT_PROPERTY, 1000L)));
    }

    /** @param rnrTimeout how long a Send retries when the peer has no receive posted before RNR_RETRY_EXC_ERR */
    public SoftRdmaProvider(Duration rnrTimeout) {
        if (rnrTimeout.isNegative()) {
            throw new IllegalArgumentException("negative RNR timeout");
        }
        this.rnrTimeoutNanos = rnrTimeout.toNanos();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean isAvailable() {
        return SoftDevice.probe() == null;
    }

    @Override
    public String unavailableReason() {
        return SoftDevice.probe();
    }

    @Override
    public boolean isEmulated() {
        return true;
    }

    @Override
    public String description() {
        return DESCRIPTION;
    }

    @Override
    public RdmaListener listen(InetSocketAddress address, ConnectionRequestHandler handler) throws IOException {
        SoftDevice device = SoftDevice.get();
        return new SoftListener(this, device, address, handler);
    }

    long rnrTimeoutNanos() {
        return rnrTimeoutNanos;
    }

    @Override
    public RdmaConnection connect(
            InetSocketAddress address,
            QueuePairAttributes attributes,
            ByteBuffer privateData,
            Consumer<RdmaConnection> receivesToPost,
            Duration timeout)
            throws IOException {
        byte[] priv = Cm.bytes(privateData, Cm.MAX_REQ_PRIVATE, "connect");
        SoftDevice device = SoftDevice.get();
        long deadline = System.nanoTime() + timeout.toNanos();
        Socket socket = new Socket();
        SoftQueuePair qp = null;
        boolean ok = false;
        try {
            socket.setTcpNoDelay(true);
            socket.connect(address, (int) Math.max(1, timeout.toMillis()));
            qp = new SoftQueuePair(device, attributes, rnrTimeoutNanos);
            SoftConnection conn = new SoftConnection(qp, socket);
            if (receivesToPost != null) {
                receivesToPost.accept(conn);
            }
            qp.setState(SoftQueuePair.RTR); // receives may arrive as soon as the peer accepted
            Cm.writeHello(conn.out, Cm.REQ, new Cm.Hello(device.pid, qp.fileName, attributes, qp.pd.id, priv));
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new SocketTimeoutException();
            }
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
            int type = Cm.readType(conn.in);
            if (type == Cm.REJ) {
                byte[] rej = Cm.readPrivate(conn.in, Cm.MAX_REJ_PRIVATE);
                throw new RdmaRejectedException(
                        "connection to " + address + " rejected by the peer (" + DESCRIPTION + ")", rej);
            }
            if (type != Cm.REP) {
                throw new IOException("unexpected CM message " + type + " from " + address);
            }
            Cm.Hello rep = Cm.readHello(conn.in);
            qp.connectPeer(rep.pid(), rep.qpFile(), rep.attributes(), rep.pd());
            qp.initiatorDepth =
                    Math.min(attributes.initiatorDepth(), rep.attributes().responderResources());
            conn.peerPrivateData = Cm.view(rep.privateData());
            qp.setState(SoftQueuePair.RTS);
            conn.startReader();
            ok = true;
            return conn;
        } catch (SocketTimeoutException e) {
            throw new IOException(
                    "connect to " + address + " timed out after " + timeout.toMillis() + " ms (" + DESCRIPTION + ")",
                    e);
        } catch (EOFException e) {
            throw new IOException(
                    "connect to " + address + ": the peer closed the connection (" + DESCRIPTION + ")", e);
        } finally {
            if (!ok) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // failing anyway
                }
                if (qp != null) {
                    qp.destroy();
                }
            }
        }
    }

    @Override
    public String toString() {
        return DESCRIPTION;
    }
}

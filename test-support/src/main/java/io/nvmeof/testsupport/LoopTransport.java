package io.nvmeof.testsupport;

import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

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
 *
 * <p>This class owns the registry and the fault injection; a port is a {@link LoopListener}, a queue a
 * {@link LoopConnection}, a command as the target sees it a {@link LoopRequest}.
 */
public final class LoopTransport implements Transport {
    /** TRTYPE "intra-host" / loop (nvmeof-protocol.md §3.3). */
    public static final int TRTYPE_LOOP = 0xFE;

    private static final Map<Integer, LoopListener> LISTENERS = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(20000);

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
            LoopListener l = new LoopListener(new InetSocketAddress(addr, p), options, acceptor);
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
        LoopListener l = LISTENERS.get(options.address().getPort());
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
        LoopListener l = listener(port);
        l.paused = false;
        for (LoopConnection c : l.connections) {
            c.releaseHeld();
        }
    }

    /** Drops every connection to {@code port}: both sides see the queue fail. The listener stays. */
    public static void disconnect(int port) {
        for (LoopConnection c : listener(port).connections) {
            c.close(new IOException("loop connection to port " + port + " dropped"));
        }
    }

    /** Connections currently open to {@code port}. */
    public static int connectionCount(int port) {
        return listener(port).connections.size();
    }

    private static LoopListener listener(int port) {
        LoopListener l = LISTENERS.get(port);
        if (l == null) {
            throw new IllegalArgumentException("nothing listens on loop port " + port);
        }
        return l;
    }

    /** Takes a closed listener out of the registry (its port may be listened on again). */
    static void unregister(LoopListener l) {
        LISTENERS.remove(l.address.getPort(), l);
    }
}

package io.nvmeof.target;

import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.namespace.ChunkMemory;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The listeners of one {@link NvmeTarget} and the ports the discovery log lists (nvmeof-protocol.md §3.3): binds a
 * {@link ListenerConfig} through its transport with a PORTID, lets a listener that registers memory (RDMA) see the
 * namespace chunks, and closes listeners again. Owned by the target, which opens and closes listeners under its own
 * lock; the lists are copy-on-write, so the discovery log and the queues' threads read them without one. Every change
 * to the ports is a {@link DiscoveryLog#changed} (GENCTR and the change notice).
 */
final class TargetPorts {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");

    private final CopyOnWriteArrayList<PortInfo> ports = new CopyOnWriteArrayList<>();
    private final CopyOnWriteArrayList<TargetListener> listeners = new CopyOnWriteArrayList<>();
    /** The target's namespace memory, which listeners with a memory observer see. */
    private final ChunkMemory chunkMemory;
    /** The hosts' TLS PSKs, which listeners with TLS choose from. */
    private final TlsKeys tlsKeys;
    /** Where queues that arrive on a listener go. */
    private final QueueAcceptor acceptor;

    private final DiscoveryLog discoveryLog;

    TargetPorts(ChunkMemory chunkMemory, TlsKeys tlsKeys, QueueAcceptor acceptor, DiscoveryLog discoveryLog) {
        this.chunkMemory = chunkMemory;
        this.tlsKeys = tlsKeys;
        this.acceptor = acceptor;
        this.discoveryLog = discoveryLog;
    }

    /** Binds one listener with PORTID {@code portId}, lists it in the discovery log and returns it. */
    TargetListener open(ListenerConfig lc, int portId) throws IOException {
        Transport transport = Transport.find(lc.transport());
        if (!transport.isAvailable()) {
            throw new IOException(
                    "transport " + lc.transport() + " is not available: " + transport.unavailableReason());
        }
        int queueSize = lc.maxQueueSize() > 0 ? lc.maxQueueSize() : ListenerOptions.DEFAULT_MAX_QUEUE_SIZE;
        int inCapsule =
                lc.inCapsuleDataSize() > 0 ? lc.inCapsuleDataSize() : ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE;
        ListenerOptions options = new ListenerOptions(
                new InetSocketAddress(lc.address(), lc.port()),
                portId,
                queueSize,
                inCapsule,
                0,
                true,
                lc.ioMode(),
                lc.secureChannel(),
                tlsKeys);
        if (lc.secureChannel().tls() && tlsKeys.isEmpty()) {
            LOG.log(
                    Level.WARNING,
                    "listener " + lc.address() + ":" + lc.port() + " has TLS "
                            + lc.secureChannel().configName()
                            + " but no host has a TLS key yet (--tls-key, \"tlsKeys\", nvmf_subsystem_add_host --psk)");
        }
        TargetListener listener;
        try {
            listener = transport.listen(options, acceptor);
        } catch (IOException e) {
            throw new IOException(
                    "cannot listen on " + lc.transport() + "://" + lc.address() + ":" + lc.port() + ": "
                            + e.getMessage(),
                    e);
        }
        listeners.add(listener);
        attachMemory(listener);
        register(listener.portInfo());
        LOG.log(
                Level.INFO,
                "listening on " + lc.transport() + " " + listener.localAddress() + " (port ID " + portId + ", "
                        + options.ioMode()
                        + (lc.secureChannel().tls()
                                ? ", TLS " + lc.secureChannel().configName()
                                : "")
                        + ")");
        return listener;
    }

    /** Lets a listener that wants the namespace memory (RDMA: to register it) see every chunk. */
    private void attachMemory(TargetListener listener) {
        if (listener.memoryObserver() != null) {
            chunkMemory.attach(listener.memoryObserver());
        }
    }

    private void detachMemory(TargetListener listener) {
        if (listener.memoryObserver() != null) {
            chunkMemory.detach(listener.memoryObserver());
        }
    }

    /** Lists {@code port} in the discovery log, unless a port with the same type, PORTID and address is there. */
    void register(PortInfo port) {
        for (PortInfo p : ports) {
            if (p.transportType() == port.transportType()
                    && p.portId() == port.portId()
                    && p.address().equals(port.address())
                    && p.serviceId().equals(port.serviceId())) {
                return;
            }
        }
        ports.add(port);
        discoveryLog.changed();
    }

    /** The ports the discovery log lists, as they are now (a copy-on-write list: iterate, do not change). */
    List<PortInfo> ports() {
        return ports;
    }

    /** The PORTIDs of the ports listed now. */
    List<Integer> portIds() {
        List<Integer> ids = new ArrayList<>();
        ports.forEach(p -> ids.add(p.portId()));
        return ids;
    }

    /** The PORTID a listener opened now gets: one above the highest listed. */
    int nextPortId() {
        int portId = 1;
        for (PortInfo p : ports) {
            portId = Math.max(portId, p.portId() + 1);
        }
        return portId;
    }

    List<TargetListener> listeners() {
        return List.copyOf(listeners);
    }

    /** The addresses actually bound, in the order the listeners were opened. */
    List<InetSocketAddress> boundAddresses() {
        List<InetSocketAddress> out = new ArrayList<>();
        for (TargetListener l : listeners) {
            out.add(l.localAddress());
        }
        return out;
    }

    /**
     * Closes the listener with PORTID {@code portId} (and so its queues) and drops its port from the list; returns it,
     * or null if there is none. The caller tells the subsystems and the discovery log.
     */
    TargetListener close(int portId) {
        for (TargetListener l : listeners) {
            if (l.portInfo().portId() == portId) {
                listeners.remove(l);
                l.close();
                detachMemory(l);
                ports.removeIf(p -> p.portId() == portId);
                return l;
            }
        }
        return null;
    }

    /** Closes every listener (and so their queues); a listener that fails to close is logged and skipped. */
    void closeAll() {
        for (TargetListener l : listeners) {
            try {
                l.close();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "closing listener " + l.localAddress() + " failed", e);
            }
            detachMemory(l);
        }
        listeners.clear();
    }
}

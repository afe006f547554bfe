package io.nvmeof.core.spi;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * An NVMe-oF transport binding (NVMe/TCP, NVMe/RDMA). A transport moves capsules and data; it knows its binding and
 * nothing about namespaces or controllers. Implementations are found at run time with {@link ServiceLoader}
 * ({@code META-INF/services/io.nvmeof.core.spi.Transport}), so adding one touches no other module.
 */
public interface Transport {
    /** The scheme name: "tcp" or "rdma". */
    String name();

    /** TRTYPE for discovery log entries: 3 TCP, 1 RDMA (nvmeof-protocol.md §3.3). */
    int transportType();

    /** Whether this transport can run on this machine; {@link #unavailableReason()} says why not. */
    default boolean isAvailable() {
        return true;
    }

    default String unavailableReason() {
        return null;
    }

    /**
     * Starts listening for host connections, one queue per connection. Each accepted connection is handed to
     * {@code acceptor} on the thread that will own that queue.
     *
     * @throws IOException if the address cannot be bound (e.g. the port is in use)
     */
    TargetListener listen(ListenerOptions options, QueueAcceptor acceptor) throws IOException;

    /**
     * Opens one host queue to a controller, connected at transport level (TCP: connect + ICReq/ICResp, nvmeof-protocol.md §5.4; RDMA: CM
     * connect with private data, nvmeof-protocol.md §6.1) and ready for the fabrics Connect command.
     *
     * @throws IOException if the controller cannot be reached or refuses the connection
     */
    default HostQueue connect(HostQueueOptions options) throws IOException {
        throw new UnsupportedOperationException("the " + name() + " transport has no host side");
    }

    /** The transport with this name, or an {@link IllegalArgumentException} naming the ones that exist. */
    static Transport find(String name) {
        List<String> names = new ArrayList<>();
        for (Transport t : ServiceLoader.load(Transport.class)) {
            if (t.name().equalsIgnoreCase(name)) {
                return t;
            }
            names.add(t.name());
        }
        throw new IllegalArgumentException(
                "no transport named '" + name + "' on the class path (found: " + names + ")");
    }
}

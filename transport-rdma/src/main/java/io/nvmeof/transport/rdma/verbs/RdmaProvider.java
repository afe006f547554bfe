package io.nvmeof.transport.rdma.verbs;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * A verbs implementation: DiSNI ("disni") over a real RNIC or Soft-RoCE, or the software RNIC ("soft").
 * Providers are found with {@link java.util.ServiceLoader}.
 */
public interface RdmaProvider {
    /** "disni" or "soft". */
    String name();

    /** Whether this provider can work here (an RDMA device and the native library for DiSNI). */
    boolean isAvailable();

    /** Why {@link #isAvailable()} is false, in words a user can act on; null when available. */
    String unavailableReason();

    /** True for the software RNIC: every result produced over it must be labelled "software RNIC (emulated)". */
    boolean isEmulated();

    /** What results are labelled with, e.g. "DiSNI on rxe0" or "software RNIC (emulated)". */
    String description();

    /**
     * Listens for connection requests (rdma_bind_addr + rdma_listen, port space TCP, nvmeof-protocol.md §6.1). Each request is handed to
     * {@code handler} on a provider thread; the handler accepts or rejects it.
     *
     * @throws IOException if the address cannot be bound
     */
    RdmaListener listen(InetSocketAddress address, ConnectionRequestHandler handler) throws IOException;

    /**
     * Connects to a listener (address and route resolution, QP creation, rdma_connect with {@code privateData}) and
     * waits until the connection is established.
     *
     * @param receivesToPost called after the QP exists and before the connect request is sent, so receive buffers can
     *                       be posted first (may be null)
     * @throws RdmaRejectedException if the peer rejected, with its reject private data
     * @throws IOException           on any other failure (unreachable, timeout, ...)
     */
    RdmaConnection connect(
            InetSocketAddress address,
            QueuePairAttributes attributes,
            ByteBuffer privateData,
            java.util.function.Consumer<RdmaConnection> receivesToPost,
            Duration timeout)
            throws IOException;
}

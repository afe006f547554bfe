package io.nvmeof.transport.rdma.verbs;

import java.net.InetSocketAddress;

/**
 * An RC connection: one QP, its CQ and the protection domain its memory is registered in. Owned by one thread (the
 * one that polls its CQ), except {@link #disconnect()} and {@link #onDisconnect}.
 */
public interface RdmaConnection extends AutoCloseable {
    ProtectionDomain protectionDomain();

    QueuePair queuePair();

    CompletionQueue completionQueue();

    InetSocketAddress remoteAddress();

    InetSocketAddress localAddress();

    /** RDMA Read resources negotiated for our reads against the peer (initiator depth after CM). */
    int initiatorDepth();

    /**
     * Told once when the connection goes away (peer disconnect, our disconnect, device error), on a provider thread.
     * The QP is in the error state by then; outstanding work completes with {@link WorkCompletion.Status#WR_FLUSH_ERR}.
     */
    void onDisconnect(Runnable listener);

    /** rdma_disconnect: the QP goes to the error state and the peer is told; from any thread. */
    void disconnect();

    /** Disconnects if needed and frees the QP, CQ and the connection's resources (not the PD's memory regions). */
    @Override
    void close();
}

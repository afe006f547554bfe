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

    /**
     * The private data the peer sent when the connection was made: on the connecting side the accept's (NVMe/RDMA:
     * RECFMT + CRQSIZE, nvmeof-protocol.md §6.1; rdma_cm reports it with RDMA_CM_EVENT_ESTABLISHED), on the accepting side the connect
     * request's (as {@link ConnectionRequest#privateData()}). A little-endian view; empty if the provider cannot tell.
     */
    default java.nio.ByteBuffer peerPrivateData() {
        return java.nio.ByteBuffer.allocate(0).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

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

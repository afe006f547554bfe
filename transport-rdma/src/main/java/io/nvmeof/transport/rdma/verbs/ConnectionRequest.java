package io.nvmeof.transport.rdma.verbs;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/** An incoming connection request with the peer's private data (NVMe/RDMA: 32 bytes, nvmeof-protocol.md §6.1). */
public interface ConnectionRequest {
    /** The request's private data (a read-only little-endian view; may be shorter than expected or empty). */
    ByteBuffer privateData();

    InetSocketAddress remoteAddress();

    InetSocketAddress localAddress();

    /** RDMA Read resources the peer offered (its responder_resources, the reads we may issue). */
    int peerResponderResources();

    /**
     * Creates the connection's QP and CQ with {@code attributes}, lets {@code receivesToPost} post receive buffers,
     * then accepts with {@code privateData} (NVMe/RDMA: 32 bytes with CRQSIZE, nvmeof-protocol.md §6.1). The returned connection is
     * established or about to be; a Send may arrive before the ESTABLISHED event (nvmeof-protocol.md §6.2).
     */
    default RdmaConnection accept(
            QueuePairAttributes attributes,
            java.util.function.Consumer<RdmaConnection> receivesToPost,
            ByteBuffer privateData)
            throws IOException {
        return accept(attributes, null, null, receivesToPost, privateData);
    }

    /**
     * The protection domain the connection's QP will be created in (that of the device the request came in on), for
     * the shared CQ and SRQ given to {@link #accept(QueuePairAttributes, CompletionQueue, SharedReceiveQueue,
     * java.util.function.Consumer, ByteBuffer)}.
     */
    ProtectionDomain protectionDomain() throws IOException;

    /**
     * As {@link #accept(QueuePairAttributes, java.util.function.Consumer, ByteBuffer)}, with the QP's send and receive
     * completions going to {@code sharedCq} (null: a CQ of the connection's own, {@code attributes.cqSize()} entries)
     * and its receives taken from {@code srq} (null: the QP's own receive queue of {@code attributes.maxRecvWr()}).
     * Both must come from {@link #protectionDomain()}; the connection's {@code completionQueue()} is then
     * {@code sharedCq}.
     */
    RdmaConnection accept(
            QueuePairAttributes attributes,
            CompletionQueue sharedCq,
            SharedReceiveQueue srq,
            java.util.function.Consumer<RdmaConnection> receivesToPost,
            ByteBuffer privateData)
            throws IOException;

    /** Rejects with consumer-defined private data (NVMe/RDMA: RECFMT + STS, nvmeof-protocol.md §6.1). */
    void reject(ByteBuffer privateData) throws IOException;
}

package io.nvmeof.transport.rdma.verbs;

/**
 * A shared receive queue (ibv_srq): receive buffers posted once and consumed by whichever QP created with it gets the
 * next Send. Its RECV completions land in the consuming QP's CQ and name that QP
 * ({@link WorkCompletion#qpNumber}). A QP going to the error state does not flush the SRQ: its buffers stay posted for
 * the other QPs. Owned by one thread (the one that polls the CQ the QPs share), like a {@link QueuePair}.
 */
public interface SharedReceiveQueue extends AutoCloseable {
    /**
     * Posts a receive buffer; false when the SRQ is full or closed. It is full after {@link #capacity()} posts or more
     * (a device may grant a larger max_wr than asked).
     */
    boolean postRecv(long wrId, MemoryRegion region, int offset, int length);

    /** Receive buffers it can hold posted at once, at least (max_wr). */
    int capacity();

    /** ibv_destroy_srq: after every QP using it is closed. Posted buffers are simply forgotten. */
    @Override
    void close();
}

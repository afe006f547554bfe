package io.nvmeof.transport.rdma.verbs;

/**
 * A reliable connected queue pair. Posting never blocks and never allocates in steady state; each work request names
 * one local segment (region, offset, length) and carries a caller-chosen 64-bit {@code wrId} that comes back in its
 * {@link WorkCompletion}. Posting more than the queue depth, or to a QP not ready to send, returns false (ENOMEM /
 * EINVAL on hardware) rather than throwing.
 */
public interface QueuePair {
    enum State {
        INIT,
        RTR,
        RTS,
        ERROR
    }

    State state();

    /** The QP number (qp_num) that this QP's work completions carry in {@link WorkCompletion#qpNumber}. */
    int qpNumber();

    /** Posts a receive buffer for one incoming Send. */
    boolean postRecv(long wrId, MemoryRegion region, int offset, int length);

    /** Send (two-sided); {@code signaled}: whether a completion is produced on success. */
    boolean postSend(long wrId, MemoryRegion region, int offset, int length, boolean signaled);

    /** Send with Invalidate: the peer's receive completion reports {@code rkeyToInvalidate} as invalidated (nvmeof-protocol.md §6.3). */
    boolean postSendWithInvalidate(
            long wrId, MemoryRegion region, int offset, int length, int rkeyToInvalidate, boolean signaled);

    /** RDMA Write of the local segment to (remoteAddress, rkey); the peer's CPU is not involved. */
    boolean postWrite(
            long wrId, MemoryRegion region, int offset, int length, long remoteAddress, int rkey, boolean signaled);

    /** RDMA Read from (remoteAddress, rkey) into the local segment; always signaled. */
    boolean postRead(long wrId, MemoryRegion region, int offset, int length, long remoteAddress, int rkey);
}

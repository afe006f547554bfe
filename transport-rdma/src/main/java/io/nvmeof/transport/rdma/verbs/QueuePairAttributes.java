package io.nvmeof.transport.rdma.verbs;

/**
 * Sizes of a QP and its CQ, and the RDMA Read resources offered (ibv_qp_init_attr, rdma_conn_param).
 *
 * @param maxSendWr          send queue depth (Sends + RDMA Writes + RDMA Reads outstanding)
 * @param maxRecvWr          receive queue depth
 * @param maxSendSge         scatter/gather entries per send work request
 * @param maxRecvSge         scatter/gather entries per receive work request
 * @param cqSize             completion queue entries (at least maxSendWr + maxRecvWr)
 * @param responderResources RDMA Reads the peer may have outstanding against us (the host offers ≥ 1 so the target can
 *                           RDMA Read write data, nvmeof-protocol.md §6.1)
 * @param initiatorDepth     RDMA Reads we may have outstanding against the peer
 */
public record QueuePairAttributes(
        int maxSendWr,
        int maxRecvWr,
        int maxSendSge,
        int maxRecvSge,
        int cqSize,
        int responderResources,
        int initiatorDepth) {
    public QueuePairAttributes {
        if (maxSendWr < 1 || maxRecvWr < 1 || maxSendSge < 1 || maxRecvSge < 1) {
            throw new IllegalArgumentException("QP sizes must be positive");
        }
        if (cqSize < maxSendWr + maxRecvWr) {
            throw new IllegalArgumentException(
                    "cqSize " + cqSize + " < maxSendWr + maxRecvWr " + (maxSendWr + maxRecvWr));
        }
        if (responderResources < 0 || initiatorDepth < 0) {
            throw new IllegalArgumentException("RDMA read resources cannot be negative");
        }
    }
}

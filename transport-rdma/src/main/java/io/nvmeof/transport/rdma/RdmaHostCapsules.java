package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The message memory of one {@link RdmaHostQueue} (nvmeof-protocol.md §6.2, §6.3): a registered receive region of one
 * 16-byte buffer per queue entry (each takes one response CQE; wr_id = the entry's index) and a registered send region
 * of one capsule slot per CID (the 64-byte SQE and up to {@link RdmaHostQueue#MAX_IN_CAPSULE} bytes of in-capsule
 * data; wr_id = the CID). Registered once at connect, before the connect request goes out, and deregistered by
 * {@link #close} when the queue ends; owned by the queue, used by its thread only. Nothing per command allocates.
 */
final class RdmaHostCapsules {
    /** Bytes of one capsule slot. */
    static final int CAPSULE = SubmissionQueueEntry.LENGTH + RdmaHostQueue.MAX_IN_CAPSULE;

    private final QueuePair qp;
    private final int queueSize;
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();
    private final SubmissionQueueEntry capsuleSqe = new SubmissionQueueEntry();
    private MemoryRegion recvMr;
    private MemoryRegion sendMr;
    private ByteBuffer recvView;
    private ByteBuffer sendView;

    RdmaHostCapsules(QueuePair qp, int queueSize) {
        this.qp = qp;
        this.queueSize = queueSize;
    }

    /** Registers the receive and send regions in {@code pd} (what was registered stays until {@link #close}). */
    void register(ProtectionDomain pd) throws IOException {
        recvMr = pd.register(pd.allocate(queueSize * CompletionQueueEntry.LENGTH), ProtectionDomain.ACCESS_LOCAL_WRITE);
        recvView = recvMr.buffer().order(ByteOrder.LITTLE_ENDIAN);
        sendMr = pd.register(pd.allocate(queueSize * CAPSULE), ProtectionDomain.ACCESS_LOCAL_WRITE);
        sendView = sendMr.buffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Posts every receive buffer (before the connect request goes out). */
    void postReceives() throws IOException {
        for (int i = 0; i < queueSize; i++) {
            if (!postReceive(i)) {
                throw new IOException("cannot post receive " + i + " of " + queueSize);
            }
        }
    }

    /** (Re-)posts receive buffer {@code index}; false if the receive queue refused it. */
    boolean postReceive(int index) {
        return qp.postRecv(
                RdmaHostQueue.KIND_RECV | index,
                recvMr,
                index * CompletionQueueEntry.LENGTH,
                CompletionQueueEntry.LENGTH);
    }

    /**
     * Builds the capsule of a claimed command in its CID's slot: the SQE copied in, then its data placed by
     * {@code data} (in the capsule, or a keyed SGL); returns the in-capsule data bytes.
     */
    int build(HostCommand command, RdmaHostData data, int maxInCapsule) throws IOException {
        int cid = command.command().cid();
        int base = cid * CAPSULE;
        ByteBuffer src = command.command().buffer();
        sendView.put(base, src, command.command().offset(), SubmissionQueueEntry.LENGTH);
        capsuleSqe.wrap(sendView, base);
        return data.place(cid, command, capsuleSqe, sendView, base + SubmissionQueueEntry.LENGTH, maxInCapsule);
    }

    /** Posts the Send of CID {@code cid}'s capsule, signaled; false if the send queue is full. */
    boolean postSend(int cid, int inCapsule) {
        return qp.postSend(
                RdmaHostQueue.KIND_SEND | cid, sendMr, cid * CAPSULE, SubmissionQueueEntry.LENGTH + inCapsule, true);
    }

    /** The response CQE in receive buffer {@code index} (the same view each time: read it before re-posting). */
    CompletionQueueEntry response(int index) {
        cqe.wrap(recvView, index * CompletionQueueEntry.LENGTH);
        return cqe;
    }

    /** Deregisters what {@link #register} registered. */
    void close() {
        if (recvMr != null) {
            recvMr.close();
        }
        if (sendMr != null) {
            sendMr.close();
        }
    }
}

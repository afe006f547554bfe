package io.nvmeof.transport.rdma;

import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Receive buffers of one size (a 64-byte command capsule plus the in-capsule data) in one registered region, posted
 * either to a poll group's shared receive queue (every queue of the group takes commands from them) or to one QP (a
 * queue's own, when the provider has no SRQ). Buffer {@code i} is posted with wr_id {@code KIND_RECV | i}, and a
 * queue's own buffers with its tag too (the group finds the queue by it).
 *
 * <p>Ownership: a posted buffer belongs to the RNIC; its RECV completion hands it to the queue the completion names,
 * which binds it to a free request slot ({@link RdmaTargetRequest#bind}); the slot gives it back with {@link #post}
 * exactly once: just before its response Send, or when the queue closes while the core held the command. A RECV that
 * no open queue can take (its queue closed) is posted again by the group at once. {@link #posted()} counts the buffers
 * the RNIC holds (owner thread: the group's).
 */
final class ReceiveBuffers implements AutoCloseable {
    final MemoryRegion region;
    final int size;
    final int count;

    private final ByteBuffer memory;
    private final ByteBuffer[] inCapsule;
    private final SharedReceiveQueue srq;
    private final QueuePair qp;
    private final long tagBits;
    private int posted;

    private ReceiveBuffers(
            MemoryRegion region, int count, int size, SharedReceiveQueue srq, QueuePair qp, long tagBits) {
        this.tagBits = tagBits;
        this.region = region;
        this.count = count;
        this.size = size;
        this.srq = srq;
        this.qp = qp;
        this.memory = region.buffer().order(ByteOrder.LITTLE_ENDIAN);
        this.inCapsule = new ByteBuffer[count];
        int icd = size - SubmissionQueueEntry.LENGTH;
        for (int i = 0; i < count; i++) {
            inCapsule[i] = icd > 0
                    ? memory.duplicate()
                            .position(i * size + SubmissionQueueEntry.LENGTH)
                            .limit(i * size + size)
                            .slice()
                            .order(ByteOrder.LITTLE_ENDIAN)
                    : ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    /** Allocates, registers and posts {@code count} buffers of {@code size} bytes to {@code srq}, or else to {@code qp}. */
    static ReceiveBuffers create(
            ProtectionDomain pd, int count, int size, SharedReceiveQueue srq, QueuePair qp, long tagBits)
            throws IOException {
        MemoryRegion mr = pd.register(pd.allocate(count * size), ProtectionDomain.ACCESS_LOCAL_WRITE);
        ReceiveBuffers b = new ReceiveBuffers(mr, count, size, srq, qp, tagBits);
        for (int i = 0; i < count; i++) {
            if (!b.post(i)) {
                mr.close();
                throw new IOException("cannot post receive buffer " + i + " of " + count);
            }
        }
        return b;
    }

    /** Posts buffer {@code index} (again); false if the SRQ or QP refused it. */
    boolean post(int index) {
        boolean ok = srq != null
                ? srq.postRecv(RdmaTargetQueue.KIND_RECV | index, region, index * size, size)
                : qp.postRecv(RdmaTargetQueue.KIND_RECV | tagBits | index, region, index * size, size);
        if (ok) {
            posted++;
        }
        return ok;
    }

    /** A RECV completion took buffer {@code index} out of the RNIC's hands. */
    void taken() {
        posted--;
    }

    int posted() {
        return posted;
    }

    boolean shared() {
        return srq != null;
    }

    /** The whole registered memory (the capsule of buffer i starts at {@link #offset}(i)), little-endian. */
    ByteBuffer memory() {
        return memory;
    }

    int offset(int index) {
        return index * size;
    }

    /** Buffer {@code index} from byte 64: its in-capsule data (a view made once). */
    ByteBuffer inCapsule(int index) {
        return inCapsule[index];
    }

    @Override
    public void close() {
        region.close();
    }
}

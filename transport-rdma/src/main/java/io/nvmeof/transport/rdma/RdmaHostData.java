package io.nvmeof.transport.rdma;

import io.nvmeof.core.command.DataDirection;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where the data of each command of one NVMe/RDMA host queue is for the controller (nvmeof-protocol.md §6.4), and
 * SGL1 saying so: host→controller data up to the in-capsule limit goes in the capsule (SGL 0x01, offset 0); otherwise
 * a keyed SGL 0x40 names either the caller's buffer, when it lies in memory registered by
 * {@code RdmaHostQueue.allocateBuffer} (no copy on the host), or a registered bounce buffer from a pool (one copy:
 * before the Send for a write, after the response for a read). Owned by the queue's thread; per CID, it remembers
 * the bounce buffer and the rkey offered, so that a response can be checked and finished.
 */
final class RdmaHostData {
    /** Pool bytes registered per size class at connect (at least two buffers per class). */
    private static final int POOL_BYTES_PER_CLASS = Integer.getInteger("nvmeof.rdma.hostPoolBytesPerClass", 2 << 20);

    private final ProtectionDomain pd;
    private final RegisteredBufferPool pool;
    private final RegisteredBufferPool.Buffer[] bounce;
    private final boolean[] toHost;
    private final int[] offeredKey;
    private final MemoryRegion[] userRegionOut = new MemoryRegion[1];
    private long copiedBytes;
    private long directBytes;

    /** Registers the bounce pool of a queue of {@code queueSize} entries in {@code pd}. */
    RdmaHostData(ProtectionDomain pd, int queueSize) throws IOException {
        this.pd = pd;
        this.pool = new RegisteredBufferPool(
                pd,
                ProtectionDomain.ACCESS_LOCAL_WRITE
                        | ProtectionDomain.ACCESS_REMOTE_READ
                        | ProtectionDomain.ACCESS_REMOTE_WRITE);
        for (int size = RegisteredBufferPool.MIN_SIZE; size <= RegisteredBufferPool.MAX_SIZE; size <<= 1) {
            pool.prefill(size, Math.max(2, Math.min(queueSize, POOL_BYTES_PER_CLASS / size)));
        }
        this.bounce = new RegisteredBufferPool.Buffer[queueSize];
        this.toHost = new boolean[queueSize];
        this.offeredKey = new int[queueSize];
    }

    /**
     * Fills SGL1 of {@code sqe} (the capsule's copy of the command) for the command's data, copying in-capsule data
     * to {@code capsule[dataIndex...]}; {@code maxInCapsule} is 0 where in-capsule data is not allowed (the admin
     * queue). Returns the in-capsule length.
     *
     * @throws IOException if no registered buffer can be had for the data
     */
    int place(
            int cid, HostCommand command, SubmissionQueueEntry sqe, ByteBuffer capsule, int dataIndex, int maxInCapsule)
            throws IOException {
        SglDescriptor sgl = sqe.sgl();
        int length = command.dataLength();
        DataDirection dir = length == 0 ? DataDirection.NONE : DataDirection.of(sqe);
        toHost[cid] = dir == DataDirection.CONTROLLER_TO_HOST;
        offeredKey[cid] = 0;
        bounce[cid] = null;
        if (length == 0) {
            sgl.setKeyed(SglDescriptor.ID_KEYED, 0, 0, 0); // no data (nvmeof-protocol.md §6.4)
            return 0;
        }
        ByteBuffer data = command.dataBuffer();
        if (dir == DataDirection.HOST_TO_CONTROLLER && length <= maxInCapsule) {
            // In-capsule data, I/O queues only (nvmeof-protocol.md §6.4): Offset SGL, offset 0.
            capsule.put(dataIndex, data, command.dataOffset(), length);
            sgl.set(SglDescriptor.ID_IN_CAPSULE, 0, length);
            copiedBytes += length;
            HostBuffers.IN_CAPSULE.add(length);
            return length;
        }
        long remote = HostBuffers.find(data, command.dataOffset(), length, pd, userRegionOut);
        if (remote >= 0) {
            MemoryRegion user = userRegionOut[0];
            userRegionOut[0] = null;
            sgl.setKeyed(SglDescriptor.ID_KEYED, remote, length, user.rkey());
            offeredKey[cid] = user.rkey();
            directBytes += length;
            HostBuffers.ZERO_COPY.add(length);
            return 0;
        }
        RegisteredBufferPool.Buffer b;
        try {
            b = pool.take(length);
        } catch (RuntimeException e) {
            throw new IOException("no registered buffer for " + length + " bytes: " + e.getMessage(), e);
        }
        bounce[cid] = b;
        if (dir == DataDirection.HOST_TO_CONTROLLER) {
            b.view.put(0, data, command.dataOffset(), length);
        }
        sgl.setKeyed(SglDescriptor.ID_KEYED, b.address(0), length, b.region.rkey());
        offeredKey[cid] = b.region.rkey();
        copiedBytes += length;
        HostBuffers.COPIED.add(length);
        return 0;
    }

    /** The rkey the command of {@code cid} offered the controller, or 0 (checks a remote invalidation). */
    int offeredKey(int cid) {
        return offeredKey[cid];
    }

    /** On the command's response: read data comes out of its bounce buffer, which goes back to the pool. */
    void complete(int cid, HostCommand command) {
        RegisteredBufferPool.Buffer b = bounce[cid];
        if (b != null) {
            if (toHost[cid]) {
                command.dataBuffer().put(command.dataOffset(), b.view, 0, command.dataLength());
            }
            bounce[cid] = null;
            pool.giveBack(b);
        }
    }

    /** The queue closed: the pool's memory is deregistered, nothing is copied back. */
    void close() {
        java.util.Arrays.fill(bounce, null);
        pool.close();
    }

    /** Data bytes copied through the pool or into the capsule, and moved straight from/to registered ones. */
    long copiedBytes() {
        return copiedBytes;
    }

    long directBytes() {
        return directBytes;
    }

    int poolGrowths() {
        return pool.growths();
    }
}

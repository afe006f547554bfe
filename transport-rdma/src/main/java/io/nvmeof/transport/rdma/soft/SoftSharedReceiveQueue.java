package io.nvmeof.transport.rdma.soft;

import static io.nvmeof.transport.rdma.soft.Shm.INT;
import static io.nvmeof.transport.rdma.soft.Shm.LONG;

import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A shared receive queue: the receive ring of a queue pair ({@link QueueFile}'s layout: head at 64, tail at 128,
 * 32-byte WQEs from 256) in a file of its own, {@code <pid>-s<n>}, with its capacity at offset 16. A QP created with
 * it has no ring of its own and names the file in its header, so a peer's sending thread maps this file at connect
 * and takes the next posted buffer from it (CAS on the head), whichever of our QPs it sends to. The owner publishes
 * the tail with release. The name stays until {@link #close()}, since peers of later QPs map it too.
 */
final class SoftSharedReceiveQueue implements SharedReceiveQueue {
    static final int MAGIC = 0x53535251; // "SSRQ"
    static final int H_CAPACITY = 16;

    final SoftDevice device;
    final SoftProtectionDomain pd;
    /** The {@code <n>} of the file name, which QP headers carry. */
    final int fileNumber;

    private final Path path;
    private final ByteBuffer q;
    private final int capacity;
    private final int mask;
    private long tail;
    private volatile boolean closed;

    SoftSharedReceiveQueue(SoftDevice device, int maxWr) throws IOException {
        if (maxWr < 1) {
            throw new IllegalArgumentException("an SRQ needs at least one entry");
        }
        this.device = device;
        this.pd = device.pd;
        this.capacity = Shm.pow2(maxWr);
        this.mask = capacity - 1;
        String name = device.newFileName('s');
        this.fileNumber = Integer.parseInt(name.substring(name.lastIndexOf('s') + 1));
        this.path = device.file(name);
        this.q = Shm.create(path, QueueFile.RQ_BASE + (long) capacity * QueueFile.RQE);
        INT.set(q, H_CAPACITY, capacity);
        INT.setRelease(q, QueueFile.H_MAGIC, MAGIC);
    }

    /** Maps a peer's SRQ file {@code <pid>-s<n>} and checks it; returns the mapping (its capacity at 16). Cold path. */
    static ByteBuffer map(SoftDevice device, long pid, int fileNumber) throws IOException {
        Path p = device.file(pid + "-s" + fileNumber);
        ByteBuffer b = Shm.open(p);
        int cap = b.capacity() >= QueueFile.RQ_BASE ? (int) INT.getAcquire(b, H_CAPACITY) : 0;
        if ((int) INT.getAcquire(b, QueueFile.H_MAGIC) != MAGIC
                || Integer.bitCount(cap) != 1
                || b.capacity() != QueueFile.RQ_BASE + (long) cap * QueueFile.RQE) {
            throw new IOException("software RNIC: " + p + " is not a shared receive queue");
        }
        return b;
    }

    @Override
    public boolean postRecv(long wrId, MemoryRegion region, int offset, int length) {
        if (closed || tail - (long) LONG.getVolatile(q, QueueFile.H_RQ_HEAD) >= capacity) {
            return false;
        }
        QueueFile.postReceive(q, tail, mask, device, wrId, region, offset, length);
        tail++;
        return true;
    }

    /** Buffers posted and not yet taken by a sender. */
    int posted() {
        return (int) (tail - (long) LONG.getVolatile(q, QueueFile.H_RQ_HEAD));
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public void close() {
        closed = true;
        Shm.delete(path);
    }

    @Override
    public String toString() {
        return "soft SRQ " + path.getFileName() + " (" + capacity + " entries)";
    }
}

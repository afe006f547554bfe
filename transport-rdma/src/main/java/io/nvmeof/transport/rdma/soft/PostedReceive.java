package io.nvmeof.transport.rdma.soft;

import static io.nvmeof.transport.rdma.soft.Shm.INT;
import static io.nvmeof.transport.rdma.soft.Shm.LONG;

import java.nio.ByteBuffer;

/**
 * The receive WQE last taken off a receive ring ({@link QueueFile} layout): {@link #take} consumes the ring's next
 * posted receive with a CAS on its head and keeps its fields here. Scratch of one thread: the owner of the
 * {@link SoftResponder} or {@link SoftQueuePair} that holds it; reused for every take, so nothing is allocated.
 */
final class PostedReceive {
    long wrId;
    int key;
    int offset;
    int length;

    /** Consumes the next posted receive of the ring in {@code b}; false if none is posted. */
    boolean take(ByteBuffer b, int mask) {
        for (; ; ) {
            long head = (long) LONG.getVolatile(b, QueueFile.H_RQ_HEAD);
            long tail = (long) LONG.getAcquire(b, QueueFile.H_RQ_TAIL);
            if (head >= tail) {
                return false;
            }
            int e = QueueFile.RQ_BASE + (int) (head & mask) * QueueFile.RQE;
            long w = (long) LONG.get(b, e);
            int k = (int) INT.get(b, e + 8);
            int off = (int) INT.get(b, e + 12);
            int len = (int) INT.get(b, e + 16);
            if (LONG.compareAndSet(b, QueueFile.H_RQ_HEAD, head, head + 1)) {
                wrId = w;
                key = k;
                offset = off;
                length = len;
                return true;
            }
        }
    }
}

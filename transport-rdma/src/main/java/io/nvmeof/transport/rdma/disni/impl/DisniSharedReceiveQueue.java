package io.nvmeof.transport.rdma.disni.impl;

import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import java.io.IOException;

/**
 * An ibv_srq made through libnvmeofrdma ({@link NativeCm#createSrq}), since DiSNI 2.1 has no SRQ verbs. A receive is
 * posted by one JNI call taking primitives ({@link NativeCm#postSrqRecv}): no work request object, prepared or not.
 * QPs are made on it by {@link DisniConnection} ({@link NativeCm#createQpOnSrq}). Owned by the thread that polls the
 * CQ its QPs share, like a QP; closed after every QP using it.
 */
final class DisniSharedReceiveQueue implements SharedReceiveQueue {
    /** The ibv_srq pointer. */
    final long srq;

    private final DisniProtectionDomain pd;
    private final int capacity;
    private volatile boolean closed;

    /**
     * @param maxWr receives it must hold at once; the device may grant more, but {@link #capacity()} stays
     *              {@code maxWr} (callers number their buffers up to it)
     */
    DisniSharedReceiveQueue(DisniProtectionDomain pd, int maxWr) throws IOException {
        int[] granted = new int[1];
        this.srq = NativeCm.createSrq(pd.objId(), maxWr, granted);
        this.pd = pd;
        this.capacity = Math.min(maxWr, granted[0]);
    }

    DisniProtectionDomain protectionDomain() {
        return pd;
    }

    @Override
    public boolean postRecv(long wrId, MemoryRegion region, int offset, int length) {
        return !closed && NativeCm.postSrqRecv(srq, wrId, region.address() + offset, length, region.lkey()) == 0;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        int err = NativeCm.destroySrq(srq);
        if (err != 0) {
            System.err.println("disni: ibv_destroy_srq: errno " + err + " (a QP still uses it?)");
        }
    }

    @Override
    public String toString() {
        return "DiSNI SRQ (" + capacity + " entries)";
    }
}

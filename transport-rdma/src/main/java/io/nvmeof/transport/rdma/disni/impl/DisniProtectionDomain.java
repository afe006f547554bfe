package io.nvmeof.transport.rdma.disni.impl;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCRegMr;
import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** One ibv_pd per device context, shared by every connection on that device; registration through DiSNI. */
final class DisniProtectionDomain implements ProtectionDomain {
    private final RdmaVerbs verbs;
    final IbvPd pd;

    DisniProtectionDomain(RdmaVerbs verbs, IbvPd pd) {
        this.verbs = verbs;
        this.pd = pd;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws IOException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered");
        }
        // the interface's ACCESS_* values are ibv_access_flags' (LOCAL_WRITE 1, REMOTE_WRITE 2, REMOTE_READ 4)
        SVCRegMr call = verbs.regMr(pd, buffer, access);
        IbvMr mr;
        try {
            mr = call.execute().getMr();
        } finally {
            call.free();
        }
        return new Region(mr, buffer.duplicate().clear(), access);
    }

    @Override
    public ByteBuffer allocate(int size) {
        return ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A CQ of {@code entries}, or of the device's max_cqe if that is lower (SPDK caps its pollers' CQs the same way). */
    @Override
    public CompletionQueue createCompletionQueue(int entries) throws IOException {
        int maxCqe = NativeCm.deviceLimits(contextId())[NativeCm.MAX_CQE];
        return new DisniCompletionQueue(verbs, pd.getContext(), Math.min(entries, maxCqe), null);
    }

    /**
     * An SRQ made through libnvmeofrdma (DiSNI 2.1 has no SRQ verbs): {@link DisniSharedReceiveQueue}, of
     * {@code maxWr} entries or the device's max_srq_wr if that is lower (its {@code capacity()} says which).
     *
     * @throws UnsupportedOperationException if the device has no SRQs (max_srq 0)
     */
    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr) throws IOException {
        if (maxWr < 1) {
            throw new IllegalArgumentException("an SRQ needs at least one entry");
        }
        int[] lim = NativeCm.deviceLimits(contextId());
        if (lim[NativeCm.MAX_SRQ] == 0) {
            throw new UnsupportedOperationException(NativeCm.deviceName(contextId()) + " has no shared receive queues");
        }
        return new DisniSharedReceiveQueue(this, Math.min(maxWr, lim[NativeCm.MAX_SRQ_WR]));
    }

    /** The ibv_pd pointer. */
    long objId() {
        return DisniVerbs.objId(pd);
    }

    private long contextId() {
        return DisniVerbs.objId(pd.getContext());
    }

    private final class Region implements MemoryRegion {
        private final IbvMr mr;
        private final ByteBuffer buffer;
        private final int access;
        private boolean closed;

        Region(IbvMr mr, ByteBuffer buffer, int access) {
            this.mr = mr;
            this.buffer = buffer;
            this.access = access;
        }

        @Override
        public long address() {
            return mr.getAddr();
        }

        @Override
        public int length() {
            return mr.getLength();
        }

        @Override
        public int lkey() {
            return mr.getLkey();
        }

        @Override
        public int rkey() {
            return mr.getRkey();
        }

        @Override
        public int access() {
            return access;
        }

        @Override
        public ByteBuffer buffer() {
            return buffer;
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            try {
                verbs.deregMr(mr).execute().free();
            } catch (IOException e) {
                System.err.println("disni: ibv_dereg_mr: " + e.getMessage());
            }
        }

        @Override
        public String toString() {
            return "MR[addr=0x" + Long.toHexString(address()) + " len=" + length() + " rkey=0x"
                    + Integer.toHexString(rkey()) + "]";
        }
    }
}

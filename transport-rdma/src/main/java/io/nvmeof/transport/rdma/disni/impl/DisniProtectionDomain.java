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

    @Override
    public CompletionQueue createCompletionQueue(int entries) throws IOException {
        return new DisniCompletionQueue(verbs, pd.getContext(), entries, null);
    }

    /**
     * Not available: DiSNI 2.1 has no SRQ verbs (no ibv_create_srq / ibv_post_srq_recv, and its createQP passes no
     * SRQ), so each QP keeps its own receive queue.
     */
    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr) {
        throw new UnsupportedOperationException("DiSNI 2.1 has no shared receive queue verbs");
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

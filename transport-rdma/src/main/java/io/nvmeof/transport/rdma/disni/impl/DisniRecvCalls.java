package io.nvmeof.transport.rdma.disni.impl;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCPostRecv;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import java.io.IOException;
import java.util.LinkedList;
import java.util.List;

/**
 * Prepared receive calls (DiSNI {@link SVCPostRecv}, ibv_post_recv) of one QP by wr_id: DiSNI 2.1 cannot rewrite a
 * prepared receive, but NVMe/RDMA re-posts the same buffers under the same wr_ids, so steady state allocates nothing.
 * Open addressing; cleared when half full. Owned by its {@link DisniConnection}, used from its owner's thread, cleared
 * (every call freed) at close.
 */
final class DisniRecvCalls {
    private final RdmaVerbs verbs;
    private final IbvQP qp;
    private final long[] keys;
    private final Entry[] entries;
    private int size;

    DisniRecvCalls(RdmaVerbs verbs, IbvQP qp, int maxRecvWr) {
        this.verbs = verbs;
        this.qp = qp;
        int cap = Integer.highestOneBit(Math.max(64, maxRecvWr * 4) - 1) << 1;
        keys = new long[cap];
        entries = new Entry[cap];
    }

    SVCPostRecv get(long wrId, MemoryRegion region, int offset, int length) throws IOException {
        int mask = keys.length - 1;
        int i = (int) (mix(wrId) & mask);
        while (entries[i] != null) {
            Entry e = entries[i];
            if (keys[i] == wrId) {
                if (e.region == region && e.offset == offset && e.length == length) {
                    return e.call;
                }
                e.call.free(); // same wr_id, other buffer: replace in place
                entries[i] = prepare(wrId, region, offset, length);
                return entries[i].call;
            }
            i = (i + 1) & mask;
        }
        if (size >= keys.length / 2) {
            clear();
            i = (int) (mix(wrId) & mask);
        }
        keys[i] = wrId;
        entries[i] = prepare(wrId, region, offset, length);
        size++;
        return entries[i].call;
    }

    private Entry prepare(long wrId, MemoryRegion region, int offset, int length) throws IOException {
        IbvRecvWR w = new IbvRecvWR();
        w.setWr_id(wrId);
        IbvSge s = new IbvSge();
        s.setAddr(region.address() + offset);
        s.setLength(length);
        s.setLkey(region.lkey());
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(s);
        w.setSg_list(sges);
        w.setNum_sge(1);
        return new Entry(region, offset, length, verbs.postRecv(qp, List.of(w), null));
    }

    void clear() {
        for (int i = 0; i < entries.length; i++) {
            if (entries[i] != null) {
                entries[i].call.free();
                entries[i] = null;
            }
        }
        size = 0;
    }

    private static long mix(long k) {
        k *= 0x9E3779B97F4A7C15L;
        return k ^ (k >>> 29);
    }

    private record Entry(MemoryRegion region, int offset, int length, SVCPostRecv call) {}
}

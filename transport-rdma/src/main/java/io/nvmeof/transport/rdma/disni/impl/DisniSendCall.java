package io.nvmeof.transport.rdma.disni.impl;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCPostSend;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import java.io.IOException;
import java.util.LinkedList;
import java.util.List;

/**
 * A prepared one-segment send work request (DiSNI {@link SVCPostSend}, ibv_post_send) of one opcode on one QP, whose
 * wr_id, flags, segment and remote address are rewritten in place before each post. Owned by the
 * {@link DisniConnection} that prepared it, which posts through it from its owner's thread and frees it at close.
 */
final class DisniSendCall {
    static final int IBV_WR_RDMA_WRITE = 0;
    static final int IBV_WR_SEND = 2;
    static final int IBV_WR_RDMA_READ = 4;
    /** rdma-core's IBV_WR_SEND_WITH_INV (DiSNI 2.1 has no constant; its imm_data slot is the invalidate_rkey union). */
    static final int IBV_WR_SEND_WITH_INV = 9;

    private final SVCPostSend call;
    private final SVCPostSend.SendWRMod wr;
    private final SVCPostSend.SgeMod sge;
    private final SVCPostSend.RdmaMod rdma;

    DisniSendCall(RdmaVerbs verbs, IbvQP qp, int opcode, int immOrInvalidateRkey) throws IOException {
        IbvSendWR w = new IbvSendWR();
        w.setOpcode(opcode);
        w.setImm_data(immOrInvalidateRkey);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(new IbvSge());
        w.setSg_list(sges);
        w.setNum_sge(1);
        call = verbs.postSend(qp, List.of(w), null);
        wr = call.getWrMod(0);
        sge = wr.getSgeMod(0);
        rdma = wr.getRdmaMod();
    }

    /** Rewrites the request and posts it; false if the post failed. */
    boolean post(
            long wrId, MemoryRegion region, int offset, int length, long remoteAddress, int rkey, boolean signaled) {
        wr.setWr_id(wrId);
        wr.setSend_flags(signaled ? IbvSendWR.IBV_SEND_SIGNALED : 0);
        sge.setAddr(region.address() + offset);
        sge.setLength(length);
        sge.setLkey(region.lkey());
        rdma.setRemote_addr(remoteAddress);
        rdma.setRkey(rkey);
        try {
            call.execute();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    void free() {
        call.free();
    }
}

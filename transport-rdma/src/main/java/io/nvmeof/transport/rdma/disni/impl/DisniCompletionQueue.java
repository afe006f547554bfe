package io.nvmeof.transport.rdma.disni.impl;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCReqNotify;
import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.time.Duration;

/**
 * An ibv_cq with its own completion channel: a connection's own CQ, or one shared by many QPs (created by
 * {@code DisniProtectionDomain.createCompletionQueue}; each QP is created with it as send and receive CQ, and each
 * work completion reports its QP by {@code qp_num}). Polling goes through prepared {@link SVCPollCq} calls, one per
 * batch size; sleeping arms it with one prepared {@link SVCReqNotify} and waits on the channel.
 */
final class DisniCompletionQueue implements CompletionQueue {
    private static final int MAX_POLL = 32;
    /** ibv_wc_flags' IBV_WC_WITH_INV. */
    static final int IBV_WC_WITH_INV = 1 << 3;

    private final RdmaVerbs verbs;
    final IbvCompChannel channel;
    final IbvCQ cq;
    private final IbvWC[] wcs = new IbvWC[MAX_POLL];
    private final SVCPollCq[] pollCalls = new SVCPollCq[MAX_POLL + 1];
    private final SVCReqNotify notify;
    /** The connection this CQ belongs to (told of error completions), or null for a shared CQ. */
    private final DisniConnection owner;

    private final int capacity;
    private volatile boolean closed;

    DisniCompletionQueue(RdmaVerbs verbs, IbvContext context, int entries, DisniConnection owner) throws IOException {
        this.verbs = verbs;
        this.owner = owner;
        IbvCompChannel ch = verbs.createCompChannel(context);
        IbvCQ c;
        try {
            c = verbs.createCQ(context, ch, entries, 0);
        } catch (IOException | RuntimeException e) {
            verbs.destroyCompChannel(ch);
            throw e;
        }
        this.channel = ch;
        this.cq = c;
        this.capacity = entries;
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new IbvWC();
        }
        this.notify = verbs.reqNotifyCQ(cq, false);
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public int poll(WorkCompletion[] out) {
        int n = Math.min(out.length, MAX_POLL);
        if (n == 0 || closed) {
            return 0;
        }
        SVCPollCq call = pollCalls[n];
        int got;
        try {
            if (call == null) {
                call = verbs.pollCQ(cq, wcs, n);
                pollCalls[n] = call;
            }
            got = call.execute().getPolls();
        } catch (IOException e) {
            return 0;
        }
        for (int i = 0; i < got; i++) {
            convert(wcs[i], out[i]);
        }
        return got;
    }

    private void convert(IbvWC wc, WorkCompletion out) {
        out.wrId = wc.getWr_id();
        out.status = status(wc.getStatus());
        out.opcode = opcode(wc.getOpcode());
        out.byteLength = wc.getByte_len();
        out.withInvalidate = (wc.getWc_flags() & IBV_WC_WITH_INV) != 0;
        out.invalidatedRkey = out.withInvalidate ? wc.getImm_data() : 0;
        out.qpNumber = wc.getQp_num();
        if (out.status != WorkCompletion.Status.SUCCESS && owner != null) {
            owner.errorCompletion();
        }
    }

    /** ibv_wc_status numbers (verbs.h). */
    static WorkCompletion.Status status(int s) {
        switch (s) {
            case 0:
                return WorkCompletion.Status.SUCCESS;
            case 1:
                return WorkCompletion.Status.LOC_LEN_ERR;
            case 4:
                return WorkCompletion.Status.LOC_PROT_ERR;
            case 5:
                return WorkCompletion.Status.WR_FLUSH_ERR;
            case 9:
                return WorkCompletion.Status.REM_INV_REQ_ERR;
            case 10:
                return WorkCompletion.Status.REM_ACCESS_ERR;
            case 12:
                return WorkCompletion.Status.RETRY_EXC_ERR;
            case 13:
                return WorkCompletion.Status.RNR_RETRY_EXC_ERR;
            default:
                return WorkCompletion.Status.GENERAL_ERR;
        }
    }

    /**
     * ibv_wc_opcode numbers. On error completions the device need not set the opcode (verbs man page); whatever it
     * reported is mapped, anything unknown becomes SEND for send-queue values and RECV for 128 and above.
     */
    static WorkCompletion.Opcode opcode(int o) {
        switch (o) {
            case 0:
                return WorkCompletion.Opcode.SEND;
            case 1:
                return WorkCompletion.Opcode.RDMA_WRITE;
            case 2:
                return WorkCompletion.Opcode.RDMA_READ;
            default:
                return o >= 128 ? WorkCompletion.Opcode.RECV : WorkCompletion.Opcode.SEND;
        }
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (closed) {
            return false;
        }
        boolean woken;
        try {
            notify.execute();
            long ms = Math.max(0, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            woken = verbs.getCqEvent(channel, cq, (int) ms);
            if (woken) {
                verbs.ackCqEvents(cq, 1);
            }
        } catch (IOException e) {
            woken = false;
        }
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        return woken;
    }

    /** ibv_destroy_cq and its channel: after every QP on it is destroyed. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (SVCPollCq p : pollCalls) {
                if (p != null) {
                    p.free();
                }
            }
            notify.free();
            verbs.destroyCQ(cq);
            verbs.destroyCompChannel(channel);
        } catch (IOException | RuntimeException e) {
            System.err.println("disni: destroying a CQ: " + e);
        }
    }
}

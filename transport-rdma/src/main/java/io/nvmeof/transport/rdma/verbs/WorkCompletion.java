package io.nvmeof.transport.rdma.verbs;

/** A work completion (ibv_wc). Mutable and reused: {@link CompletionQueue#poll} overwrites it. */
public final class WorkCompletion {
    /** ibv_wc_opcode, as far as NVMe/RDMA needs it. */
    public enum Opcode {
        SEND,
        RDMA_WRITE,
        RDMA_READ,
        RECV
    }

    /** ibv_wc_status values a provider reports. */
    public enum Status {
        SUCCESS,
        /** Local length error: e.g. an incoming Send longer than the posted receive buffer. */
        LOC_LEN_ERR,
        /** Local protection error: bad lkey or segment outside the local region. */
        LOC_PROT_ERR,
        /** Flushed because the QP went to the error state (disconnect or an earlier error). */
        WR_FLUSH_ERR,
        /** Remote access error: bad rkey, outside the remote region, or access flags missing. */
        REM_ACCESS_ERR,
        /** Remote invalid request: e.g. an operation the remote QP does not allow. */
        REM_INV_REQ_ERR,
        /** Receiver not ready: the peer had no receive posted, retries exhausted. */
        RNR_RETRY_EXC_ERR,
        /** Transport retries exhausted (peer gone). */
        RETRY_EXC_ERR,
        /** Any other error. */
        GENERAL_ERR
    }

    public long wrId;
    public Opcode opcode;
    public Status status;
    /** Bytes received, for RECV. */
    public int byteLength;
    /** For RECV of a Send with Invalidate: the invalidated rkey; otherwise 0. */
    public int invalidatedRkey;

    public boolean withInvalidate;
    /** The QP the work request belonged to ({@link QueuePair#qpNumber()}; ibv_wc.qp_num): the key on a shared CQ. */
    public int qpNumber;

    public boolean ok() {
        return status == Status.SUCCESS;
    }

    @Override
    public String toString() {
        return "WC[qp=" + qpNumber + " wrId=" + wrId + " " + opcode + " " + status + " len=" + byteLength
                + (withInvalidate ? " inv=0x" + Integer.toHexString(invalidatedRkey) : "") + "]";
    }
}

package io.nvmeof.transport.rdma.disni.impl;

import java.io.IOException;

/**
 * The calls DiSNI 2.1 lacks, from libnvmeofrdma (src/main/native/nvmeofrdma.c): connect and accept with every
 * rdma_conn_param field and private data, reject with private data, what the last CM event on an id carried
 * (recorded by the library's DiSNI {@code _getCmEvent}), and shared receive queues with the QPs made on them. Ids,
 * contexts, PDs, CQs, SRQs and QPs are the native pointers DiSNI calls objIds.
 */
final class NativeCm {
    private NativeCm() {}

    /** Loads the library into this class's loader (the provider's isolating loader, which DiSNI shares). */
    static void load(String path) {
        System.load(path);
    }

    /** ibv_get_device_list: the number of RDMA devices, or -errno. */
    static native int deviceCount();

    /** The devices' names, comma-separated. */
    static native String deviceNames();

    /** Indexes into {@link #deviceLimits}' result (ibv_device_attr fields). */
    static final int MAX_QP_RD_ATOM = 0;

    static final int MAX_QP_INIT_RD_ATOM = 1;
    static final int MAX_QP_WR = 2;
    static final int MAX_CQE = 3;
    static final int MAX_SRQ = 4;
    static final int MAX_SRQ_WR = 5;

    /** {max_qp_rd_atom, max_qp_init_rd_atom, max_qp_wr, max_cqe, max_srq, max_srq_wr} of a device context. */
    static native int[] deviceLimits(long context) throws IOException;

    static native String deviceName(long context);

    /** rdma_connect with private data (≤ 255 bytes; IB CM carries at most 56), flow_control 1. */
    static native void connect(
            long id, byte[] privateData, int responderResources, int initiatorDepth, int retryCount, int rnrRetryCount)
            throws IOException;

    /** rdma_accept with private data (IB CM carries at most 196 bytes). */
    static native void accept(
            long id, byte[] privateData, int responderResources, int initiatorDepth, int rnrRetryCount)
            throws IOException;

    /** rdma_reject with private data (IB CM carries at most 148 bytes; reason "consumer defined"). */
    static native void reject(long id, byte[] privateData) throws IOException;

    /**
     * The serial of a live {@code id}: unlike its address, which a new id may get once it is destroyed, never given to
     * another id.
     */
    static native long idSerial(long id);

    /**
     * The serial of the id that the calling thread's last DiSNI {@code getCmEvent} is dispatched by (the listener's
     * for a connect request; 0 if there was no event). The library acks the event before DiSNI returns it, so by then
     * another thread may have destroyed that id and a new one may have its address: an event goes to the endpoint
     * registered under its address only if that endpoint's id has this serial.
     */
    static native long eventSerial();

    /** The private data of the last CM event on {@code id}, as delivered (IB CM pads it to the message's size). */
    static native byte[] eventPrivateData(long id);

    /**
     * {event, status, responder_resources, initiator_depth} of the last CM event on {@code id}; the conn params are as
     * librdmacm reports them, from this side's point of view (responder_resources: reads the peer wants to issue
     * against us; initiator_depth: reads we may issue).
     */
    static native int[] eventInfo(long id);

    /**
     * ibv_create_srq in {@code pd}: {@code maxWr} receives of one SGE; the max_wr the device granted (≥ maxWr) is
     * written to {@code granted[0]}. Returns the SRQ.
     */
    static native long createSrq(long pd, int maxWr, int[] granted) throws IOException;

    /** ibv_destroy_srq: 0 or the errno (EBUSY while a QP still uses it). */
    static native int destroySrq(long srq);

    /** ibv_post_srq_recv of one buffer: 0 or the errno (ENOMEM when the SRQ is full). Allocates nothing. */
    static native int postSrqRecv(long srq, long wrId, long address, int length, int lkey);

    /**
     * rdma_create_qp on {@code id}: an RC QP in {@code pd} whose sends and receives complete on {@code cq} and whose
     * receives come from {@code srq}; {@code maxSendWr} send work requests of one SGE. Returns the QP.
     */
    static native long createQpOnSrq(long id, long pd, long cq, long srq, int maxSendWr) throws IOException;

    /** rdma_destroy_qp of a QP made by {@link #createQpOnSrq}. */
    static native void destroyQp(long id);

    /** The qp_num of a QP. */
    static native int qpNumber(long qp);
}

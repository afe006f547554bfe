package io.nvmeof.transport.rdma.disni.impl;

import java.io.IOException;

/**
 * The CM calls DiSNI 2.1 lacks, from libnvmeofrdma (src/main/native/nvmeofrdma.c): connect and accept with every
 * rdma_conn_param field and private data, reject with private data, and what the last CM event on an id carried
 * (recorded by the library's DiSNI {@code _getCmEvent}). Ids and contexts are the native pointers DiSNI calls objIds.
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

    /** {max_qp_rd_atom, max_qp_init_rd_atom, max_qp_wr, max_cqe} of a device context. */
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

    /** The private data of the last CM event on {@code id}, as delivered (IB CM pads it to the message's size). */
    static native byte[] eventPrivateData(long id);

    /**
     * {event, status, responder_resources, initiator_depth} of the last CM event on {@code id}; the conn params are as
     * librdmacm reports them, from this side's point of view (responder_resources: reads the peer wants to issue
     * against us; initiator_depth: reads we may issue).
     */
    static native int[] eventInfo(long id);
}

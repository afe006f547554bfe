package io.nvmeof.transport.rdma;

import io.nvmeof.transport.rdma.verbs.RdmaRejectedException;

/**
 * The controller rejected an NVMe/RDMA CM connect; {@link #sts()} is the NVMe/RDMA status from its reject private data
 * (nvmeof-protocol.md §6.1), or -1 if it sent fewer than 4 bytes.
 */
public final class NvmeRdmaRejectedException extends RdmaRejectedException {
    private static final long serialVersionUID = 1L;
    private final int sts;

    NvmeRdmaRejectedException(String message, byte[] privateData, int sts) {
        super(message, privateData);
        this.sts = sts;
    }

    /** STS (e.g. {@link RdmaCmReject#STS_INVALID_HSQSIZE}), or -1 when the reject carried no status. */
    public int sts() {
        return sts;
    }
}

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

    /** The NVMe/RDMA reading of a CM reject: {@code what} + ": STS n (name)", or + " without a status". */
    static NvmeRdmaRejectedException of(RdmaRejectedException e, String what) {
        java.nio.ByteBuffer rej = e.privateData();
        int sts = rej.remaining() >= RdmaCmReject.LENGTH ? rej.getShort(RdmaCmReject.STS_OFFSET) & 0xFFFF : -1;
        byte[] bytes = new byte[rej.remaining()];
        rej.get(0, bytes);
        return new NvmeRdmaRejectedException(
                what + (sts >= 0 ? ": STS " + sts + " (" + RdmaCmReject.stsName(sts) + ")" : " without a status"),
                bytes,
                sts);
    }

    /** STS (e.g. {@link RdmaCmReject#STS_INVALID_HSQSIZE}), or -1 when the reject carried no status. */
    public int sts() {
        return sts;
    }
}

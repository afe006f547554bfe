package io.nvmeof.transport.rdma;

import java.io.IOException;

/** The peer broke the NVMe/RDMA binding (nvmeof-protocol.md §6): a short capsule or response, an unknown CID, a bogus invalidation. */
public final class NvmeRdmaProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    public NvmeRdmaProtocolException(String message) {
        super(message);
    }
}

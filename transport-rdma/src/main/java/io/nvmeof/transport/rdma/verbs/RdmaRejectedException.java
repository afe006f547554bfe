package io.nvmeof.transport.rdma.verbs;

import java.io.IOException;
import java.nio.ByteBuffer;

/** The peer rejected a connect; carries its reject private data (NVMe/RDMA: RECFMT + STS, nvmeof-protocol.md §6.1). */
public class RdmaRejectedException extends IOException {
    private static final long serialVersionUID = 1L;
    private final byte[] privateData;

    public RdmaRejectedException(String message, byte[] privateData) {
        super(message);
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /** The reject private data as a little-endian buffer. */
    public ByteBuffer privateData() {
        return ByteBuffer.wrap(privateData.clone()).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }
}

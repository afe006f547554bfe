package io.nvmeof.transport.tcp;

import java.io.IOException;

/**
 * A fatal NVMe/TCP protocol fault on one connection (nvmeof-protocol.md §5.7): what the peer did wrong, with the
 * TermReq FES/FEI sent for it (0/0 when none was sent). Passed to {@code QueueHandler.onClose} as the cause.
 */
public final class NvmeTcpProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    private final int fes;
    private final int fei;

    public NvmeTcpProtocolException(String message, int fes, int fei) {
        super(message);
        this.fes = fes;
        this.fei = fei;
    }

    /** The fatal error status sent in the TermReq (nvmeof-protocol.md §5.7), or 0 if the connection was closed without one. */
    public int fes() {
        return fes;
    }

    public int fei() {
        return fei;
    }
}

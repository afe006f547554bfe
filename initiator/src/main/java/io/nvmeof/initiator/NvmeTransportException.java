package io.nvmeof.initiator;

/**
 * The connection to the controller failed, was closed, or could not be made; the outcome of a command that fails with
 * this is unknown (a write may or may not have reached the media).
 */
public class NvmeTransportException extends NvmeException {
    private static final long serialVersionUID = 1L;

    public NvmeTransportException(String message) {
        super(message);
    }

    public NvmeTransportException(String message, Throwable cause) {
        super(message, cause);
    }
}

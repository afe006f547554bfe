package io.nvmeof.initiator;

/**
 * The controller is lost for good: it did not come back within {@code ctrl_loss_tmo} (or reconnecting is off and its
 * connection failed), or it came back without this namespace. Commands that were waiting for the reconnect, and every
 * later one, fail with this. The outcome of a write that failed with it is unknown. {@link Controller#failure()}
 * holds the first one.
 */
public class NvmeControllerLostException extends NvmeTransportException {
    private static final long serialVersionUID = 1L;

    public NvmeControllerLostException(String message) {
        super(message);
    }

    public NvmeControllerLostException(String message, Throwable cause) {
        super(message, cause);
    }
}

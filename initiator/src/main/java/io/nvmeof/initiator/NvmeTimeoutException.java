package io.nvmeof.initiator;

/**
 * A command got no answer within its timeout ({@link NvmeUri#timeout()}), or a caller waited that long for a free
 * command slot. A command timeout starts the Linux host's error recovery (nvmeof-protocol.md §7.3): a controller that
 * reconnects retries the I/O command (the caller sees this exception only once the command's retries are used up); with
 * {@code ctrl_loss_tmo=0} the controller fails, its queues are closed and every other outstanding command fails with
 * {@link NvmeTransportException}.
 */
public class NvmeTimeoutException extends NvmeException {
    private static final long serialVersionUID = 1L;

    public NvmeTimeoutException(String message) {
        super(message);
    }
}

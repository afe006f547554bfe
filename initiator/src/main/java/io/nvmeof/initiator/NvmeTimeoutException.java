package io.nvmeof.initiator;

/**
 * A command got no answer within its timeout ({@link NvmeUri#timeout()}), or a caller waited that long for a free
 * command slot. A command timeout fails the controller, as the Linux host's error recovery does (nvmeof-protocol.md §7.3): its queues are
 * closed and every other outstanding command fails with {@link NvmeTransportException}.
 */
public class NvmeTimeoutException extends NvmeException {
    private static final long serialVersionUID = 1L;

    public NvmeTimeoutException(String message) {
        super(message);
    }
}

package io.nvmeof.initiator;

/**
 * The controller has been reconnecting for longer than {@code fast_io_fail_tmo}: commands waiting for it, and new
 * ones, fail with this until it is live again (Linux: NVME_CTRL_FAILFAST_EXPIRED). The controller keeps trying until
 * {@code ctrl_loss_tmo}. The outcome of a write that failed with it is unknown.
 */
public class NvmeFastIoFailException extends NvmeTransportException {
    private static final long serialVersionUID = 1L;

    public NvmeFastIoFailException(String message, Throwable cause) {
        super(message, cause);
    }
}

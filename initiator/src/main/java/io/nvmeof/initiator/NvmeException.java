package io.nvmeof.initiator;

import java.io.IOException;

/**
 * The base of every failure the initiator reports for a command or a connection: {@link NvmeStatusException} (the
 * controller answered with an error status), {@link NvmeTimeoutException} (no answer in time) and
 * {@link NvmeTransportException} (the connection failed or was closed). An {@link IOException}, so blocking forms fit
 * code written for files and channels.
 */
public class NvmeException extends IOException {
    private static final long serialVersionUID = 1L;

    public NvmeException(String message) {
        super(message);
    }

    public NvmeException(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.nvmeof.initiator;

/**
 * Completion of an I/O command in the allocation-free form: pass one long-lived callback and a per-I/O attachment
 * (your own request object), and nothing is allocated when the command succeeds.
 *
 * <p>Called exactly once per submitted command, on the I/O queue's thread (the transport's event loop): do not block
 * in it. From inside a callback, submit more I/O with the {@code try*} forms, which never wait for a slot.
 */
public interface IoCallback {
    /** The command succeeded; for a read the data is in the buffer. */
    void completed(Object attachment);

    /**
     * The command failed: {@link NvmeStatusException}, {@link NvmeTimeoutException} or {@link NvmeTransportException}.
     */
    void failed(NvmeException error, Object attachment);
}

package io.nvmeof.core.spi;

/**
 * Continuation of {@link TargetRequest#receiveData}. The core passes a long-lived object (typically its queue
 * handler), so asking for data allocates nothing.
 */
@FunctionalInterface
public interface DataReceiver {
    /**
     * Called on the queue thread when the host-to-controller data is in {@link TargetRequest#data()}, or when the
     * transfer failed: then {@code status} is non-zero (e.g. Data Transfer Error) and the core completes the command with
     * it.
     */
    void onData(TargetRequest request, int status);
}

package io.nvmeof.core.spi;

/**
 * The target core's side of one queue. Every call comes on the queue's own thread; nothing here may block.
 */
public interface QueueHandler {
    /**
     * A command capsule arrived. The request belongs to the transport; the core may keep it until it calls
     * {@link TargetRequest#complete()}, and must not touch it afterwards. Before the core runs a command it checks
     * {@link TargetRequest#transportStatus()}: a non-zero value is a problem the transport found with the command's data
     * pointer, and the core completes the command with it.
     */
    void onCommand(TargetRequest request);

    /**
     * The queue is gone (host closed it, protocol fault, keep-alive expiry, listener closed). Requests still held by the
     * core must not be completed after this; the transport drops them and releases their buffers.
     *
     * @param cause null for an orderly close, else what went wrong
     */
    void onClose(Throwable cause);
}

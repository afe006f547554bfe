package io.nvmeof.core.spi;

/**
 * The transport's side of one host queue (a TCP connection or an RDMA QP), connected at transport level and ready
 * for the fabrics Connect command. Owned by one thread (its event loop); callbacks of {@link HostCommand} come on that
 * thread.
 */
public interface HostQueue extends AutoCloseable {
    int qid();

    /**
     * In-capsule data the transport may use for host-to-controller data of non-fabrics commands on this queue:
     * IOCCSZ×16−64 for I/O queues (nvmeof-protocol.md §3.2.1), known after Identify. Fabrics commands (Connect) use the binding's own
     * admin limit (TCP: 8192, nvmeof-protocol.md §5.10). Default 0: every data transfer goes outside the capsule.
     */
    void maxInCapsuleData(int bytes);

    /**
     * Sends a command, from any thread, without blocking: the command goes out in order on the queue's thread. Its
     * CID must be in 0..queueSize-1 and not in flight on this queue. Allocation-free in steady state.
     *
     * @throws IllegalStateException if the queue is closed (the command is not taken)
     */
    void submit(HostCommand command);

    /**
     * Sets what is told, once, when the queue fails or closes (with null for an orderly {@link #close()}); every
     * command still in flight has already had {@link HostCommand#onTransportError} by then.
     */
    void onClose(java.util.function.Consumer<Throwable> listener);

    /**
     * A buffer of {@code size} bytes for command data that this transport moves with as few copies as it can: a
     * transport with registered memory (NVMe/RDMA) hands out memory the controller can access directly, so commands
     * naming it (or a slice or duplicate of it) move their data with no copy on the host, on any queue of the same
     * connection set, until this queue closes. Registration is slow: allocate once and reuse. Any thread.
     *
     * <p>Additive; the default is a plain direct little-endian buffer (NVMe/TCP writes direct buffers to the socket
     * as they are).
     *
     * @throws java.io.IOException if the transport cannot register the memory
     */
    default java.nio.ByteBuffer allocateBuffer(int size) throws java.io.IOException {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        return java.nio.ByteBuffer.allocateDirect(size).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    /** Runs {@code task} on the queue's thread. */
    void execute(Runnable task);

    boolean inQueueThread();

    boolean isOpen();

    /** Closes the connection; commands in flight get {@link HostCommand#onTransportError}. */
    @Override
    void close();
}

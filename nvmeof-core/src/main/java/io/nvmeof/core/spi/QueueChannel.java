package io.nvmeof.core.spi;

import java.net.SocketAddress;

/** The transport's side of one queue, as the target core sees it. */
public interface QueueChannel {
    /** What the controller must advertise for this queue's port. */
    PortInfo portInfo();

    SocketAddress remoteAddress();

    /** The local end of the connection: the address a host reached this port at (useful when bound to 0.0.0.0). */
    SocketAddress localAddress();

    /**
     * Called by the core on the queue thread when a Connect succeeded on this queue (nvmeof-protocol.md §2.2), before it completes the
     * Connect. The transport sizes the queue and, if {@code sqFlowControlDisabled}, may use the C2HData SUCCESS
     * optimisation (nvmeof-protocol.md §5.10).
     *
     * @param qid    0 admin, 1..N I/O
     * @param sqsize SQSIZE from Connect, 0's based
     */
    void connected(int qid, int sqsize, boolean sqFlowControlDisabled);

    /** Runs {@code task} on the queue's own thread (from any thread). Tasks submitted after close are dropped. */
    void execute(Runnable task);

    /** Whether the caller is on the queue's own thread. */
    boolean inQueueThread();

    /** Closes the queue from any thread; {@link QueueHandler#onClose} follows on the queue thread. */
    void close();

    boolean isOpen();
}

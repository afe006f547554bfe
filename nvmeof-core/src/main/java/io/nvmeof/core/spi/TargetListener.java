package io.nvmeof.core.spi;

import java.net.InetSocketAddress;

/** A listening port of a transport. Closing it stops accepting and closes every queue it accepted. */
public interface TargetListener extends AutoCloseable {
    /** The address actually bound (with the real port when port 0 was asked for). */
    InetSocketAddress localAddress();

    /** What the controller must advertise for queues that arrive on this port. */
    PortInfo portInfo();

    /**
     * An observer of the target's data memory (namespace RAM) that this listener wants to prepare for direct data
     * movement (RDMA: register it), or null (the default). The target attaches it after {@code listen} and detaches it
     * after {@link #close()}.
     */
    default MemoryObserver memoryObserver() {
        return null;
    }

    @Override
    void close();
}

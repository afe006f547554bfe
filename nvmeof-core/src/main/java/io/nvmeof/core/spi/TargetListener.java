package io.nvmeof.core.spi;

import java.net.InetSocketAddress;

/** A listening port of a transport. Closing it stops accepting and closes every queue it accepted. */
public interface TargetListener extends AutoCloseable {
    /** The address actually bound (with the real port when port 0 was asked for). */
    InetSocketAddress localAddress();

    /** What the controller must advertise for queues that arrive on this port. */
    PortInfo portInfo();

    @Override
    void close();
}

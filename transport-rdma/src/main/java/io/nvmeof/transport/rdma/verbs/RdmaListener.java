package io.nvmeof.transport.rdma.verbs;

import java.net.InetSocketAddress;

/** A listening CM endpoint. Closing it stops accepting; established connections stay. */
public interface RdmaListener extends AutoCloseable {
    InetSocketAddress localAddress();

    @Override
    void close();
}

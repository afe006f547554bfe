package io.nvmeof.testsupport;

import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One loop port: the target's {@link TargetListener}, registered with {@link LoopTransport} by port number. Owns the
 * {@link LoopConnection}s made to it (until each closes) and the {@link #paused} flag of {@link LoopTransport#pause}.
 */
final class LoopListener implements TargetListener {
    final InetSocketAddress address;
    final ListenerOptions options;
    final QueueAcceptor acceptor;
    final PortInfo portInfo;
    final List<LoopConnection> connections = new CopyOnWriteArrayList<>();
    volatile boolean paused;
    final AtomicBoolean open = new AtomicBoolean(true);

    LoopListener(InetSocketAddress address, ListenerOptions options, QueueAcceptor acceptor) {
        this.address = address;
        this.options = options;
        this.acceptor = acceptor;
        this.portInfo = new PortInfo(
                LoopTransport.TRTYPE_LOOP,
                PortInfo.ADRFAM_IPV4,
                address.getAddress().getHostAddress(),
                Integer.toString(address.getPort()),
                options.portId(),
                options.maxQueueSize(),
                options.inCapsuleDataSize(),
                0x00100001,
                0,
                0,
                new byte[0]);
    }

    LoopConnection connect(HostQueueOptions o) throws IOException {
        if (!open.get()) {
            throw new IOException("connection refused: loop port " + address.getPort() + " is closed");
        }
        LoopConnection c = new LoopConnection(this, o);
        connections.add(c);
        c.start();
        return c;
    }

    @Override
    public InetSocketAddress localAddress() {
        return address;
    }

    @Override
    public PortInfo portInfo() {
        return portInfo;
    }

    @Override
    public void close() {
        if (open.compareAndSet(true, false)) {
            LoopTransport.unregister(this);
            for (LoopConnection c : connections) {
                c.close(new IOException("loop listener on port " + address.getPort() + " closed"));
            }
        }
    }
}

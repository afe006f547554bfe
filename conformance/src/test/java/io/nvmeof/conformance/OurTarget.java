package io.nvmeof.conformance;

import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;

/** Our target in this JVM, set up like the nvmet side ({@link Geometry}): one namespace, any host, 127.0.0.1:free. */
final class OurTarget implements AutoCloseable {
    final NvmeTarget target;
    final InetSocketAddress address;

    OurTarget(Geometry g) throws IOException {
        SubsystemConfig sub = new SubsystemConfig(
                g.subNqn(),
                true,
                List.of(),
                List.of(new NamespaceConfig(1, g.bytes(), g.blockSize(), null, false)),
                null,
                null);
        TargetConfig config = new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)), List.of(sub), 1L << 30, 0);
        target = NvmeTarget.start(config);
        address = target.boundAddresses().get(0);
    }

    @Override
    public void close() {
        target.close();
    }
}

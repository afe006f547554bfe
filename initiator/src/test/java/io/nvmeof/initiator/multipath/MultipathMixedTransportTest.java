package io.nvmeof.initiator.multipath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One namespace over two transports: path 1 NVMe/TCP, path 2 NVMe/RDMA (the software RNIC in this JVM; emulated),
 * two listeners of one subsystem of our target. Round-robin alternates the transports with the data intact; with the
 * TCP listener's group inaccessible everything goes over RDMA.
 */
class MultipathMixedTransportTest {
    static final String NQN = "nqn.2026-01.io.nvmeof:mpath-mixed";

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void oneNamespaceOverTcpAndRdma() throws Exception {
        SubsystemConfig s = new SubsystemConfig(
                NQN,
                true,
                List.of(),
                List.of(new NamespaceConfig(1, 16L << 20, 4096, null, false)),
                null,
                null,
                List.of());
        TargetConfig config = new TargetConfig(
                List.of(
                        new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384),
                        new ListenerConfig("rdma", "127.0.0.1", 0, 128, 4096)),
                List.of(s),
                1L << 30,
                0);
        try (NvmeTarget target = NvmeTarget.start(config)) {
            List<NvmeUri> paths = List.of(
                    NvmeUri.parse("nvme+tcp://127.0.0.1:"
                            + target.boundAddresses().get(0).getPort() + "/" + NQN + "?queues=1&depth=16&timeout=10s"),
                    NvmeUri.parse("nvme+rdma://127.0.0.1:"
                            + target.boundAddresses().get(1).getPort() + "/" + NQN + "?queues=1&depth=16&timeout=10s"));
            try (MultipathNamespace ns = MultipathNamespace.connect(
                    paths, MultipathOptions.defaults().withPolicy(IoPolicy.ROUND_ROBIN))) {
                assertTrue(
                        ns.paths().get(0).address().startsWith("tcp://"),
                        ns.paths().toString());
                assertTrue(
                        ns.paths().get(1).address().startsWith("rdma://"),
                        ns.paths().toString());
                ByteBuffer buf = ns.allocateBuffer(1);
                for (int i = 0; i < 64; i++) {
                    buf.putLong(0, 1000 + i);
                    ns.write(i, 1, buf);
                }
                long[] before = {ns.paths().get(0).commands(), ns.paths().get(1).commands()};
                for (int i = 0; i < 64; i++) {
                    buf.putLong(0, 0);
                    ns.read(i, 1, buf);
                    assertEquals(1000 + i, buf.getLong(0), "block " + i);
                }
                assertEquals(32, ns.paths().get(0).commands() - before[0], "round-robin over both transports");
                assertEquals(32, ns.paths().get(1).commands() - before[1]);

                target.setAnaState(NQN, 1, 1, AnaState.INACCESSIBLE);
                MultipathFailoverTest.await(
                        "tcp path inaccessible", () -> ns.paths().get(0).anaState() == AnaState.INACCESSIBLE);
                long tcp = ns.paths().get(0).commands();
                for (int i = 0; i < 64; i++) {
                    ns.read(i, 1, buf);
                    assertEquals(1000 + i, buf.getLong(0), "block " + i);
                }
                assertEquals(tcp, ns.paths().get(0).commands(), "nothing on the inaccessible TCP path");
            }
        }
    }
}

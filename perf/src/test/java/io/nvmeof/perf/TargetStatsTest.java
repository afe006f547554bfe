package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The vendor log page over the fabric with the public Controller.getLogPage, and how other LIDs are refused. */
class TargetStatsTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").blockSize(4096).build();

    @Test
    void countersIncreaseOverTheFabric() throws Exception {
        try (Controller c = Nvme.connect(target.uri())) {
            ByteBuffer raw = c.getLogPage(TargetStats.LID, 0, 0, 512);
            assertEquals(512, raw.remaining());
            assertEquals(ByteOrder.LITTLE_ENDIAN, raw.order());
            assertEquals(TargetStats.MAGIC, raw.getInt(0), "\"NVOJ\"");
            assertEquals(1, raw.getShort(4));
            TargetStats.Reading before = TargetStats.read(c);
            assertTrue(before.known(), String.valueOf(before.unknown()));
            ByteBuffer buf = ByteBuffer.allocateDirect(8192);
            for (int i = 0; i < 50; i++) {
                c.namespace().write(2L * i, 2, buf);
                c.namespace().read(2L * i, 2, buf);
            }
            TargetStats.Reading after = TargetStats.read(c);
            assertEquals(100, after.commands() - before.commands(), "50 writes + 50 reads");
            assertTrue(after.cpu().totalNanos() > before.cpu().totalNanos(), "process CPU grew");
            assertTrue(after.cpu().clockNanos() > before.cpu().clockNanos());
            assertEquals(Runtime.getRuntime().availableProcessors(), after.cpus());
            // a piece at an offset, as any host may read it
            assertEquals(
                    after.commands(), c.getLogPage(TargetStats.LID, 0, 40, 8).getLong(0));
        }
    }

    @Test
    void otherLidsAreRefusedAndArgumentsChecked() throws Exception {
        try (Controller c = Nvme.connect(target.uri())) {
            NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> c.getLogPage(0xC1, 0, 0, 512));
            assertTrue(e.getMessage().contains("Invalid Field"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> c.getLogPage(0xC0, 0, 0, 510));
            assertThrows(IllegalArgumentException.class, () -> c.getLogPage(0xC0, 0, 2, 512));
            assertThrows(IllegalArgumentException.class, () -> c.getLogPage(256, 0, 0, 512));
            assertTrue(c.isOpen(), "a refused log page does not hurt the controller");
        }
    }

    @Test
    void aTargetWithAnotherModelIsUnknown() throws Exception {
        io.nvmeof.target.config.SubsystemConfig sub = new io.nvmeof.target.config.SubsystemConfig(
                "nqn.2024-01.io.nvmeof:other",
                true,
                java.util.List.of(),
                java.util.List.of(io.nvmeof.target.config.NamespaceConfig.of(1, 16L << 20)),
                "SN1",
                "Linux");
        io.nvmeof.target.config.ListenerConfig l = io.nvmeof.target.config.ListenerConfig.parse(
                "tcp://127.0.0.1:0",
                io.nvmeof.core.spi.ListenerOptions.DEFAULT_MAX_QUEUE_SIZE,
                io.nvmeof.core.spi.ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE);
        try (io.nvmeof.target.NvmeTarget t = io.nvmeof.target.NvmeTarget.create(
                new io.nvmeof.target.config.TargetConfig(java.util.List.of(l), java.util.List.of(sub)))) {
            t.start();
            int port = t.boundAddresses().get(0).getPort();
            try (Controller c = Nvme.connect("nvme+tcp://127.0.0.1:" + port + "/nqn.2024-01.io.nvmeof:other")) {
                TargetStats.Reading r = TargetStats.read(c);
                assertTrue(!r.known() && r.unknown().contains("model 'Linux' is not nvmeof-java"), r.unknown());
            }
        }
    }
}

package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The discovery log read in pieces with the GENCTR check (nvmeof-protocol.md §3.3, §7.2), and connecting from an entry. */
class DiscoveryTest {
    @RegisterExtension
    NvmeofTargetExtension target = NvmeofTargetExtension.builder()
            .namespace("1M")
            .subsystem("nqn.2024-01.io.nvmeof:a", "1M")
            .subsystem("nqn.2024-01.io.nvmeof:b", "1M")
            .subsystem("nqn.2024-01.io.nvmeof:c", "1M")
            .subsystem("nqn.2024-01.io.nvmeof:d", "1M")
            .build();

    @AfterEach
    void noHook() {
        Controller.discoveryReadHook = null;
    }

    @Test
    void readsTheLogInPieces() throws Exception {
        AtomicInteger logCommands = new AtomicInteger();
        Controller.discoveryReadHook = logCommands::set;
        DiscoveryLog log = Nvme.discover(target.discoveryUri());
        // 1 current-discovery entry + 5 subsystems = 6 KiB of entries: header, then chunks of 4096 and 2048
        assertEquals(6, log.entries().size());
        assertEquals(3, logCommands.get(), "header + two chunks");
        DiscoveryEntry d = log.entries().get(0);
        assertEquals(DiscoveryEntry.SUBTYPE_CURRENT_DISCOVERY, d.subtype());
        assertEquals(Nqn.DISCOVERY, d.subnqn());
        List<DiscoveryEntry> nvm = log.nvmSubsystems();
        assertEquals(5, nvm.size());
        assertEquals(target.nqn(), nvm.get(0).subnqn());
        DiscoveryEntry e = nvm.get(0);
        assertEquals(3, e.trtype());
        assertEquals("tcp", e.transportName());
        assertEquals("ipv4", e.addressFamilyName());
        assertEquals("127.0.0.1", e.traddr());
        assertEquals(Integer.toString(target.port()), e.trsvcid());
        assertEquals(0xFFFF, e.cntlid());
        assertTrue(log.generation() > 0);
    }

    @Test
    void restartsWhenTheGenerationChangesWhileReading() throws Exception {
        long before = target.target().discoveryGeneration();
        AtomicInteger calls = new AtomicInteger();
        Controller.discoveryReadHook = n -> {
            if (calls.incrementAndGet() == 2) {
                // a new port appears between two chunks: GENCTR changes, and so do the entries
                target.target()
                        .acceptorFor(new PortInfo(
                                PortInfo.TRTYPE_TCP,
                                PortInfo.ADRFAM_IPV4,
                                "127.0.0.2",
                                "4420",
                                9,
                                128,
                                16384,
                                0x00100001,
                                0,
                                0,
                                new byte[0]));
            }
        };
        DiscoveryLog log = Nvme.discover(target.discoveryUri());
        assertNotEquals(before, log.generation());
        assertEquals(target.target().discoveryGeneration(), log.generation());
        assertEquals(12, log.entries().size(), "the second, consistent read sees both ports");
        assertTrue(calls.get() > 3, "the log was read again");
    }

    @Test
    void connectsToAnEntry() throws Exception {
        try (Controller d = Nvme.connect(target.discoveryUri())) {
            assertTrue(d.isDiscovery());
            assertTrue(d.identity().isDiscovery());
            assertEquals(0, d.ioQueueCount());
            DiscoveryEntry b = d.discoveryLog().nvmSubsystems().stream()
                    .filter(e -> e.subnqn().equals("nqn.2024-01.io.nvmeof:b"))
                    .findFirst()
                    .orElseThrow();
            try (Controller c = d.connect(b)) {
                assertEquals("nqn.2024-01.io.nvmeof:b", c.subsystemNqn());
                c.namespace().write(0, 1, ByteBuffer.allocateDirect(4096));
            }
            assertThrows(
                    IllegalArgumentException.class,
                    () -> d.connect(d.discoveryLog().entries().get(0)));
        }
    }

    @Test
    void discoverWithASubsystemUriUsesTheDiscoveryNqn() throws Exception {
        assertEquals(6, Nvme.discover(target.uri()).entries().size());
    }

    @Test
    void anIoControllerHasNoDiscoveryLog() throws Exception {
        try (Controller c = Nvme.connect(target.uri())) {
            assertThrows(IllegalStateException.class, c::discoveryLog);
        }
    }
}

package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.testsupport.ObservedTransport;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
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

    /**
     * Discovers through a TCP transport that shows {@code observer} each discovery log Get Log Page as
     * "LPO+length", before it goes out.
     */
    private DiscoveryLog discover(Consumer<String> observer) throws NvmeException {
        ObservedTransport tcp = new ObservedTransport(Transport.find("tcp"), e -> {
            if (e.opcode() == AdminOpcode.GET_LOG_PAGE.code() && (e.cdw10() & 0xFF) == 0x70) {
                long lpo = (e.cdw12() & 0xFFFFFFFFL) | ((long) e.cdw13() << 32);
                long numd = ((e.cdw10() >>> 16) | ((long) (e.cdw11() & 0xFFFF) << 16)) + 1;
                observer.accept(lpo + "+" + numd * 4);
            }
        });
        return Nvme.discover(
                NvmeUri.parse(target.discoveryUri()),
                ConnectOptions.builder().transport(tcp).build());
    }

    @Test
    void readsTheLogInPieces() throws Exception {
        List<String> logCommands = new CopyOnWriteArrayList<>();
        DiscoveryLog log = discover(logCommands::add);
        // 1 current-discovery entry + 5 subsystems = 6 KiB of entries: header, then chunks of 4096 and 2048
        assertEquals(6, log.entries().size());
        assertEquals(
                List.of("0+20", "1024+4096", "5120+2048", "0+20"),
                logCommands,
                "header + two chunks (then the header again for the GENCTR check)");
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
        DiscoveryLog log = discover(command -> {
            if (calls.incrementAndGet() == 3) {
                // a new port appears between two chunks (before the second one goes out): GENCTR changes, and so do
                // the entries
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
        });
        assertNotEquals(before, log.generation());
        assertEquals(target.target().discoveryGeneration(), log.generation());
        assertEquals(12, log.entries().size(), "the second, consistent read sees both ports");
        // header, two chunks, header again: 4 commands for one read
        assertTrue(calls.get() > 4, "the log was read again");
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

package io.nvmeof.target;

import static io.nvmeof.target.BringUpTest.ascii;
import static io.nvmeof.target.BringUpTest.nqn;
import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.target.config.NamespaceConfig;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** `nvme discover` against the discovery controller (nvmeof-protocol.md §7.2, §3.3, §3.7). */
class DiscoveryTest {
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    @Test
    void discoverSequenceWithPartialReads() {
        FakeRequest connect = host.connectAdmin(Nqn.DISCOVERY, 0);
        assertEquals(0, connect.status());
        Controller ctrl = target.discoverySubsystem().controllers().get(0);
        assertEquals(120_000, ctrl.katoMillis(), "KATO 0 on discovery uses TargetConfig.discoveryKatoMillis");
        // before enable a discovery controller answers Invalid Opcode + DNR
        assertEquals(
                Status.dnr(Status.INVALID_OPCODE),
                host.admin(InJvmHost.identify(1, 0)).status());
        assertEquals(Properties.CSTS_RDY, host.enable());

        ByteBuffer id = check(host.admin(InJvmHost.identify(0x01, 0))).dataBuffer();
        assertEquals(2, id.get(111), "CNTRLTYPE discovery");
        assertEquals(host.cntlid, id.getShort(78) & 0xFFFF);
        assertEquals(0x80000000, id.getInt(92), "OAES discovery log change");
        assertEquals(0x04, id.get(261), "LPA extended data");
        assertEquals(Nqn.DISCOVERY, nqn(id, 768));
        assertEquals(0, id.getInt(516), "NN 0");
        // MAXCMD agrees with CAP.MQES + 1, as on I/O controllers (the Linux host warns otherwise).
        assertEquals(128, id.getShort(514) & 0xFFFF, "MAXCMD");
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.identify(0x02, 0)).status());

        check(host.admin(InJvmHost.setFeatures(0x0B, 0x80000000)));
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.setFeatures(0x0B, 0x100)).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.setFeatures(0x07, 0)).status());
        FakeRequest aer = InJvmHost.asyncEventRequest();
        aer.sqe().cid(31);
        host.admin.submit(aer);

        // 14: header, 20 bytes
        ByteBuffer header =
                check(host.admin(InJvmHost.getLogPage(0x70, 0, 0, 20, true))).dataBuffer();
        long genctr = header.getLong(0);
        long numrec = header.getLong(8);
        assertEquals(0, header.getShort(16), "RECFMT");
        // this host may use NQN but not PRIVATE_NQN: SUBTYPE 3 + one SUBTYPE 2 on the one port
        assertEquals(2, numrec);
        // 15: entries from LPO 1024, in 1024-byte pieces (RAE on all but the last)
        ByteBuffer entries = ByteBuffer.allocate((int) numrec * 1024).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < numrec; i++) {
            FakeRequest r = check(host.admin(InJvmHost.getLogPage(0x70, 0, 1024 + 1024L * i, 1024, i < numrec - 1)));
            entries.put(1024 * i, r.received());
        }
        // 16: header again, same GENCTR
        ByteBuffer again =
                check(host.admin(InJvmHost.getLogPage(0x70, 0, 0, 20, false))).dataBuffer();
        assertEquals(genctr, again.getLong(0));
        assertEquals(numrec, again.getLong(8));

        assertEquals(PortInfo.TRTYPE_TCP, entries.get(0));
        assertEquals(PortInfo.ADRFAM_IPV4, entries.get(1));
        assertEquals(3, entries.get(2), "SUBTYPE current discovery subsystem first");
        assertEquals(Nqn.DISCOVERY, nqn(entries, 256));
        assertEquals(2, entries.get(1024 + 2), "SUBTYPE NVM subsystem");
        assertEquals(PortInfo.TREQ_SQFLOW_DISABLE_SUPPORTED, entries.get(1024 + 3), "TREQ from the port");
        assertEquals(1, entries.getShort(1024 + 4), "PORTID");
        assertEquals((short) 0xFFFF, entries.getShort(1024 + 6), "CNTLID dynamic");
        assertEquals(32, entries.getShort(1024 + 8), "ASQSZ");
        assertEquals("4420", nqn(entries, 1024 + 32));
        assertEquals(TestTargets.NQN, nqn(entries, 1024 + 256));
        assertEquals("127.0.0.1", nqn(entries, 1024 + 512));

        // a whole-page read agrees with the pieces; a misaligned LPO is refused; LPO past the end is refused
        FakeRequest whole = check(host.admin(InJvmHost.getLogPage(0x70, 0, 0, 3072, false)));
        assertEquals(ascii(entries, 1024 + 256, 30), ascii(whole.dataBuffer(), 2048 + 256, 30));
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.getLogPage(0x70, 0, 2, 20, false)).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.getLogPage(0x70, 0, 8192, 20, false)).status());
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                host.admin(InJvmHost.getLogPage(0x70, 0, 0, 20, false).dataLength(24))
                        .status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.getLogPage(0x02, 0, 0, 512, false)).status());

        // a new port changes GENCTR and raises the discovery AEN on the held AER
        target.acceptorFor(new PortInfo(
                PortInfo.TRTYPE_TCP,
                PortInfo.ADRFAM_IPV4,
                "0.0.0.0",
                "4421",
                2,
                128,
                8192,
                0x00100001,
                0,
                0,
                new byte[0]));
        FakeRequest event = await(aer);
        assertEquals(0x0070F002, event.dw0());
        ByteBuffer after =
                check(host.admin(InJvmHost.getLogPage(0x70, 0, 0, 1024, false))).dataBuffer();
        assertTrue(after.getLong(0) != genctr);
        assertEquals(4, after.getLong(8));
        // the wildcard port is listed with the address the host reached us at
        FakeRequest all = check(host.admin(InJvmHost.getLogPage(0x70, 0, 0, 5 * 1024, false)));
        assertEquals("127.0.0.1", nqn(all.dataBuffer(), 4 * 1024 + 512));
        assertEquals("4421", nqn(all.dataBuffer(), 4 * 1024 + 32));

        // 17: shutdown handshake
        assertEquals(Properties.CSTS_SHST_COMPLETE, host.shutdown() & Properties.CSTS_SHST_MASK);
    }

    @Test
    void allowedHostSeesPrivateSubsystem() {
        InJvmHost other =
                new InJvmHost(target.acceptorFor(InJvmQueue.TCP_PORT), InJvmQueue.TCP_PORT, TestTargets.OTHER_HOST);
        try {
            check(other.connectAdmin(Nqn.DISCOVERY, 0));
            other.enable();
            ByteBuffer header = check(other.admin(InJvmHost.getLogPage(0x70, 0, 0, 3 * 1024 + 1024, false)))
                    .dataBuffer();
            assertEquals(3, header.getLong(8));
            assertEquals(TestTargets.PRIVATE_NQN, nqn(header, 3 * 1024 + 256));
        } finally {
            other.close();
        }
    }

    @Test
    void runtimeNamespaceDoesNotChangeDiscovery() {
        long before = target.discoveryGeneration();
        target.addNamespace(TestTargets.NQN, NamespaceConfig.of(0, 1 << 20));
        assertEquals(before, target.discoveryGeneration());
    }

    static FakeRequest await(FakeRequest r) {
        try {
            return r.done.get(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("no completion for " + r, e);
        }
    }
}

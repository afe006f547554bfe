package io.nvmeof.target;

import static io.nvmeof.target.DiscoveryTest.await;
import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.target.config.AnaStateConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Asymmetric Namespace Access over the in-JVM transport: Identify fields, the ANA log page (0Ch) with and without RGO,
 * the ANA change notice, and the path status of I/O in each state (NVMe Base 2.0 §8.1; nvmeof-protocol.md §3.2.1,
 * §3.3, §3.6). One subsystem on two listeners: PORTID 1 (port A) and PORTID 2 (port B); namespace 1 in group 1,
 * namespace 2 in group 2, namespace 3 in group 1; group 1 non-optimized on port B by configuration.
 */
class AnaTest {
    private static final String NQN = TestTargets.NQN;
    private static final PortInfo PORT_A = InJvmQueue.TCP_PORT;
    private static final PortInfo PORT_B = new PortInfo(
            PortInfo.TRTYPE_TCP,
            PortInfo.ADRFAM_IPV4,
            "127.0.0.1",
            "4421",
            2,
            128,
            16384,
            0x00100001,
            0,
            PortInfo.TREQ_SQFLOW_DISABLE_SUPPORTED,
            new byte[0]);
    private static final int LID_ANA = 0x0C;
    private static final int AEC_ANA = 1 << 11;
    private static final int EVENT_ANA = 0x000C0302;

    private final NvmeTarget target = NvmeTarget.create(new TargetConfig(
            List.of(),
            List.of(new SubsystemConfig(
                    NQN,
                    true,
                    List.of(),
                    List.of(
                            NamespaceConfig.of(1, 1L << 20),
                            NamespaceConfig.of(2, 1L << 20).withAnaGroup(2),
                            NamespaceConfig.of(3, 1L << 20)),
                    null,
                    null,
                    List.of(new AnaStateConfig(2, 1, AnaState.NON_OPTIMIZED)))),
            1L << 30,
            0));
    private final InJvmHost a = new InJvmHost(target.acceptorFor(PORT_A), PORT_A, InJvmHost.HOST_NQN);
    private final InJvmHost b = new InJvmHost(target.acceptorFor(PORT_B), PORT_B, InJvmHost.HOST_NQN);

    @AfterEach
    void tearDown() {
        a.close();
        b.close();
        target.close();
    }

    @Test
    void identifyControllerReportsAna() {
        a.bringUp(NQN, 1);
        ByteBuffer id = check(a.admin(InJvmHost.identify(0x01, 0))).dataBuffer();
        assertEquals(0x0B, id.get(76) & 0xFF, "CMIC: multi-port, multi-controller, ANA reporting (as nvmet)");
        assertEquals(0x900, id.getInt(92) & 0x900, "OAES bits 8 and 11");
        assertEquals(10, id.get(342) & 0xFF, "ANATT");
        assertEquals(0x1F, id.get(343) & 0xFF, "ANACAP: the five states, ANAGRPID may change (bit 6 clear)");
        assertEquals(128, id.getInt(344), "ANAGRPMAX");
        assertEquals(128, id.getInt(348), "NANAGRPID");
        assertEquals(1024, id.getInt(540), "MNAN: non-zero and <= NN, as the Linux host requires with CMIC bit 3");
        assertEquals(1024, id.getInt(516), "NN");
    }

    @Test
    void discoveryControllerHasNoAna() {
        InJvmHost d = new InJvmHost(target.acceptorFor(PORT_A), PORT_A, InJvmHost.HOST_NQN);
        try {
            check(d.connectAdmin(io.nvmeof.core.command.Nqn.DISCOVERY, 0));
            d.enable();
            ByteBuffer id = check(d.admin(InJvmHost.identify(0x01, 0))).dataBuffer();
            assertEquals(0, id.get(76));
            assertEquals(0, id.get(343));
        } finally {
            d.close();
        }
    }

    @Test
    void identifyNamespaceReportsTheGroupAndNuse() {
        a.bringUp(NQN, 1);
        ByteBuffer ns1 = check(a.admin(InJvmHost.identify(0x00, 1))).dataBuffer();
        assertEquals(1, ns1.getInt(92), "ANAGRPID");
        assertEquals(256, ns1.getLong(16), "NUSE");
        ByteBuffer ns2 = check(a.admin(InJvmHost.identify(0x00, 2))).dataBuffer();
        assertEquals(2, ns2.getInt(92));
        target.setAnaState(NQN, 1, 2, AnaState.INACCESSIBLE);
        ns2 = check(a.admin(InJvmHost.identify(0x00, 2))).dataBuffer();
        assertEquals(0, ns2.getLong(16), "NUSE 0 while inaccessible, as nvmet");
        assertEquals(256, ns2.getLong(0), "NSZE unchanged");
        target.setAnaState(NQN, 1, 2, AnaState.CHANGE);
        ns2 = check(a.admin(InJvmHost.identify(0x00, 2))).dataBuffer();
        assertEquals(256, ns2.getLong(16), "NUSE kept in the change state, as nvmet");
    }

    @Test
    void logPageListsGroupsWithTheirNamespacesAndThisPortsStates() {
        a.bringUp(NQN, 1);
        b.bringUp(NQN, 1);
        ByteBuffer la = anaLog(a, 4096, 0, false);
        long chgcnt = la.getLong(0);
        assertTrue(chgcnt > 0, "the configuration changed the log");
        assertEquals(2, la.getShort(8), "NGRPS");
        // group 1: NSIDs 1 and 3, optimized on port A
        assertEquals(1, la.getInt(16));
        assertEquals(2, la.getInt(20), "NNSIDS");
        assertEquals(1, la.get(32), "ANAS optimized");
        assertEquals(1, la.getInt(48));
        assertEquals(3, la.getInt(52));
        // group 2: NSID 2
        assertEquals(2, la.getInt(56));
        assertEquals(1, la.getInt(60));
        assertEquals(1, la.get(72));
        assertEquals(2, la.getInt(88));
        assertEquals(0, la.getInt(92), "zero after the log");
        // port B: group 1 non-optimized
        ByteBuffer lb = anaLog(b, 4096, 0, false);
        assertEquals(chgcnt, lb.getLong(0));
        assertEquals(2, lb.get(32), "ANAS non-optimized on port B");
        assertEquals(1, lb.get(72));
        // RGO: descriptors only, NNSIDS 0
        ByteBuffer rgo = anaLog(b, 4096, 0, true);
        assertEquals(2, rgo.getShort(8));
        assertEquals(1, rgo.getInt(16));
        assertEquals(0, rgo.getInt(20), "NNSIDS 0 with RGO");
        assertEquals(2, rgo.get(32));
        assertEquals(2, rgo.getInt(48), "the next descriptor follows at once");
        assertEquals(0, rgo.getInt(52));
        assertEquals(0, rgo.getInt(80), "nothing after the two descriptors");
        // an offset (LPO) and a short buffer
        ByteBuffer tail = anaLog(a, 8, 16, false);
        assertEquals(1, tail.getInt(0), "LPO 16: the first descriptor");
        assertEquals(2, tail.getInt(4));
        ByteBuffer head = anaLog(a, 16, 0, false);
        assertEquals(chgcnt, head.getLong(0));
        assertEquals(2, head.getShort(8), "NGRPS counts every group even if the buffer is short");
    }

    @Test
    void changeCountsFollowTheChanges() {
        a.bringUp(NQN, 1);
        ByteBuffer before = anaLog(a, 4096, 0, false);
        long c0 = before.getLong(0);
        long group2Before = before.getLong(64);
        target.setAnaState(NQN, 1, 1, AnaState.NON_OPTIMIZED);
        ByteBuffer after = anaLog(a, 4096, 0, false);
        assertEquals(c0 + 1, after.getLong(0), "header CHGCNT incremented");
        assertEquals(c0 + 1, after.getLong(24), "group 1's descriptor CHGCNT: the change that touched it");
        assertEquals(group2Before, after.getLong(64), "group 2 did not change");
        assertFalse(target.setAnaState(NQN, 1, 1, AnaState.NON_OPTIMIZED), "the same state again is no change");
        assertEquals(c0 + 1, anaLog(a, 4096, 0, false).getLong(0));
        // a new group listed once it has a state
        target.setAnaState(NQN, 1, 7, AnaState.OPTIMIZED);
        ByteBuffer three = anaLog(a, 4096, 0, false);
        assertEquals(3, three.getShort(8));
        assertEquals(7, three.getInt(16 + 40 + 36));
        // a namespace moves: both groups change
        target.setAnaGroup(NQN, 3, 2);
        ByteBuffer moved = anaLog(a, 4096, 0, false);
        long c = moved.getLong(0);
        assertEquals(1, moved.getInt(20), "group 1 has NSID 1 only");
        assertEquals(c, moved.getLong(24));
        assertEquals(2, moved.getInt(16 + 36 + 4), "group 2 has NSIDs 2 and 3");
        assertEquals(c, moved.getLong(16 + 36 + 8));
        assertEquals(2, check(a.admin(InJvmHost.identify(0x00, 3))).dataBuffer().getInt(92));
    }

    @Test
    void anaChangeNoticeGoesToTheControllersOfThatListener() {
        a.bringUp(NQN, 1);
        b.bringUp(NQN, 1);
        check(a.admin(InJvmHost.setFeatures(0x0B, 0x100 | AEC_ANA)));
        assertEquals(
                0x100 | AEC_ANA, check(a.admin(InJvmHost.getFeatures(0x0B, 0))).dw0());
        check(b.admin(InJvmHost.setFeatures(0x0B, AEC_ANA)));
        FakeRequest aerA = a.admin.submit(InJvmHost.asyncEventRequest());
        FakeRequest aerB = b.admin.submit(InJvmHost.asyncEventRequest());
        target.setAnaState(NQN, 1, 2, AnaState.INACCESSIBLE); // port A only
        assertEquals(EVENT_ANA, await(aerA).dw0(), "notice, ANA change (03h), log 0Ch");
        check(b.admin(InJvmHost.keepAlive()));
        assertFalse(aerB.done.isDone(), "port B's log did not change");
        // masked until the log is read without RAE
        FakeRequest aerA2 = a.admin.submit(InJvmHost.asyncEventRequest());
        target.setAnaState(NQN, 1, 2, AnaState.CHANGE);
        check(a.admin(InJvmHost.keepAlive()));
        assertFalse(aerA2.done.isDone(), "masked: the host has not read log 0Ch");
        check(a.admin(InJvmHost.getLogPage(LID_ANA, 0xFFFFFFFF, 0, 4096, true)));
        target.setAnaState(NQN, 1, 2, AnaState.OPTIMIZED);
        check(a.admin(InJvmHost.keepAlive()));
        assertFalse(aerA2.done.isDone(), "RAE keeps it masked");
        check(a.admin(InJvmHost.getLogPage(LID_ANA, 0xFFFFFFFF, 0, 4096, false)));
        target.setAnaState(NQN, 1, 2, AnaState.NON_OPTIMIZED);
        assertEquals(EVENT_ANA, await(aerA2).dw0(), "unmasked by the read without RAE");
        // a namespace changing group: every listener
        check(a.admin(InJvmHost.getLogPage(LID_ANA, 0xFFFFFFFF, 0, 4096, false)));
        FakeRequest aerA3 = a.admin.submit(InJvmHost.asyncEventRequest());
        target.setAnaGroup(NQN, 1, 2);
        assertEquals(EVENT_ANA, await(aerA3).dw0());
        assertEquals(EVENT_ANA, await(aerB).dw0());
    }

    @Test
    void noNoticeWithoutAecBit11() {
        a.bringUp(NQN, 1);
        check(a.admin(InJvmHost.setFeatures(0x0B, 0x100)));
        FakeRequest aer = a.admin.submit(InJvmHost.asyncEventRequest());
        target.setAnaState(NQN, 1, 1, AnaState.INACCESSIBLE);
        check(a.admin(InJvmHost.keepAlive()));
        assertFalse(aer.done.isDone());
    }

    @Test
    void ioInEachStateGetsThePathStatusWithoutDnr() {
        a.bringUp(NQN, 1);
        b.bringUp(NQN, 1);
        byte[] block = new byte[4096];
        block[0] = 42;
        check(a.io(InJvmHost.write(2, 0, block, 4096)));
        assertIo(AnaState.NON_OPTIMIZED, Status.SUCCESS);
        assertIo(AnaState.INACCESSIBLE, Status.ANA_INACCESSIBLE);
        assertIo(AnaState.PERSISTENT_LOSS, Status.ANA_PERSISTENT_LOSS);
        assertIo(AnaState.CHANGE, Status.ANA_TRANSITION);
        assertIo(AnaState.OPTIMIZED, Status.SUCCESS);
        // while group 2 is inaccessible on port A: port B still serves it; group 1 on port A too
        target.setAnaState(NQN, 1, 2, AnaState.INACCESSIBLE);
        Controller ca = controllerOn(1);
        Controller cb = controllerOn(2);
        long aBefore = ca.ioCommands();
        long bBefore = cb.ioCommands();
        assertEquals(42, check(b.io(InJvmHost.read(2, 0, 1, 4096))).dataBuffer().get(0));
        assertEquals(
                Status.ANA_INACCESSIBLE, a.io(InJvmHost.read(2, 0, 1, 4096)).status());
        assertEquals(aBefore, ca.ioCommands(), "a command refused for ANA is not counted on its path");
        assertEquals(bBefore + 1, cb.ioCommands(), "per-path I/O counter");
        check(a.io(InJvmHost.read(1, 0, 1, 4096)));
        assertEquals(aBefore + 1, ca.ioCommands());
        // the ANA check comes before the opcode, the namespace lookup before it, as nvmet
        FakeRequest unknown = new FakeRequest().expect(0);
        unknown.sqe().opcode(0x7E).nsid(2);
        assertEquals(Status.ANA_INACCESSIBLE, a.io(unknown).status());
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                a.io(InJvmHost.read(9, 0, 1, 4096)).status());
        // the error log records it
        ByteBuffer errors =
                check(a.admin(InJvmHost.getLogPage(0x01, 0, 0, 64, false))).dataBuffer();
        assertEquals(Status.dnr(Status.INVALID_NAMESPACE), errors.getShort(12) & 0xFFFE);
    }

    private Controller controllerOn(int portId) {
        for (Controller c : target.subsystem(NQN).controllers()) {
            if (c.port().portId() == portId) {
                return c;
            }
        }
        throw new AssertionError("no controller on port ID " + portId);
    }

    private void assertIo(AnaState state, int status) {
        target.setAnaState(NQN, 1, 2, state);
        assertEquals(status, a.io(InJvmHost.read(2, 0, 1, 4096)).status(), "Read, " + state);
        assertEquals(status, a.io(InJvmHost.write(2, 0, new byte[4096], 4096)).status() & 0xFFFE, "Write, " + state);
        if (status == Status.SUCCESS) {
            check(a.io(InJvmHost.write(2, 0, blockOf42(), 4096)));
        }
        assertEquals(status, a.io(InJvmHost.flush(2)).status(), "Flush, " + state);
        assertEquals(status, a.io(InJvmHost.writeZeroes(2, 1, 1, false)).status(), "Write Zeroes, " + state);
        assertEquals(status, a.io(InJvmHost.deallocate(2, 1, 1)).status(), "DSM, " + state);
        assertEquals(status, a.io(InJvmHost.compare(2, 0, blockOf42(), 4096)).status(), "Compare, " + state);
        assertFalse(Status.isDnr(a.io(InJvmHost.read(2, 0, 1, 4096)).status()));
    }

    private static byte[] blockOf42() {
        byte[] block = new byte[4096];
        block[0] = 42;
        return block;
    }

    @Test
    void badGroupsAndStatesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> target.setAnaState(NQN, 1, 0, AnaState.OPTIMIZED));
        assertThrows(IllegalArgumentException.class, () -> target.setAnaState(NQN, 1, 129, AnaState.OPTIMIZED));
        assertThrows(IllegalArgumentException.class, () -> target.setAnaState(NQN, 0, 1, AnaState.OPTIMIZED));
        assertThrows(IllegalArgumentException.class, () -> target.setAnaGroup(NQN, 9, 1), "no namespace 9");
        assertThrows(IllegalArgumentException.class, () -> target.setAnaGroup(NQN, 1, 200));
        assertThrows(
                IllegalArgumentException.class,
                () -> NamespaceConfig.of(1, 4096).withAnaGroup(129));
        assertThrows(IllegalArgumentException.class, () -> new AnaStateConfig(1, 1, null));
        assertThrows(
                IllegalArgumentException.class,
                () -> new SubsystemConfig(
                        NQN,
                        true,
                        List.of(),
                        List.of(),
                        null,
                        null,
                        List.of(
                                new AnaStateConfig(1, 1, AnaState.OPTIMIZED),
                                new AnaStateConfig(1, 1, AnaState.INACCESSIBLE))));
        assertEquals(AnaState.NON_OPTIMIZED, AnaState.parse("Non_Optimized"));
        assertThrows(IllegalArgumentException.class, () -> AnaState.parse("fast"));
    }

    @Test
    void aNamespaceAddedAtRunTimeJoinsItsGroup() {
        a.bringUp(NQN, 1);
        target.setAnaState(NQN, 1, 5, AnaState.INACCESSIBLE);
        target.addNamespace(NQN, NamespaceConfig.of(4, 1L << 20).withAnaGroup(5));
        assertEquals(5, check(a.admin(InJvmHost.identify(0x00, 4))).dataBuffer().getInt(92));
        assertEquals(
                Status.ANA_INACCESSIBLE, a.io(InJvmHost.read(4, 0, 1, 4096)).status());
        assertThrows(
                IllegalArgumentException.class,
                () -> target.addNamespace(NQN, NamespaceConfig.of(2, 1L << 20).withAnaGroup(9)),
                "NSID 2 is taken");
        assertEquals(2, target.subsystem(NQN).ana().groupOf(2), "the refused add did not move namespace 2");
        target.removeNamespace(NQN, 4);
        target.addNamespace(NQN, NamespaceConfig.of(4, 1L << 20));
        assertEquals(1, check(a.admin(InJvmHost.identify(0x00, 4))).dataBuffer().getInt(92), "back in group 1");
        check(a.io(InJvmHost.read(4, 0, 1, 4096)));
    }

    private static ByteBuffer anaLog(InJvmHost host, int length, long offset, boolean rgo) {
        FakeRequest r = InJvmHost.getLogPage(LID_ANA, 0xFFFFFFFF, offset, length, true);
        if (rgo) {
            r.sqe().cdw(10, r.sqe().cdw10() | 0x100); // LSP bit 0: RGO
        }
        return check(host.admin(r)).dataBuffer();
    }
}

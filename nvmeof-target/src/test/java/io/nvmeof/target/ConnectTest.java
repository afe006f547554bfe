package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Connect validation (nvmeof-protocol.md §2.1, §2.2) and the Property Get/Set state machine (nvmeof-protocol.md §2.3). */
class ConnectTest {
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    private FakeRequest raw(FakeRequest r) {
        InJvmQueue q = new InJvmQueue(target.acceptorFor(InJvmQueue.TCP_PORT), InJvmQueue.TCP_PORT);
        try {
            return q.call(r);
        } finally {
            q.close();
        }
    }

    private static FakeRequest adminConnect(String subnqn, String hostnqn) {
        return InJvmHost.connect(0, 31, 0, 5000, 0xFFFF, subnqn, hostnqn);
    }

    @Test
    void adminConnectFailures() {
        FakeRequest recfmt = adminConnect(TestTargets.NQN, InJvmHost.HOST_NQN);
        recfmt.sqe().connect(1, 0, 31, 0, 5000);
        assertEquals(Status.dnr(Status.CONNECT_INCOMPATIBLE_FORMAT), raw(recfmt).status());

        FakeRequest cntlid = InJvmHost.connect(0, 31, 0, 5000, 5, TestTargets.NQN, InJvmHost.HOST_NQN);
        FakeRequest r = raw(cntlid);
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        assertEquals((1 << 16) | 16, r.dw0(), "IATTR 1, IPO 16");

        r = raw(adminConnect("nqn.2024-01.io.nvmeof:nope", InJvmHost.HOST_NQN));
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        assertEquals((1 << 16) | 256, r.dw0(), "IATTR 1, IPO 256");

        r = raw(adminConnect(TestTargets.PRIVATE_NQN, InJvmHost.HOST_NQN));
        assertEquals(Status.dnr(Status.CONNECT_INVALID_HOST), r.status());
        assertEquals((1 << 16) | 512, r.dw0(), "IATTR 1, IPO 512");
        assertEquals(
                0,
                raw(adminConnect(TestTargets.PRIVATE_NQN, TestTargets.OTHER_HOST))
                        .status());

        r = raw(InJvmHost.connect(0, 0, 0, 5000, 0xFFFF, TestTargets.NQN, InJvmHost.HOST_NQN));
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        assertEquals(44, r.dw0(), "IATTR 0, IPO 44 (SQSIZE)");

        r = raw(adminConnect(TestTargets.NQN, InJvmHost.HOST_NQN).dataLength(512));
        assertEquals(Status.dnr(Status.DATA_SGL_LENGTH_INVALID), r.status());

        // a non-Connect command on an unconnected queue
        assertEquals(
                Status.dnr(Status.INVALID_OPCODE), raw(InJvmHost.identify(1, 0)).status());
        FakeRequest pget = new FakeRequest().expect(0);
        pget.sqe().opcode(0x7F).fctype(0x04).property(1, 0, 0);
        assertEquals(Status.dnr(Status.INVALID_OPCODE), raw(pget).status());
    }

    @Test
    void ioConnectFailures() {
        host.bringUp(TestTargets.NQN, 1);
        // SQSIZE 0 / SQSIZE > MQES
        FakeRequest r = host.connectIo(2, 0);
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        assertEquals(44, r.dw0());
        r = host.connectIo(2, 128);
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        assertEquals(44, r.dw0());
        // QID too large
        r = host.connectIo(129, 127);
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        assertEquals(42, r.dw0(), "IPO 42 (QID)");
        // QID reused
        r = host.connectIo(1, 127);
        assertEquals(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), r.status());
        // unknown CNTLID
        InJvmQueue q = new InJvmQueue(target.acceptorFor(InJvmQueue.TCP_PORT), InJvmQueue.TCP_PORT);
        r = q.call(InJvmHost.connect(2, 127, 0, 0, host.cntlid + 100, TestTargets.NQN, InJvmHost.HOST_NQN));
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        assertEquals((1 << 16) | 16, r.dw0());
        // another host naming this controller
        r = q.call(InJvmHost.connect(2, 127, 0, 0, host.cntlid, TestTargets.NQN, TestTargets.OTHER_HOST));
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        // second Connect on a connected queue
        assertEquals(
                0,
                q.call(InJvmHost.connect(2, 127, 0, 0, host.cntlid, TestTargets.NQN, InJvmHost.HOST_NQN))
                        .status());
        assertEquals(
                Status.dnr(Status.COMMAND_SEQUENCE_ERROR),
                q.call(InJvmHost.connect(2, 127, 0, 0, host.cntlid, TestTargets.NQN, InJvmHost.HOST_NQN))
                        .status());
        // Property Get on an I/O queue
        FakeRequest pget = new FakeRequest().expect(0);
        pget.sqe().opcode(0x7F).fctype(0x04).property(1, 0, 0);
        assertEquals(Status.dnr(Status.INVALID_OPCODE), q.call(pget).status());
        // Disconnect: I/O queue deleted, QID free again; on the admin queue Invalid Queue Type
        FakeRequest disc = new FakeRequest().expect(0);
        disc.sqe().opcode(0x7F).fctype(0x08);
        assertEquals(0, q.call(disc).status());
        assertEquals(
                Status.dnr(Status.INVALID_OPCODE), q.call(InJvmHost.flush(1)).status(), "not connected any more");
        assertEquals(
                0,
                q.call(InJvmHost.connect(2, 127, 0, 0, host.cntlid, TestTargets.NQN, InJvmHost.HOST_NQN))
                        .status());
        FakeRequest adminDisc = new FakeRequest().expect(0);
        adminDisc.sqe().opcode(0x7F).fctype(0x08);
        assertEquals(
                Status.dnr(Status.INVALID_QUEUE_TYPE), host.admin(adminDisc).status());
        // I/O queues on a discovery controller do not exist
        InJvmHost disco = new InJvmHost(target);
        check(disco.connectAdmin(Nqn.DISCOVERY, 0));
        disco.enable();
        r = disco.connectIo(1, 31);
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        assertEquals(42, r.dw0());
        disco.close();
        q.close();
    }

    @Test
    void ioConnectBeforeEnableIsASequenceError() {
        check(host.connectAdmin(TestTargets.NQN, 5000));
        assertEquals(Status.COMMAND_SEQUENCE_ERROR, host.connectIo(1, 127).status());
    }

    @Test
    void dynamicCntlidsAreDistinct() {
        check(host.connectAdmin(TestTargets.NQN, 5000));
        InJvmHost second = new InJvmHost(target);
        check(second.connectAdmin(TestTargets.NQN, 5000));
        assertNotEquals(host.cntlid, second.cntlid);
        second.close();
    }

    @Test
    void propertiesAndHandshakes() {
        check(host.connectAdmin(TestTargets.NQN, 5000));
        // CAP needs 8 bytes, VS/CC/CSTS 4; only CC is writable; unknown offsets refused
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.propertyGet(Properties.CAP, false).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.propertyGet(Properties.VS, true).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD), host.propertyGet(0x68, false).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.propertySet(Properties.CSTS, 1).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.propertySet(Properties.NSSR, 0x4E564D65).status());
        // a bad CC (IOSQES 5) sets CFS and never RDY
        check(host.propertySet(Properties.CC, 0x00450001));
        int csts = host.propertyGet(Properties.CSTS, false).dw0();
        assertEquals(Properties.CSTS_CFS, csts & (Properties.CSTS_CFS | Properties.CSTS_RDY));
        assertEquals(
                Status.dnr(Status.COMMAND_SEQUENCE_ERROR),
                host.admin(InJvmHost.keepAlive()).status());
        // reset, then a good enable
        check(host.propertySet(Properties.CC, 0x00460000));
        assertEquals(0, host.propertyGet(Properties.CSTS, false).dw0());
        check(host.propertySet(Properties.CC, 0x00460001));
        assertEquals(
                Properties.CSTS_RDY, host.propertyGet(Properties.CSTS, false).dw0());
        // MPS != 0 is refused too
        check(host.propertySet(Properties.CC, 0x00460000));
        check(host.propertySet(Properties.CC, 0x00460081));
        assertEquals(
                Properties.CSTS_CFS, host.propertyGet(Properties.CSTS, false).dw0() & Properties.CSTS_CFS);
        check(host.propertySet(Properties.CC, 0x00460000));
        check(host.propertySet(Properties.CC, 0x00460001));
        // shutdown: SHST complete, RDY clear; SHN back to 0 clears SHST
        check(host.propertySet(Properties.CC, 0x00464001));
        int shut = host.propertyGet(Properties.CSTS, false).dw0();
        assertEquals(Properties.CSTS_SHST_COMPLETE, shut);
        assertEquals(
                Status.dnr(Status.COMMAND_SEQUENCE_ERROR),
                host.admin(InJvmHost.identify(1, 0)).status(),
                "no command after a shutdown while SHN is set");
        check(host.propertySet(Properties.CC, 0x00460001));
        // SHN back to 0 with EN = 1 clears SHST and starts the controller again (nvmet, SPDK; the spec leaves it open)
        assertEquals(
                Properties.CSTS_RDY, host.propertyGet(Properties.CSTS, false).dw0());
        check(host.admin(InJvmHost.identify(1, 0)));
        // EN and SHN set in one write: enabled, then shut down at once; SHN cleared again: ready
        check(host.propertySet(Properties.CC, 0x00460000));
        check(host.propertySet(Properties.CC, 0x00468001));
        assertEquals(
                Properties.CSTS_SHST_COMPLETE,
                host.propertyGet(Properties.CSTS, false).dw0());
        check(host.propertySet(Properties.CC, 0x00460001));
        assertEquals(
                Properties.CSTS_RDY, host.propertyGet(Properties.CSTS, false).dw0());
        // a second EN = 1 without a shutdown before it changes nothing
        check(host.propertySet(Properties.CC, 0x00460001));
        assertEquals(
                Properties.CSTS_RDY, host.propertyGet(Properties.CSTS, false).dw0());
    }

    @Test
    void nqnWithoutNulIsReadAsItsFirst255BytesAsNvmetDoes() {
        FakeRequest noNul = InJvmHost.connect(0, 31, 0, 0, 0xFFFF, TestTargets.NQN, "x");
        int at = io.nvmeof.core.wire.ConnectData.HOSTNQN_OFFSET;
        for (int i = 0; i < 256; i++) {
            noNul.data().put(at + i, (byte) 'h');
        }
        InJvmQueue q = new InJvmQueue(target.acceptorFor(InJvmQueue.TCP_PORT), InJvmQueue.TCP_PORT);
        try {
            assertEquals(0, q.call(noNul).status(), "HOSTNQN of 256 bytes without NUL: accepted");
            Controller c = target.subsystem(TestTargets.NQN).controllers().get(0);
            assertEquals("h".repeat(255), c.hostNqn());
        } finally {
            q.close();
        }
    }

    @Test
    void fuseAndPsdtAreChecked() {
        host.bringUp(TestTargets.NQN, 1);
        FakeRequest prp = InJvmHost.flush(1);
        prp.sqe().flags(0x00);
        assertEquals(Status.dnr(Status.INVALID_FIELD), host.io(prp).status());
        // Fused: only Compare may be the first command (SPDK answers Invalid Opcode); FUSE 11b is reserved.
        FakeRequest fused = InJvmHost.flush(1);
        fused.sqe().flags(0x41);
        assertEquals(Status.dnr(Status.INVALID_OPCODE), host.io(fused).status());
        FakeRequest reserved = InJvmHost.flush(1);
        reserved.sqe().flags(0x43);
        assertEquals(Status.dnr(Status.INVALID_FIELD), host.io(reserved).status());
        FakeRequest fabricsPrp = new FakeRequest().expect(0);
        fabricsPrp.sqe().flags(0).opcode(0x7F).fctype(0x04).property(1, 0, 0);
        assertEquals(Status.dnr(Status.INVALID_FIELD), host.admin(fabricsPrp).status());
        // a transport status wins
        assertEquals(
                Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID),
                host.io(InJvmHost.flush(1).transportStatus(Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID)))
                        .status());
    }
}

package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Linux host's I/O controller bring-up, step by step (nvmeof-protocol.md §7.1), and the Identify pages it checks. */
class BringUpTest {
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    static String ascii(ByteBuffer b, int at, int len) {
        byte[] bytes = new byte[len];
        b.get(at, bytes);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    static String nqn(ByteBuffer b, int at) {
        int end = at;
        while (b.get(end) != 0) {
            end++;
        }
        return ascii(b, at, end - at);
    }

    @Test
    void linuxHostSequence() {
        // 3: admin Connect
        FakeRequest connect = host.connectAdmin(TestTargets.NQN, 5000);
        assertEquals(0, connect.status());
        int cntlid = connect.dw0() & 0xFFFF;
        assertTrue(cntlid >= 1 && cntlid <= 0xFFEF);
        assertEquals(0, connect.dw0() >>> 16, "AUTHREQ 0");
        assertEquals(0, connect.sqid());
        assertEquals(1, connect.sqhd(), "SQHD = (0 + 1) mod 32");
        assertEquals(0, host.admin.connectedQid);
        assertEquals(31, host.admin.connectedSqsize);

        // 4: CAP
        long cap = check(host.propertyGet(Properties.CAP, true)).result64();
        assertEquals(127, Properties.capMqes(cap));
        assertEquals(15, Properties.capTimeout(cap));
        assertEquals(0, Properties.capMpsmin(cap));
        assertTrue((cap & (1L << 37)) != 0, "CSS NVM");
        assertTrue((cap & (1L << 43)) != 0, "CSS I/O command sets, as nvmet");
        // 5-9: enable
        check(host.propertySet(Properties.CC, 0x00460000));
        assertEquals(0, check(host.propertyGet(Properties.CSTS, false)).dw0());
        // a command before ready: Command Sequence Error + DNR
        assertEquals(
                Status.dnr(Status.COMMAND_SEQUENCE_ERROR),
                host.admin(InJvmHost.identify(1, 0)).status());
        check(host.propertySet(Properties.CC, 0x00460001));
        assertEquals(
                Properties.CSTS_RDY,
                check(host.propertyGet(Properties.CSTS, false)).dw0());
        assertEquals(0x00460001, check(host.propertyGet(Properties.CC, false)).dw0());
        // 10: VS
        assertEquals(0x00010300, check(host.propertyGet(Properties.VS, false)).dw0());

        // 11: Identify Controller
        ByteBuffer id = check(host.admin(InJvmHost.identify(0x01, 0))).dataBuffer();
        assertEquals(4096, id.capacity());
        assertEquals(cntlid, id.getShort(78) & 0xFFFF, "CNTLID = Connect's");
        assertEquals("SN-TEST             ", ascii(id, 4, 20));
        assertEquals("test model", ascii(id, 24, 40).trim());
        assertEquals(0x0B, id.get(76), "CMIC: multi-port, multi-controller, ANA (as nvmet)");
        assertEquals(0x00010300, id.getInt(80), "VER");
        assertEquals(0x900, id.getInt(92), "OAES: namespace attribute and ANA change notices");
        assertEquals(1, id.get(111), "CNTRLTYPE I/O");
        assertEquals(3, id.get(259), "AERL");
        assertEquals(0x07, id.get(261), "LPA: per-namespace SMART, effects log, extended data");
        assertEquals(10, id.getShort(320), "KAS");
        assertEquals(0x66, id.get(512) & 0xFF);
        assertEquals(0x44, id.get(513) & 0xFF);
        assertEquals(128, id.getShort(514), "MAXCMD");
        assertEquals(1024, id.getInt(516), "NN");
        assertEquals(
                0x1BD,
                id.getShort(520),
                "ONCS: Compare, DSM, Write Zeroes, Save/Select, Reservations, Verify, Copy; no Timestamp");
        assertEquals(1, id.get(525), "VWC");
        assertEquals(0x00100001, id.getInt(536), "SGLS from the port");
        assertEquals(TestTargets.NQN, nqn(id, 768));
        assertEquals((64 + 16384) / 16, id.getInt(1792), "IOCCSZ");
        assertEquals(1, id.getInt(1796), "IORCSZ");
        assertEquals(0, id.getShort(1800), "ICDOFF");
        assertEquals(1, id.get(1803), "MSDBD");

        // 12: effects log (LPA bit 1)
        ByteBuffer effects =
                check(host.admin(InJvmHost.getLogPage(0x05, 0, 0, 4096, false))).dataBuffer();
        assertEquals(1, effects.getInt(4 * 0x06) & 1, "Identify supported");
        assertEquals(3, effects.getInt(1024 + 4 * 0x01), "Write: CSUPP + LBCC");
        // 15: SMART
        ByteBuffer smart = check(host.admin(InJvmHost.getLogPage(0x02, 0xFFFFFFFF, 0, 512, false)))
                .dataBuffer();
        assertEquals(512, smart.capacity());
        // 17: Number of Queues
        FakeRequest nq = check(host.admin(InJvmHost.setFeatures(0x07, 3 | (3 << 16))));
        assertEquals(3 | (3 << 16), nq.dw0());
        // 19: I/O Connects
        for (int q = 1; q <= 4; q++) {
            FakeRequest r = host.connectIo(q, 127);
            assertEquals(0, r.status(), r.toString());
            assertEquals(cntlid, r.dw0() & 0xFFFF);
            assertEquals(q, r.sqid());
            assertEquals(127, host.io.get(q).connectedSqsize);
        }
        // 20-21: AEN config, AER held
        check(host.admin(InJvmHost.setFeatures(0x0B, 0x100)));
        FakeRequest aer = host.admin.submit(aerWithCid31());
        // 22: CNS 0x06
        FakeRequest cns6 = host.admin(InJvmHost.identify(0x06, 0));
        assertEquals(0, cns6.status());
        // 23: active namespace list
        ByteBuffer list = check(host.admin(InJvmHost.identify(0x02, 0))).dataBuffer();
        assertEquals(1, list.getInt(0));
        assertEquals(2, list.getInt(4));
        assertEquals(3, list.getInt(8));
        assertEquals(0, list.getInt(12));
        ByteBuffer after1 = check(host.admin(InJvmHost.identify(0x02, 1))).dataBuffer();
        assertEquals(2, after1.getInt(0));
        // 24: descriptors
        ByteBuffer desc = check(host.admin(InJvmHost.identify(0x03, 1))).dataBuffer();
        assertEquals(0x02, desc.get(0));
        assertEquals(16, desc.get(1));
        assertEquals(0x03, desc.get(20));
        assertEquals(16, desc.get(21));
        assertEquals(0x04, desc.get(40));
        assertEquals(1, desc.get(41));
        // 25-26: Identify Namespace
        ByteBuffer ns1 = check(host.admin(InJvmHost.identify(0x00, 1))).dataBuffer();
        assertEquals((64L << 20) / 4096, ns1.getLong(0), "NSZE");
        assertEquals((64L << 20) / 4096, ns1.getLong(8), "NCAP");
        assertEquals(0, ns1.get(26), "FLBAS");
        assertEquals(12, (ns1.getInt(128) >>> 16) & 0xFF, "LBADS 4096");
        byte[] nguid1 = new byte[16];
        ns1.get(104, nguid1);
        byte[] uuidDesc = new byte[16];
        desc.get(4, uuidDesc);
        assertArrayEquals(nguid1, uuidDesc, "NGUID in Identify NS and in the descriptor list agree");
        ByteBuffer ns2 = check(host.admin(InJvmHost.identify(0x00, 2))).dataBuffer();
        assertEquals(9, (ns2.getInt(128) >>> 16) & 0xFF, "LBADS 512");
        assertEquals(2048, ns2.getLong(0));
        byte[] nguid2 = new byte[16];
        ns2.get(104, nguid2);
        assertFalse(java.util.Arrays.equals(nguid1, nguid2));
        ByteBuffer ns3 = check(host.admin(InJvmHost.identify(0x00, 3))).dataBuffer();
        assertEquals(1, ns3.get(99), "NSATTR write protected");
        // inactive NSID: zeroed page, success
        ByteBuffer inactive = check(host.admin(InJvmHost.identify(0x00, 77))).dataBuffer();
        assertEquals(0, inactive.getLong(8));
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                host.admin(InJvmHost.identify(0x00, 0xFFFFFFFF)).status());
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                host.admin(InJvmHost.identify(0x03, 77)).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.identify(0x1F, 0)).status());
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                host.admin(InJvmHost.identify(0x01, 0).dataLength(512)).status());
        // Keep Alive
        check(host.admin(InJvmHost.keepAlive()));
        // 27: a read of LBA 0
        FakeRequest read = check(host.io(InJvmHost.read(1, 0, 1, 4096)));
        assertArrayEquals(new byte[4096], read.received());
        assertFalse(aer.done.isDone(), "the AER is held");

        // nvmeof-protocol.md §7.3: I/O queues close, then shutdown handshake
        for (InJvmQueue q : host.io.values()) {
            q.close();
            assertTrue(q.awaitClosed(2000));
        }
        host.io.clear();
        int csts = host.shutdown();
        assertEquals(Properties.CSTS_SHST_COMPLETE, csts & Properties.CSTS_SHST_MASK);
        assertEquals(0, csts & Properties.CSTS_RDY);
        assertEquals(1, target.controllers().size());
        host.admin.close();
        assertTrue(host.admin.awaitClosed(2000));
        assertEquals(0, target.controllers().size(), "the controller is gone with its admin queue");
        assertNotEquals(0, cntlid);
    }

    private static FakeRequest aerWithCid31() {
        FakeRequest r = InJvmHost.asyncEventRequest();
        r.sqe().cid(31);
        return r;
    }

    @Test
    void sqhdWrapsAndFlowControlDisabledGivesFfff() {
        host.bringUp(TestTargets.NQN, 1);
        FakeRequest r = host.connectIo(2, 3, 0x04);
        assertEquals(0, r.status());
        assertEquals(0xFFFF, r.sqhd());
        assertTrue(host.io.get(2).connectedFlowControlDisabled);
        // queue 1: SQSIZE 127, the Connect took entry 0 → head 1; the next completions continue 2, 3, ...
        assertEquals(2, host.io(InJvmHost.flush(1)).sqhd());
        assertEquals(3, host.io(InJvmHost.flush(1)).sqhd());
        FakeRequest small = host.connectIo(3, 1);
        assertEquals(1, small.sqhd());
        assertEquals(0, host.io(3, InJvmHost.flush(1)).sqhd(), "(1 + 1) mod 2");
        assertEquals(1, host.io(3, InJvmHost.flush(1)).sqhd());
    }
}

package io.nvmeof.target.e2e;

import static io.nvmeof.target.e2e.RawTcpHost.expectOk;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Properties;
import io.nvmeof.target.e2e.RawTcpHost.Completion;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Linux host's bring-up sequence (nvmeof-protocol.md §7.1) over real NVMe/TCP on loopback: everything the Linux
 * host checks along the way (nvmeof-protocol.md §7.5) is checked here too, so a target that passes should not be refused by the kernel.
 */
@Timeout(60)
class TcpBringUpTest {
    private E2eTarget t;

    @BeforeEach
    void start() throws Exception {
        t = new E2eTarget();
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @ParameterizedTest(name = "digests={0}")
    @ValueSource(booleans = {false, true})
    void linuxStyleBringUpAndShutdown(boolean digests) throws Exception {
        try (RawTcpHost admin = RawTcpHost.connect(t.address, digests, digests)) {
            Completion connect = expectOk(admin.connectAdmin(E2eTarget.NQN), "admin Connect");
            int cntlid = connect.dw0() & 0xFFFF;
            assertTrue(cntlid >= 1 && cntlid <= 0xFFEF, "CNTLID in 1..0xFFEF: " + cntlid);
            assertEquals(0, connect.dw0() >>> 16, "no authentication requested (AUTHREQ)");

            long cap = admin.enable();
            assertEquals(0, Properties.capMpsmin(cap), "CAP.MPSMIN must be 0 for Linux");
            assertTrue(Properties.capTimeout(cap) > 0, "CAP.TO");
            assertTrue(Properties.capMqes(cap) >= 1, "CAP.MQES");
            assertEquals(1, (cap >>> 37) & 1, "CAP.CSS NVM");
            int vs = expectOk(admin.propertyGet(Properties.VS, false), "Get VS").dw0();
            assertTrue(vs >= 0x00010200, "VS " + Integer.toHexString(vs));

            ByteBuffer id = E2eTarget.le(admin.identifyController());
            assertEquals(cntlid, id.getShort(78) & 0xFFFF, "Identify CNTLID = Connect CNTLID (\"Mismatching cntlid\")");
            assertNotEquals(0, id.getShort(320), "KAS must be non-zero for an I/O controller");
            assertTrue(id.getInt(1792) >= 4, "IOCCSZ >= 4");
            assertTrue(id.getInt(1796) >= 1, "IORCSZ >= 1");
            assertEquals(0, id.getShort(1800), "ICDOFF must be 0");
            assertNotEquals(0, id.getInt(536) & 0x3, "SGLS bits 1:0 (TCP host requires SGL support)");
            assertEquals(0x66, id.get(512) & 0xFF, "SQES");
            assertEquals(0x44, id.get(513) & 0xFF, "CQES");
            assertTrue((id.getShort(514) & 0xFFFF) >= 1, "MAXCMD");
            assertTrue(id.getInt(516) >= 2, "NN covers namespace 2");
            assertEquals(1, id.get(111), "CNTRLTYPE I/O controller");
            assertEquals(E2eTarget.NQN, cString(id, 768, 256), "SUBNQN");

            byte[] ns = new byte[4096];
            expectOk(admin.identify(0, 1, ns), "Identify NS 1");
            ByteBuffer nsb = E2eTarget.le(ns);
            assertEquals(E2eTarget.NS1_BYTES / 4096, nsb.getLong(0), "NSZE");
            assertEquals(E2eTarget.NS1_BYTES / 4096, nsb.getLong(8), "NCAP");
            int flbas = nsb.get(26) & 0xF;
            assertEquals(12, (nsb.getInt(128 + 4 * flbas) >>> 16) & 0xFF, "LBADS of ns 1");
            assertEquals(0, nsb.getInt(128 + 4 * flbas) & 0xFFFF, "no metadata");
            expectOk(admin.identify(0, 2, ns), "Identify NS 2");
            nsb = E2eTarget.le(ns);
            assertEquals(E2eTarget.NS2_BYTES / 512, nsb.getLong(0), "NSZE of ns 2");
            assertEquals(9, (nsb.getInt(128 + 4 * (nsb.get(26) & 0xF)) >>> 16) & 0xFF, "LBADS of ns 2");

            byte[] list = new byte[4096];
            expectOk(admin.identify(2, 0, list), "Identify active NS list");
            ByteBuffer lb = E2eTarget.le(list);
            assertEquals(1, lb.getInt(0));
            assertEquals(2, lb.getInt(4));
            assertEquals(0, lb.getInt(8));
            expectOk(admin.identify(3, 1, list), "Identify NS descriptors (VS >= 1.3 hosts skip the ns if this fails)");

            Completion q = expectOk(admin.setNumberOfQueues(2), "Set Features Number of Queues");
            assertTrue(
                    (q.dw0() & 0xFFFF) >= 1 && (q.dw0() >>> 16) >= 1,
                    "at least 2 SQs and CQs granted: " + Integer.toHexString(q.dw0()));
            expectOk(admin.keepAlive(), "Keep Alive");

            try (RawTcpHost io = t.io(admin, 1, digests)) {
                assertEquals(1, t.target.controllers().size());
                assertEquals(1, t.target.controllers().get(0).ioQueueCount());
                assertEquals(
                        RawTcpHost.DEFAULT_HOST_NQN,
                        t.target.controllers().get(0).hostNqn());
                byte[] block = new byte[4096];
                expectOk(io.read(1, 0, 4096, block), "read of a never-written block");
                assertTrue(isZero(block), "unwritten blocks read as zeros");
            }
            admin.shutdown();
        }
        t.awaitNoControllers(10_000);
        t.assertNoErrorsLogged();
    }

    static String cString(ByteBuffer b, int offset, int max) {
        int n = 0;
        while (n < max && b.get(offset + n) != 0) {
            n++;
        }
        byte[] s = new byte[n];
        b.get(offset, s);
        return new String(s, StandardCharsets.UTF_8);
    }

    static boolean isZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }
}

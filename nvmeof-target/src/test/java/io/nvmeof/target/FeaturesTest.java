package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The mandatory features (NVMe Base 2.0c §5.27.1) answered as SPDK answers them, Get Features SEL, Set Features SV,
 * Host Identifier over fabrics, KATO as an unsigned field, and CC.CSS at enable.
 */
class FeaturesTest {
    private static final int SV = 0x80000000;

    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    private int set(int fid, int value) {
        return host.admin(InJvmHost.setFeatures(fid, value)).status();
    }

    private int get(int fid, int sel) {
        return check(host.admin(InJvmHost.getFeatures(fid, sel))).dw0();
    }

    private int getStatus(int fid, int sel, int cdw11) {
        FakeRequest r = InJvmHost.getFeatures(fid, sel);
        r.sqe().cdw(11, cdw11);
        return host.admin(r).status();
    }

    private int getTemperature(int sel, int tmpsel, int thsel) {
        FakeRequest r = InJvmHost.getFeatures(0x04, sel);
        r.sqe().cdw(11, (tmpsel << 16) | (thsel << 20));
        return check(host.admin(r)).dw0();
    }

    @Test
    void mandatoryFeaturesSetAndGetLikeSpdk() {
        host.bringUp(TestTargets.NQN, 1);
        // 01h Arbitration: stored, reserved bits 7:3 dropped.
        assertEquals(0, set(0x01, 0x0302_01FB));
        assertEquals(0x0302_0103, get(0x01, 0));
        // 02h Power Management: NPSS = 0, so PS must be 0; WH is kept.
        assertEquals(Status.dnr(Status.INVALID_FIELD), set(0x02, 1));
        assertEquals(0, set(0x02, 0x20));
        assertEquals(0x20, get(0x02, 0));
        // 04h Temperature Threshold, per TMPSEL (0 composite, 1–8, 15 all) and THSEL (0 over, 1 under).
        assertEquals(FeatureValues.OVER_TEMPERATURE_DEFAULT, getTemperature(0, 0, 0) & 0xFFFF);
        assertEquals(0, set(0x04, 350));
        assertEquals(350, getTemperature(0, 0, 0) & 0xFFFF);
        assertEquals(0, set(0x04, 260 | (1 << 20) | (0xF << 16)));
        assertEquals(260, getTemperature(0, 5, 1) & 0xFFFF, "TMPSEL 15 set every sensor's under threshold");
        assertEquals(0, getTemperature(1, 5, 1) & 0xFFFF, "SEL 001b: the default");
        assertEquals(Status.dnr(Status.INVALID_FIELD), set(0x04, 300 | (9 << 16)), "TMPSEL 9–14 reserved");
        assertEquals(Status.dnr(Status.INVALID_FIELD), set(0x04, 300 | (2 << 20)), "THSEL 2 reserved");
        assertEquals(Status.dnr(Status.INVALID_FIELD), getStatus(0x04, 0, 0xF << 16), "a Get names one sensor");
        // 05h Error Recovery: TLER kept; DULBE is not supported.
        assertEquals(Status.dnr(Status.INVALID_FIELD), set(0x05, 1 << 16));
        assertEquals(0, set(0x05, 77));
        assertEquals(77, get(0x05, 0));
        // 0Ah Write Atomicity Normal.
        assertEquals(0, set(0x0A, 1));
        assertEquals(1, get(0x0A, 0));
        // 08h and 09h are PCIe only: Invalid Field over fabrics, as nvmet.
        assertEquals(Status.dnr(Status.INVALID_FIELD), set(0x08, 0));
        assertEquals(Status.dnr(Status.INVALID_FIELD), getStatus(0x08, 0, 0));
        assertEquals(Status.dnr(Status.INVALID_FIELD), getStatus(0x09, 0, 0));
    }

    @Test
    void selectAndSave() {
        host.bringUp(TestTargets.NQN, 1);
        assertEquals(0, set(0x0A, 1));
        assertEquals(1, get(0x0A, 0), "SEL 000b: current");
        assertEquals(0, get(0x0A, 1), "SEL 001b: default");
        assertEquals(0, get(0x0A, 2), "SEL 010b: saved, which is the default (nothing is saveable)");
        for (int fid : new int[] {0x01, 0x02, 0x04, 0x05, 0x06, 0x07, 0x0A, 0x0B, 0x0F}) {
            assertEquals(4, get(fid, 3), "SEL 011b: changeable, not saveable, not per namespace: FID " + fid);
            assertEquals(Status.dnr(Status.FEATURE_NOT_SAVEABLE), set(fid | SV, 0), "SV: not saveable, FID " + fid);
        }
        assertEquals(0, get(0x81, 3) & 0x4, "Host Identifier is not changeable over fabrics");
        assertEquals(Status.dnr(Status.INVALID_FIELD), getStatus(0x0A, 4, 0), "SEL 100b reserved");
    }

    @Test
    void ioCommandSetProfile() {
        check(host.connectAdmin(TestTargets.NQN, 5000));
        host.enable();
        assertEquals(0, set(0x19, 0), "combination 0: NVM");
        assertEquals(Status.dnr(Status.IO_COMMAND_SET_COMBINATION_REJECTED), set(0x19, 1));
        assertEquals(0, get(0x19, 0));
        check(host.connectIo(1, 127));
        assertEquals(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), set(0x19, 0), "not while I/O queues exist");
    }

    @Test
    void hostIdentifierFromConnect() {
        host.bringUp(TestTargets.NQN, 1);
        FakeRequest r = new FakeRequest().expect(16);
        r.sqe().opcode(0x0A).cdw(10, 0x81).cdw(11, 1);
        check(host.admin(r));
        ByteBuffer id = ByteBuffer.wrap(r.received());
        assertEquals(InJvmHost.HOST_ID.getMostSignificantBits(), id.getLong(0));
        assertEquals(InJvmHost.HOST_ID.getLeastSignificantBits(), id.getLong(8));
        FakeRequest noExhid = new FakeRequest().expect(16);
        noExhid.sqe().opcode(0x0A).cdw(10, 0x81);
        assertEquals(Status.dnr(Status.INVALID_FIELD), host.admin(noExhid).status(), "EXHID 0: 64-bit is not ours");
        FakeRequest shortBuffer = new FakeRequest().expect(8);
        shortBuffer.sqe().opcode(0x0A).cdw(10, 0x81).cdw(11, 1);
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                host.admin(shortBuffer).status());
        assertEquals(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), set(0x81, 1), "Set over fabrics, as nvmet");
    }

    @Test
    void keepAliveTimeoutOf2To31MillisecondsAndMoreIsLongNotOff() {
        // Connect with KATO 0x80000000 ms: a long timeout, rounded up to whole seconds, not a negative one.
        check(host.connectAdmin(TestTargets.NQN, 0x8000_0000));
        Controller ctrl = target.subsystem(TestTargets.NQN).controllers().get(0);
        assertEquals(2_147_484_000L, ctrl.katoMillis());
        host.enable();
        check(host.admin(InJvmHost.keepAlive())); // KATO 0 would answer Keep Alive Timeout Invalid
        // Set Features KATO 0xFFFFFFFF ms.
        assertEquals(0, set(0x0F, 0xFFFF_FFFF));
        assertEquals(4_294_968_000L, ctrl.katoMillis());
        assertEquals(0xFFFF_FFFF, get(0x0F, 0), "reads back as the most the field can say");
        assertEquals(0, set(0x0F, 0x8000_0001));
        assertEquals(2_147_484_000L, ctrl.katoMillis());
        assertEquals((int) 2_147_484_000L, get(0x0F, 0));
        check(host.admin(InJvmHost.keepAlive()));
        assertTrue(!ctrl.isClosed());
    }

    @Test
    void ccCssNvmAndIoCommandSetsEnableAndAdminOnlyFails() {
        for (int css : new int[] {0, 6, 7}) {
            InJvmHost h = new InJvmHost(target);
            try {
                check(h.connectAdmin(TestTargets.NQN, 5000));
                long cap = check(h.propertyGet(Properties.CAP, true)).result64();
                assertTrue((cap & Properties.CAP_CSS_NVM) != 0 && (cap & Properties.CAP_CSS_IO_COMMAND_SETS) != 0);
                check(h.propertySet(Properties.CC, 0x00460000 | (css << 4)));
                check(h.propertySet(Properties.CC, 0x00460001 | (css << 4)));
                int csts = check(h.propertyGet(Properties.CSTS, false)).dw0();
                if (css == 7) {
                    assertEquals(Properties.CSTS_CFS, csts & (Properties.CSTS_CFS | Properties.CSTS_RDY));
                } else {
                    assertEquals(Properties.CSTS_RDY, csts, "CC.CSS " + css);
                    check(h.admin(InJvmHost.identify(1, 0)));
                }
            } finally {
                h.close();
            }
        }
    }

    @Test
    void getFeaturesOfAnIdentifierNobodyDefinesIsInvalidField() {
        // Was Internal Error (a NullPointerException in FeatureValues.handles), found by conformance/'s harness.
        host.bringUp(TestTargets.NQN, 1);
        for (int fid : new int[] {0x00, 0x0c, 0x57, 0xbf, 0xff}) {
            assertEquals(Status.dnr(Status.INVALID_FIELD), getStatus(fid, 0, 0), "FID " + Integer.toHexString(fid));
        }
    }
}

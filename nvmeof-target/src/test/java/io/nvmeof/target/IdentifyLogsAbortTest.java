package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Identify CNS 05h–08h and 1Ch, log pages 00h/03h/05h with offsets, and Abort of an AER. */
class IdentifyLogsAbortTest {
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    private FakeRequest identify(int cns, int nsid, int csi) {
        FakeRequest r = InJvmHost.identify(cns, nsid);
        r.sqe().cdw(11, csi << 24);
        return host.admin(r);
    }

    @Test
    void ioCommandSetIdentify() {
        host.bringUp(TestTargets.NQN, 1);
        // 05h: NVM-specific namespace, all zero (no PI, no storage tag); inactive but valid NSIDs read zero too.
        ByteBuffer nvmNs = check(identify(0x05, 1, 0)).dataBuffer();
        assertEquals(0, nvmNs.getLong(0));
        check(identify(0x05, 77, 0));
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                identify(0x05, 0xFFFFFFFF, 0).status());
        assertEquals(Status.dnr(Status.INVALID_FIELD), identify(0x05, 1, 2).status(), "CSI 2 (ZNS) not here");
        // 06h: NVM-specific controller, zero limits ("no limit").
        check(identify(0x06, 0, 0));
        assertEquals(Status.dnr(Status.INVALID_FIELD), identify(0x06, 0, 1).status());
        // 07h: the active NSIDs of CSI 0, as 02h.
        ByteBuffer list = check(identify(0x07, 0, 0)).dataBuffer();
        assertEquals(1, list.getInt(0));
        assertEquals(2, list.getInt(4));
        assertEquals(3, list.getInt(8));
        assertEquals(Status.dnr(Status.INVALID_FIELD), identify(0x07, 0, 2).status());
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                identify(0x07, 0xFFFFFFFE, 0).status());
        // 08h: command set independent namespace: NMIC, NSATTR (namespace 3 is read-only), NSTAT ready.
        ByteBuffer indep = check(identify(0x08, 3, 0)).dataBuffer();
        assertEquals(1, indep.get(1));
        assertEquals(1, indep.get(8));
        assertEquals(1, indep.get(14));
        assertEquals(0, check(identify(0x08, 500, 0)).dataBuffer().get(14), "inactive: zero");
        // 1Ch: combination 0 = NVM.
        assertEquals(1L, check(identify(0x1C, 0, 0)).dataBuffer().getLong(0));
        // Unknown CNS: Invalid Field.
        assertEquals(Status.dnr(Status.INVALID_FIELD), identify(0x10, 0, 0).status());
    }

    @Test
    void firmwareSupportedAndEffectsLogs() {
        host.bringUp(TestTargets.NQN, 1);
        ByteBuffer fw =
                check(host.admin(InJvmHost.getLogPage(0x03, 0, 0, 512, false))).dataBuffer();
        assertEquals(1, fw.get(0) & 0x7, "AFI: slot 1 active");
        assertEquals(ControllerProfile.FIRMWARE_REVISION.charAt(0), (char) fw.get(8), "FRS1 = FR");
        // The same page from offset 8 (LPOL), 64 bytes (NUMD 15).
        ByteBuffer part =
                check(host.admin(InJvmHost.getLogPage(0x03, 0, 8, 64, false))).dataBuffer();
        assertEquals(ControllerProfile.FIRMWARE_REVISION.charAt(0), (char) part.get(0));
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.getLogPage(0x03, 0, 1024, 64, false)).status(),
                "offset beyond the page");
        ByteBuffer id = check(host.admin(InJvmHost.identify(1, 0))).dataBuffer();
        assertEquals(SupportLogPages.FRMW, id.get(260), "FRMW: one read-only slot");
        ByteBuffer supported =
                check(host.admin(InJvmHost.getLogPage(0x00, 0, 0, 1024, false))).dataBuffer();
        for (int lid : new int[] {0x00, 0x01, 0x02, 0x03, 0x04, 0x05}) {
            assertEquals(1, supported.getInt(4 * lid) & 1, "LID " + lid);
        }
        assertEquals(0, supported.getInt(4 * 0x70), "no discovery log on an I/O controller");
        ByteBuffer effects =
                check(host.admin(InJvmHost.getLogPage(0x05, 0, 0, 4096, false))).dataBuffer();
        for (int op : new int[] {0x00, 0x01, 0x02, 0x05, 0x08, 0x09, 0x0C, 0x19}) {
            assertEquals(1, effects.getInt(1024 + 4 * op) & 1, "I/O opcode " + op + " CSUPP");
        }
        assertEquals(2, effects.getInt(1024 + 4 * 0x19) & 2, "Copy changes blocks (LBCC)");
        FakeRequest zns = InJvmHost.getLogPage(0x05, 0, 0, 4096, false);
        zns.sqe().cdw(14, 2 << 24);
        assertEquals(Status.dnr(Status.INVALID_LOG_PAGE), host.admin(zns).status(), "CSI 2: not here");
        for (int op : new int[] {0x02, 0x06, 0x08, 0x09, 0x0A, 0x0C, 0x18}) {
            assertEquals(1, effects.getInt(4 * op) & 1, "admin opcode " + op + " CSUPP");
        }
    }

    @Test
    void abortCompletesAnOutstandingAer() {
        host.bringUp(TestTargets.NQN, 1);
        FakeRequest aer = InJvmHost.asyncEventRequest();
        aer.sqe().cid(77);
        host.admin.submit(aer);
        FakeRequest abort = new FakeRequest().expect(0);
        abort.sqe().opcode(0x08).cdw(10, 77 << 16); // SQID 0, CID 77
        assertEquals(0, check(host.admin(abort)).dw0() & 1, "aborted");
        assertEquals(Status.ABORT_REQUESTED, aer.done.join().status());
        // Again: nothing with that CID any more; an I/O command cannot be aborted either.
        FakeRequest again = new FakeRequest().expect(0);
        again.sqe().opcode(0x08).cdw(10, 77 << 16);
        assertEquals(1, check(host.admin(again)).dw0() & 1, "not aborted");
        FakeRequest io = new FakeRequest().expect(0);
        io.sqe().opcode(0x08).cdw(10, 1 | (5 << 16));
        assertEquals(1, check(host.admin(io)).dw0() & 1);
        assertTrue(target.subsystem(TestTargets.NQN).controllers().get(0).heldAerCount() == 0);
    }
}

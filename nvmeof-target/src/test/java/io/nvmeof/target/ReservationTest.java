package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Reservations at the command level (NVMe Base 2.0 §8.19): the statuses of malformed reservation commands, the
 * reservation asynchronous event, and Preempt and Abort of a write whose data was still on its way. The initiator's
 * ReservationsTest covers the access matrix end to end.
 */
class ReservationTest {
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost a = new InJvmHost(target);
    private final InJvmHost b = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        a.close();
        b.close();
        target.close();
    }

    private void bringUpBoth() {
        b.hostId = UUID.fromString("99999999-9999-9999-9999-999999999999");
        a.bringUp(TestTargets.NQN, 1);
        b.bringUp(TestTargets.NQN, 1);
    }

    static FakeRequest register(int cdw10, long crkey, long nrkey) {
        return keys(0x0D, cdw10, crkey, nrkey);
    }

    static FakeRequest acquire(int cdw10, long crkey, long prkey) {
        return keys(0x11, cdw10, crkey, prkey);
    }

    static FakeRequest keys(int opcode, int cdw10, long first, long second) {
        ByteBuffer d = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        d.putLong(0, first).putLong(8, second);
        FakeRequest r = new FakeRequest().send(d.array());
        r.sqe().opcode(opcode).nsid(1).cdw(10, cdw10);
        return r;
    }

    static FakeRequest report(int bytes, boolean eds) {
        FakeRequest r = new FakeRequest().expect(bytes);
        r.sqe().opcode(0x0E).nsid(1).cdw(10, bytes / 4 - 1).cdw(11, eds ? 1 : 0);
        return r;
    }

    static int dnr(int status) {
        return Status.dnr(status);
    }

    @Test
    void malformedCommands() {
        a.bringUp(TestTargets.NQN, 1);
        assertEquals(dnr(Status.INVALID_FIELD), a.io(register(3, 0, 1)).status(), "RREGA 3 reserved");
        assertEquals(dnr(Status.INVALID_FIELD), a.io(register(3 << 30, 0, 1)).status(), "CPTPL 11b: no PTPL");
        assertEquals(dnr(Status.INVALID_FIELD), a.io(register(1 << 30, 0, 1)).status(), "CPTPL 01b reserved");
        check(a.io(register(2 << 30, 0, 1))); // CPTPL 10b: clear, already clear
        assertEquals(
                dnr(Status.INVALID_FIELD), a.io(acquire(1 << 8 | 1 << 3, 1, 0)).status(), "Acquire IEKEY");
        assertEquals(dnr(Status.INVALID_FIELD), a.io(acquire(7 << 8, 1, 0)).status(), "RTYPE 7");
        assertEquals(dnr(Status.INVALID_FIELD), a.io(acquire(0, 1, 0)).status(), "RTYPE 0");
        assertEquals(dnr(Status.INVALID_FIELD), a.io(acquire(1 << 8 | 3, 1, 0)).status(), "RACQA 3");
        assertEquals(
                dnr(Status.HOST_IDENTIFIER_INCONSISTENT_FORMAT),
                a.io(report(4096, false)).status(),
                "EDS 0");
        assertEquals(dnr(Status.INVALID_FIELD), a.io(report(32, true)).status(), "under 64 bytes");
        FakeRequest short8 = keys(0x0D, 0, 1, 2).dataLength(8);
        assertEquals(dnr(Status.DATA_SGL_LENGTH_INVALID), a.io(short8).status(), "Register carries 16 bytes");
        FakeRequest rep = check(a.io(report(128, true)));
        ByteBuffer page = ByteBuffer.wrap(rep.received()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, page.getShort(5), "REGCTL");
        assertEquals(1, page.getLong(64 + 8), "RKEY");
        assertEquals(
                InJvmHost.HOST_ID.getMostSignificantBits(),
                page.order(ByteOrder.BIG_ENDIAN).getLong(64 + 16));
        // Reservation Persistence: Invalid Field for Get and Set, as nvmet.
        assertEquals(
                dnr(Status.INVALID_FIELD),
                a.admin(InJvmHost.getFeatures(0x83, 0)).status());
        // Notification Mask: Get on a missing namespace.
        FakeRequest get = InJvmHost.getFeatures(0x82, 0);
        get.sqe().nsid(77);
        assertEquals(dnr(Status.INVALID_NAMESPACE), a.admin(get).status());
    }

    @Test
    void noticeRaisesTheReservationEvent() throws Exception {
        bringUpBoth();
        check(b.admin(InJvmHost.setFeatures(0x0B, 0x100)));
        FakeRequest aer = b.admin.submit(InJvmHost.asyncEventRequest());
        check(a.io(register(0, 0, 0xA)));
        check(b.io(register(0, 0, 0xB)));
        check(a.io(acquire(1 << 8, 0xA, 0))); // Write Exclusive
        check(a.io(acquire(1 << 8 | 1, 0xA, 0xB))); // preempt B's registration
        for (int i = 0; i < 200 && aer.completions() == 0; i++) {
            Thread.sleep(10);
        }
        assertEquals(0, aer.status());
        assertEquals(AsyncEvents.EVENT_RESERVATION_LOG, aer.dw0(), "type 6, info 0, log 80h");
        FakeRequest log = check(b.admin(InJvmHost.getLogPage(0x80, 0, 0, 64, false)));
        ByteBuffer page = ByteBuffer.wrap(log.received()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, page.get(8), "Registration Preempted");
        assertEquals(1, page.getInt(12));
        // Masked notices are not logged (Set Features 82h, bit 1: Registration Preempted); bit 4 is reserved.
        FakeRequest mask = InJvmHost.setFeatures(0x82, 1 << 1);
        mask.sqe().nsid(0xFFFFFFFF);
        check(b.admin(mask));
        FakeRequest getMask = InJvmHost.getFeatures(0x82, 0);
        getMask.sqe().nsid(1);
        assertEquals(1 << 1, check(b.admin(getMask)).dw0());
        FakeRequest reserved = InJvmHost.setFeatures(0x82, 1 << 4);
        reserved.sqe().nsid(1);
        assertEquals(dnr(Status.INVALID_FIELD), b.admin(reserved).status());
        check(b.io(register(0, 0, 0xB)));
        check(a.io(acquire(1 << 8 | 1, 0xA, 0xB)));
        FakeRequest none = check(b.admin(InJvmHost.getLogPage(0x80, 0, 0, 64, false)));
        assertEquals(
                0,
                ByteBuffer.wrap(none.received()).order(ByteOrder.LITTLE_ENDIAN).getLong(0),
                "masked");
        // B is no longer registered: its write conflicts.
        assertEquals(
                dnr(Status.RESERVATION_CONFLICT),
                b.io(InJvmHost.write(1, 0, new byte[4096], 4096)).status());
    }

    @Test
    void preemptAndAbortAbortsAWriteWhoseDataIsStillComing() throws Exception {
        bringUpBoth();
        check(a.io(register(0, 0, 0xA)));
        check(b.io(register(0, 0, 0xB)));
        check(b.io(acquire(3 << 8, 0xB, 0))); // B holds Write Exclusive - Registrants Only
        HeldWrite w = new HeldWrite();
        w.send(new byte[4096], false);
        w.sqe().opcode(0x01).nsid(1).slba(0).nlb(0);
        b.io.get(1).submit(w);
        for (int i = 0; i < 200 && w.receiver == null; i++) {
            Thread.sleep(10);
        }
        assertTrue(w.receiver != null, "the write waits for its data");
        check(a.io(acquire(1 << 8 | 2, 0xA, 0xB))); // A preempts and aborts B: Write Exclusive
        b.io.get(1).execute(() -> w.receiver.onData(w, 0));
        for (int i = 0; i < 200 && w.completions() == 0; i++) {
            Thread.sleep(10);
        }
        assertEquals(Status.ABORTED_PREEMPT_AND_ABORT, w.status());
    }

    /** A write whose data the test delivers itself. */
    static final class HeldWrite extends FakeRequest {
        volatile DataReceiver receiver;

        @Override
        protected void transferData(DataReceiver r) {
            receiver = r;
        }
    }
}

package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.nio.ByteBuffer;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Reservations (NVMe Base 2.0 §8.19) end to end: our initiator against our target over the in-JVM loop transport,
 * with three hosts of different Host IDs (one controller each), a second controller of host A (same Host ID), and a
 * host whose Host ID is zero.
 */
class ReservationsTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().transport("loop").namespace("1M").build();

    static final UUID ID_A = UUID.fromString("aaaaaaaa-0000-4000-8000-000000000001");
    static final UUID ID_B = UUID.fromString("bbbbbbbb-0000-4000-8000-000000000002");
    static final UUID ID_C = UUID.fromString("cccccccc-0000-4000-8000-000000000003");

    Controller a;
    Controller a2;
    Controller b;
    Controller c;
    Namespace nsA;
    Namespace nsA2;
    Namespace nsB;
    Namespace nsC;

    static Controller connect(String nqn, UUID id) throws NvmeException {
        ConnectOptions o =
                ConnectOptions.builder().hostIdentity(new HostIdentity(nqn, id)).build();
        return Nvme.connect(NvmeUri.parse(target.uri("queues=1")), o);
    }

    @BeforeEach
    void connectAll() throws Exception {
        a = connect("nqn.2014-08.org.nvmexpress:uuid:" + ID_A, ID_A);
        a2 = connect("nqn.2024-01.io.nvmeof:host-a-second-nqn", ID_A); // same Host ID: the same host
        b = connect("nqn.2014-08.org.nvmexpress:uuid:" + ID_B, ID_B);
        c = connect("nqn.2014-08.org.nvmexpress:uuid:" + ID_C, ID_C);
        nsA = a.namespace(1);
        nsA2 = a2.namespace(1);
        nsB = b.namespace(1);
        nsC = c.namespace(1);
    }

    @AfterEach
    void clearAndClose() throws Exception {
        // Registrations outlive controllers: leave the namespace clean for the next test.
        Reservations r = nsA.reservations();
        try {
            r.register(99);
        } catch (ReservationConflictException e) {
            r.replace(0, 99, true); // registered with another key
        }
        r.clear(99);
        drainNotices(a);
        drainNotices(b);
        drainNotices(c);
        for (Controller x : new Controller[] {a, a2, b, c}) {
            x.close();
        }
    }

    static ByteBuffer block() {
        return ByteBuffer.allocateDirect(4096);
    }

    /** Read and write by one namespace handle: "rw", "r-", "-w" or "--" for what succeeded. */
    static String access(Namespace ns) throws NvmeException {
        String s = "";
        try {
            ns.read(0, 1, block());
            s += "r";
        } catch (ReservationConflictException e) {
            assertTrue(e.dnr(), "Reservation Conflict carries DNR, as nvmet");
            s += "-";
        }
        try {
            ns.write(0, 1, block());
            s += "w";
        } catch (ReservationConflictException e) {
            s += "-";
        }
        return s;
    }

    @Test
    void identifyAdvertisesReservations() throws Exception {
        ByteBuffer ctrl = a.identifyControllerPage().order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x20, ctrl.getShort(520) & 0x20, "ONCS bit 5");
        assertEquals(1, ctrl.getInt(96) & 1, "CTRATT bit 0: 128-bit Host Identifier");
        ByteBuffer ns = a.commands().identify(0x00, 1);
        assertEquals(0xFE, ns.get(31) & 0xFF, "RESCAP: six types and IEKEY, no PTPL");
    }

    @Test
    void registerUnregisterReplaceAndReport() throws Exception {
        Reservations ra = nsA.reservations();
        ReservationStatus empty = ra.report();
        assertNull(empty.type());
        assertEquals(0, empty.registrantCount());
        ra.register(0x1111);
        ra.register(0x1111); // same key again: success
        assertThrows(ReservationConflictException.class, () -> ra.register(0x2222));
        // A's second controller is the same host: already registered.
        assertThrows(
                ReservationConflictException.class, () -> nsA2.reservations().register(0x3333));
        nsB.reservations().register(0xBBBB);
        ReservationStatus s = nsB.reservations().report();
        assertEquals(2, s.registrantCount());
        assertEquals(0x1111, s.registrant(ID_A).key());
        assertEquals(0xBBBB, s.registrant(ID_B).key());
        assertEquals(0xFFFF, s.registrant(ID_A).cntlid());
        assertFalse(s.persistThroughPowerLoss());
        int gen = s.generation();
        assertThrows(ReservationConflictException.class, () -> ra.replace(0x9999, 0x1212, false));
        ra.replace(0x1111, 0x1212, false);
        ra.replace(0xDEAD, 0x1313, true); // IEKEY ignores the current key
        assertEquals(0x1313, ra.report().registrant(ID_A).key());
        assertTrue(ra.report().generation() > gen, "generation counts registrations");
        assertThrows(ReservationConflictException.class, () -> ra.unregister(0x1111, false));
        nsA2.reservations().unregister(0x1313, false); // the other controller of the same host
        assertNull(ra.report().registrant(ID_A));
        nsB.reservations().unregister(0, true);
        assertEquals(0, ra.report().registrantCount());
        // Replace does not register an unregistered host, even with IEKEY (as nvmet).
        assertThrows(ReservationConflictException.class, () -> ra.replace(0, 1, true));
        // Report is truncated to the buffer but REGCTL counts everyone.
        ra.register(1);
        nsB.reservations().register(2);
        ReservationStatus small = ra.report(64);
        assertEquals(2, small.registrantCount());
        assertEquals(0, small.registrants().size());
    }

    @Test
    void acquireAndReleaseEveryType() throws Exception {
        nsA.reservations().register(0xA);
        nsB.reservations().register(0xB);
        // holder A (and A2, same host), registrant B, non-registrant C.
        String[][] expected = {
            // type, holder, registrant, non-registrant
            {"WRITE_EXCLUSIVE", "rw", "r-", "r-"},
            {"EXCLUSIVE_ACCESS", "rw", "--", "--"},
            {"WRITE_EXCLUSIVE_REGISTRANTS_ONLY", "rw", "rw", "r-"},
            {"EXCLUSIVE_ACCESS_REGISTRANTS_ONLY", "rw", "rw", "--"},
            {"WRITE_EXCLUSIVE_ALL_REGISTRANTS", "rw", "rw", "r-"},
            {"EXCLUSIVE_ACCESS_ALL_REGISTRANTS", "rw", "rw", "--"},
        };
        for (String[] row : expected) {
            ReservationType t = ReservationType.valueOf(row[0]);
            nsA.reservations().acquire(t, 0xA);
            nsA.reservations().acquire(t, 0xA); // again, same type: success
            ReservationStatus s = nsC.reservations().report();
            assertEquals(t, s.type());
            assertTrue(s.registrant(ID_A).holdsReservation());
            boolean allRegistrants = t.code() >= 5;
            assertEquals(allRegistrants, s.registrant(ID_B).holdsReservation(), t + ": B holds it too");
            assertEquals(row[1], access(nsA), t + " holder");
            assertEquals(row[1], access(nsA2), t + " holder's second controller");
            assertEquals(row[2], access(nsB), t + " registrant");
            assertEquals(row[3], access(nsC), t + " non-registrant");
            if (!allRegistrants) {
                assertThrows(
                        ReservationConflictException.class,
                        () -> nsB.reservations().acquire(t, 0xB));
            }
            // A different type from the holder: conflict. Release with the wrong type: Invalid Field.
            ReservationType other = t == ReservationType.WRITE_EXCLUSIVE
                    ? ReservationType.EXCLUSIVE_ACCESS
                    : ReservationType.WRITE_EXCLUSIVE;
            assertThrows(
                    ReservationConflictException.class, () -> nsA.reservations().acquire(other, 0xA));
            NvmeStatusException wrongType = assertThrows(
                    NvmeStatusException.class, () -> nsA.reservations().release(other, 0xA));
            assertTrue(Status.is(wrongType.status(), Status.INVALID_FIELD), wrongType.getMessage());
            assertThrows(
                    ReservationConflictException.class, () -> nsA.reservations().release(t, 0xBAD));
            nsA.reservations().release(t, 0xA);
            assertNull(nsC.reservations().report().type());
            assertEquals("rw", access(nsC));
        }
        // Unregistered hosts cannot acquire.
        assertThrows(
                ReservationConflictException.class,
                () -> nsC.reservations().acquire(ReservationType.WRITE_EXCLUSIVE, 0));
    }

    @Test
    void preemptTakesTheReservationAndUnregistersThePreempted() throws Exception {
        nsA.reservations().register(0xA);
        nsB.reservations().register(0xB);
        nsA.reservations().acquire(ReservationType.EXCLUSIVE_ACCESS, 0xA);
        nsB.reservations().preempt(ReservationType.WRITE_EXCLUSIVE, 0xB, 0xA);
        ReservationStatus s = nsC.reservations().report();
        assertEquals(ReservationType.WRITE_EXCLUSIVE, s.type());
        assertNull(s.registrant(ID_A), "A's registration was preempted");
        assertTrue(s.registrant(ID_B).holdsReservation());
        assertEquals("r-", access(nsA));
        assertNotice(a, 1, 1); // Registration Preempted, to both controllers of host A
        assertNotice(a2, 1, 1);
        // PRKEY that nobody has: conflict. PRKEY 0 on a single-holder reservation: Invalid Field.
        assertThrows(
                ReservationConflictException.class,
                () -> nsB.reservations().preempt(ReservationType.WRITE_EXCLUSIVE, 0xB, 0x777));
        NvmeStatusException zero = assertThrows(
                NvmeStatusException.class, () -> nsB.reservations().preempt(ReservationType.WRITE_EXCLUSIVE, 0xB, 0));
        assertTrue(Status.is(zero.status(), Status.INVALID_FIELD));
        // Preempt and abort of an All Registrants reservation with PRKEY 0: the caller takes it alone.
        nsA.reservations().register(0xA);
        nsB.reservations().release(ReservationType.WRITE_EXCLUSIVE, 0xB);
        nsA.reservations().acquire(ReservationType.EXCLUSIVE_ACCESS_ALL_REGISTRANTS, 0xA);
        nsB.reservations().preemptAndAbort(ReservationType.EXCLUSIVE_ACCESS, 0xB, 0);
        s = nsB.reservations().report();
        assertEquals(ReservationType.EXCLUSIVE_ACCESS, s.type());
        assertEquals(1, s.registrantCount());
        assertEquals("--", access(nsA));
        assertEquals("rw", access(nsB));
    }

    @Test
    void releaseAndClearNotifyTheOtherRegistrants() throws Exception {
        drainNotices(b);
        nsA.reservations().register(0xA);
        nsB.reservations().register(0xB);
        nsA.reservations().acquire(ReservationType.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, 0xA);
        nsA.reservations().release(ReservationType.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, 0xA);
        assertNotice(b, 2, 1); // Reservation Released
        // Write Exclusive: no notice on release.
        nsA.reservations().acquire(ReservationType.WRITE_EXCLUSIVE, 0xA);
        nsA.reservations().release(ReservationType.WRITE_EXCLUSIVE, 0xA);
        assertEquals(0, notice(b).getLong(0), "no notice");
        nsA.reservations().clear(0xA);
        assertNotice(b, 3, 1); // Reservation Preempted
        assertEquals(0, nsA.reservations().report().registrantCount());
        // Reservation Persistence (83h): not supported, as nvmet.
        assertFalse(b.commands().setFeatures(0x83, 0, false).ok());
    }

    @Test
    void noticesCountAndQueue() throws Exception {
        drainNotices(b);
        for (int i = 0; i < 3; i++) {
            nsA.reservations().register(0xA);
            nsB.reservations().register(0xB);
            nsA.reservations().clear(0xA);
        }
        ByteBuffer first = notice(b);
        assertEquals(3, first.get(8), "Reservation Preempted");
        assertEquals(2, first.get(9), "two more pages available");
        assertEquals(1, first.getInt(12), "NSID");
        assertEquals(first.getLong(0) + 1, notice(b).getLong(0), "Log Page Count increments");
        notice(b);
        assertEquals(0, notice(b).getLong(0), "empty");
    }

    @Test
    void zeroHostIdentifierCannotUseReservations() throws Exception {
        UUID zero = new UUID(0, 0);
        try (Controller z = connect("nqn.2024-01.io.nvmeof:zero-host", zero)) {
            Namespace ns = z.namespace(1);
            NvmeStatusException e = assertThrows(
                    NvmeStatusException.class, () -> ns.reservations().register(1));
            assertTrue(Status.is(e.status(), Status.COMMAND_SEQUENCE_ERROR), e.getMessage());
            assertThrows(NvmeStatusException.class, () -> ns.reservations().report());
            // It is a non-registrant for the access rules.
            nsA.reservations().register(0xA);
            nsA.reservations().acquire(ReservationType.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, 0xA);
            assertEquals("r-", access(ns));
        }
    }

    // ---- notices ----

    static ByteBuffer notice(Controller c) throws NvmeException {
        return c.getLogPage(0x80, 0xFFFFFFFF, 0, 64);
    }

    static void assertNotice(Controller c, int type, int nsid) throws NvmeException {
        ByteBuffer n = notice(c);
        assertTrue(n.getLong(0) != 0, "a notice");
        assertEquals(type, n.get(8), "notice type");
        assertEquals(nsid, n.getInt(12), "NSID");
    }

    static void drainNotices(Controller c) throws NvmeException {
        for (int i = 0; i < 100 && notice(c).getLong(0) != 0; i++) {
            // keep reading
        }
    }
}

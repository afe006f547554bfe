package io.nvmeof.initiator;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The reservation commands on one {@link Namespace} (NVMe Base 2.0, Reservations, §8.19): Reservation Register
 * (register, unregister, replace), Acquire (acquire, preempt, preempt and abort), Release (release, clear) and Report.
 * Get one with {@link Namespace#reservations()}. A reservation belongs to this host (its Host Identifier,
 * {@link HostIdentity#hostId()}) on every controller it connects with.
 *
 * <p>Every method blocks until the command completes. A refusal because of keys or another host's reservation throws
 * {@link ReservationConflictException}; other error statuses {@link NvmeStatusException}. Reads and writes refused by a
 * reservation throw {@link ReservationConflictException} too. These commands are rare: they allocate.
 */
public final class Reservations {
    /** CDW10 bit 3: IEKEY, ignore the current key (Register only: Acquire and Release refuse it). */
    private static final int IEKEY = 1 << 3;
    /** Reservation Report CDW11 bit 0: EDS, the extended data structure with 128-bit Host Identifiers. */
    private static final int EDS = 1;

    private static final int REPORT_HEADER = 64;
    private static final int REPORT_ENTRY = 64;

    private final Namespace namespace;

    Reservations(Namespace namespace) {
        this.namespace = namespace;
    }

    // ---- Reservation Register (0Dh) ----

    /** Registers this host with {@code key} (RREGA 000b). Registering again with the same key succeeds. */
    public void register(long key) throws NvmeException {
        registerAction(0, false, 0, key);
    }

    /** Unregisters this host (RREGA 001b); {@code currentKey} must match unless {@code ignoreExistingKey}. */
    public void unregister(long currentKey, boolean ignoreExistingKey) throws NvmeException {
        registerAction(1, ignoreExistingKey, currentKey, 0);
    }

    /** Replaces this host's key (RREGA 010b); {@code currentKey} must match unless {@code ignoreExistingKey}. */
    public void replace(long currentKey, long newKey, boolean ignoreExistingKey) throws NvmeException {
        registerAction(2, ignoreExistingKey, currentKey, newKey);
    }

    private void registerAction(int rrega, boolean iekey, long crkey, long nrkey) throws NvmeException {
        ByteBuffer data = keys(crkey, nrkey);
        send(NvmOpcode.RESERVATION_REGISTER, rrega | (iekey ? IEKEY : 0), 0, data);
    }

    // ---- Reservation Acquire (11h) ----

    /** Acquires a reservation of {@code type} (RACQA 000b); this host must be registered with {@code key}. */
    public void acquire(ReservationType type, long key) throws NvmeException {
        acquireAction(0, type, key, 0);
    }

    /**
     * Preempts (RACQA 001b): with {@code preemptKey} the holder's key, this host takes the reservation as {@code type}
     * and the hosts registered with that key are unregistered; with another key, only those hosts are unregistered.
     */
    public void preempt(ReservationType type, long key, long preemptKey) throws NvmeException {
        acquireAction(1, type, key, preemptKey);
    }

    /** As {@link #preempt}, and the preempted hosts' commands in flight on the namespace are aborted (RACQA 010b). */
    public void preemptAndAbort(ReservationType type, long key, long preemptKey) throws NvmeException {
        acquireAction(2, type, key, preemptKey);
    }

    private void acquireAction(int racqa, ReservationType type, long crkey, long prkey) throws NvmeException {
        send(NvmOpcode.RESERVATION_ACQUIRE, racqa | (type.code() << 8), 0, keys(crkey, prkey));
    }

    // ---- Reservation Release (15h) ----

    /** Releases the reservation of {@code type} that this host holds (RRELA 000b); no effect if it holds none. */
    public void release(ReservationType type, long key) throws NvmeException {
        ByteBuffer data = direct(8);
        data.putLong(0, key);
        send(NvmOpcode.RESERVATION_RELEASE, type.code() << 8, 0, data);
    }

    /** Clears the reservation and every registration (RRELA 001b). */
    public void clear(long key) throws NvmeException {
        ByteBuffer data = direct(8);
        data.putLong(0, key);
        send(NvmOpcode.RESERVATION_RELEASE, 1, 0, data);
    }

    // ---- Reservation Report (0Eh) ----

    /** The reservation status with room for up to 63 registrants (one 4 KiB report). */
    public ReservationStatus report() throws NvmeException {
        return report(4096);
    }

    /** The reservation status in a report of {@code bytes} (a multiple of 4, at least 64; extended format). */
    public ReservationStatus report(int bytes) throws NvmeException {
        if (bytes < REPORT_HEADER || bytes % 4 != 0) {
            throw new IllegalArgumentException("a report is a multiple of 4 bytes, at least 64: " + bytes);
        }
        ByteBuffer data = direct(bytes);
        send(NvmOpcode.RESERVATION_REPORT, bytes / 4 - 1, EDS, data);
        int regctl = data.getShort(5) & 0xFFFF;
        List<ReservationStatus.Registrant> list = new ArrayList<>();
        for (int i = 0; i < regctl && REPORT_HEADER + (i + 1) * REPORT_ENTRY <= bytes; i++) {
            int at = REPORT_HEADER + i * REPORT_ENTRY;
            list.add(new ReservationStatus.Registrant(
                    data.getShort(at) & 0xFFFF,
                    (data.get(at + 2) & 1) != 0,
                    data.getLong(at + 8),
                    uuid(data, at + 16)));
        }
        return new ReservationStatus(
                data.getInt(0),
                ReservationType.of(data.get(4) & 0xFF),
                regctl,
                (data.get(9) & 1) != 0,
                List.copyOf(list));
    }

    // ---- the path every reservation command takes ----

    private void send(NvmOpcode opcode, int cdw10, int cdw11, ByteBuffer data) throws NvmeException {
        Controller controller = namespace.controller();
        NvmeException dead = controller.teardown().unusable();
        if (dead != null) {
            throw dead;
        }
        long timeout = controller.timeoutNanos();
        CommandSlot slot = controller.ioQueue().acquire(timeout);
        SubmissionQueueEntry e = slot.prepare();
        e.opcode(opcode.code()).nsid(namespace.nsid()).cdw(10, cdw10).cdw(11, cdw11);
        String what = slot.describe();
        CommandSlot.Completion c = Controller.await(slot.submit(data, 0, data.capacity(), timeout), timeout);
        if (!Status.isSuccess(c.status())) {
            throw NvmeStatusException.of(c.status(), opcode.code(), what);
        }
    }

    private static ByteBuffer keys(long first, long second) {
        ByteBuffer b = direct(16);
        b.putLong(0, first);
        b.putLong(8, second);
        return b;
    }

    private static ByteBuffer direct(int bytes) {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** 16 raw bytes in textual UUID order, as Connect carries the Host Identifier. */
    private static UUID uuid(ByteBuffer b, int at) {
        long msb = 0;
        long lsb = 0;
        for (int i = 0; i < 8; i++) {
            msb = (msb << 8) | (b.get(at + i) & 0xFF);
            lsb = (lsb << 8) | (b.get(at + 8 + i) & 0xFF);
        }
        return new UUID(msb, lsb);
    }
}

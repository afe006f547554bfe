package io.nvmeof.target;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.UUID;

/**
 * The four reservation I/O commands of one I/O queue (NVMe Base 2.0, Reservations, §8.19; commands Reservation
 * Register 0Dh, Report 0Eh, Acquire 11h, Release 15h): decodes CDW10 and the data, checks what can be checked before
 * the data arrives, and lets the namespace's {@link Reservations} decide. Owned by the queue's {@link NvmCommands},
 * used only on that queue's thread; the commands themselves allocate (they are rare), the reads and writes never
 * come here.
 *
 * <p>Statuses follow nvmet (pr.c) where the spec leaves room, and the spec where nvmet differs from it: reserved
 * RREGA/RACQA/RRELA values and an unsupported CPTPL change are Invalid Field (nvmet: Invalid Opcode / ignored); see
 * docs/conformance.md "Reservations".
 */
final class ReservationCommands {
    /** CDW10: action bits 2:0, IEKEY bit 3, RTYPE bits 15:8 (Acquire, Release), CPTPL bits 31:30 (Register). */
    private static final int ACTION_MASK = 0x7;

    private static final int IEKEY = 1 << 3;
    /** CPTPL 10b: clear the Persist Through Power Loss state (already clear here); 01b reserved; 11b: set it. */
    private static final int CPTPL_CLEAR = 2;
    /** Reservation Report CDW11 bit 0: EDS, the extended data structure (128-bit Host Identifiers). */
    private static final int EDS = 1;
    /** Data: Register and Acquire carry two keys (CRKEY, NRKEY/PRKEY), Release only CRKEY. */
    private static final int TWO_KEYS = 16;

    private static final int ONE_KEY = 8;
    private static final UUID NO_HOST = new UUID(0, 0);

    private final QueueSession session;

    ReservationCommands(QueueSession session) {
        this.session = session;
    }

    /** A reservation command arrived: the checks that need no data, then Report at once or the data of the others. */
    void execute(TargetRequest request, SubmissionQueueEntry c, NvmOpcode opcode) {
        int cdw10 = c.cdw10();
        int action = cdw10 & ACTION_MASK;
        int status;
        switch (opcode) {
            case RESERVATION_REGISTER: {
                int cptpl = cdw10 >>> 30;
                status = action > Reservations.REPLACE || (cptpl != 0 && cptpl != CPTPL_CLEAR)
                        ? Status.dnr(Status.INVALID_FIELD)
                        : length(request, TWO_KEYS);
                break;
            }
            case RESERVATION_ACQUIRE: {
                int rtype = (cdw10 >>> 8) & 0xFF;
                boolean bad = action > Reservations.PREEMPT_AND_ABORT
                        || (cdw10 & IEKEY) != 0
                        || rtype < ReservationSnapshot.WRITE_EXCLUSIVE
                        || rtype > ReservationSnapshot.EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
                status = bad ? Status.dnr(Status.INVALID_FIELD) : length(request, TWO_KEYS);
                break;
            }
            case RESERVATION_RELEASE:
                status = action > Reservations.CLEAR || (cdw10 & IEKEY) != 0
                        ? Status.dnr(Status.INVALID_FIELD)
                        : length(request, ONE_KEY);
                break;
            default: // RESERVATION_REPORT
                session.complete(request, report(request, c));
                return;
        }
        if (status == Status.SUCCESS && NO_HOST.equals(session.controller().hostId())) {
            status = Status.dnr(Status.COMMAND_SEQUENCE_ERROR);
        }
        if (status != Status.SUCCESS) {
            session.complete(request, status);
            return;
        }
        request.receiveData(session); // continues in dataReceived()
    }

    /** The keys of a Register, Acquire or Release arrived. */
    void dataReceived(TargetRequest request, SubmissionQueueEntry c, NvmOpcode opcode) {
        Reservations r = session.subsystem().reservations(c.nsid());
        if (r == null) {
            session.complete(request, Status.dnr(Status.INVALID_NAMESPACE)); // removed meanwhile
            return;
        }
        ByteBuffer data = request.data();
        long crkey = data.getLong(0);
        int cdw10 = c.cdw10();
        int action = cdw10 & ACTION_MASK;
        boolean iekey = (cdw10 & IEKEY) != 0;
        int rtype = (cdw10 >>> 8) & 0xFF;
        UUID host = session.controller().hostId();
        int status;
        switch (opcode) {
            case RESERVATION_REGISTER:
                status = r.register(host, action, iekey, crkey, data.getLong(8));
                break;
            case RESERVATION_ACQUIRE:
                status = r.acquire(host, action, rtype, crkey, data.getLong(8));
                break;
            default: // RESERVATION_RELEASE
                status = r.release(host, action, rtype, crkey);
                break;
        }
        session.complete(request, status);
    }

    /** Reservation Report: NUMD (CDW10, 0's based dwords) must match the transfer; EDS must be 1, as nvmet requires. */
    private int report(TargetRequest request, SubmissionQueueEntry c) {
        long length = ((c.cdw10() & 0xFFFFFFFFL) + 1) * 4;
        if (length != request.dataLength()) {
            return Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
        }
        if ((c.cdw11() & EDS) == 0) {
            // The 24-byte structure has room for 64-bit Host Identifiers only (NVMe Base 2.0, Reservation Report).
            return Status.dnr(Status.HOST_IDENTIFIER_INCONSISTENT_FORMAT);
        }
        if (length < Reservations.REPORT_HEADER) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        if (NO_HOST.equals(session.controller().hostId())) {
            return Status.dnr(Status.COMMAND_SEQUENCE_ERROR);
        }
        Reservations r = session.subsystem().reservations(c.nsid());
        ByteBuffer full = r.report();
        int len = (int) length;
        ByteBuffer out = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
        out.put(0, full, 0, Math.min(len, full.capacity())); // truncated; REGCTL still counts every registrant
        request.addData(out, 0, len, DataRelease.NONE);
        return Status.SUCCESS;
    }

    /** The data must be exactly {@code expected} bytes, as nvmet checks (nvmeof-protocol.md §4.1). */
    private static int length(TargetRequest request, int expected) {
        return request.dataLength() == expected ? Status.SUCCESS : Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
    }
}

package io.nvmeof.target;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;

/**
 * One immutable state of a namespace's reservation (NVMe Base 2.0, Reservations, §8.19): the type, the holder, the
 * registered hosts and the hosts that the latest Preempt and Abort preempted. {@link Reservations} builds a new one on
 * every change and publishes it through a volatile field; the I/O path reads that field once per command and decides
 * with {@link #access}: array scans over a handful of registrants, no lock, no allocation.
 *
 * <p>Hosts are 128-bit Host Identifiers from the Connect data, held as two {@code long} arrays (most and least
 * significant halves, the textual UUID order) so a comparison needs no object.
 */
final class ReservationSnapshot {
    /** Reservation types (RTYPE, NVMe Base 2.0 Reservation Acquire): 0 is "no reservation". */
    static final int NONE = 0;

    static final int WRITE_EXCLUSIVE = 1;
    static final int EXCLUSIVE_ACCESS = 2;
    static final int WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 3;
    static final int EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 4;
    static final int WRITE_EXCLUSIVE_ALL_REGISTRANTS = 5;
    static final int EXCLUSIVE_ACCESS_ALL_REGISTRANTS = 6;

    /** No reservation, no registrant. */
    static final ReservationSnapshot EMPTY =
            new ReservationSnapshot(NONE, -1, new long[0], new long[0], new long[0], new long[0]);

    /** RTYPE, or {@link #NONE}. */
    final int type;
    /** Index of the holder in the registrant arrays, or -1 (none, or every registrant for the All Registrants types). */
    final int holder;

    private final long[] msb;
    private final long[] lsb;
    private final long[] abortedMsb;
    private final long[] abortedLsb;

    ReservationSnapshot(int type, int holder, long[] msb, long[] lsb, long[] abortedMsb, long[] abortedLsb) {
        this.type = type;
        this.holder = holder;
        this.msb = msb;
        this.lsb = lsb;
        this.abortedMsb = abortedMsb;
        this.abortedLsb = abortedLsb;
    }

    /** Whether the host is registered. */
    boolean isRegistrant(long hostMsb, long hostLsb) {
        return indexOf(msb, lsb, hostMsb, hostLsb) >= 0;
    }

    /** Whether the host holds the reservation: the holder, or any registrant for the All Registrants types. */
    boolean isHolder(long hostMsb, long hostLsb) {
        if (type == WRITE_EXCLUSIVE_ALL_REGISTRANTS || type == EXCLUSIVE_ACCESS_ALL_REGISTRANTS) {
            return isRegistrant(hostMsb, hostLsb);
        }
        return holder >= 0 && msb[holder] == hostMsb && lsb[holder] == hostLsb;
    }

    /**
     * The status for an I/O command {@code opcode} from this host: success, or Reservation Conflict with DNR, as nvmet
     * answers. The table is NVMe Base 2.0 "Command Behavior in the Presence of a Reservation": the write group (Flush,
     * Write, Write Uncorrectable, Write Zeroes, Dataset Management, Copy) is refused to non-holders of Write Exclusive
     * and Exclusive Access and to non-registrants of the other types; the read group (Read, Compare, Verify) is refused
     * to non-holders of Exclusive Access and to non-registrants of the Exclusive Access Registrants Only / All
     * Registrants types. Other opcodes are not governed (the reservation commands follow their own rules).
     */
    int access(int opcode, long hostMsb, long hostLsb) {
        int t = type;
        if (t == NONE) {
            return Status.SUCCESS;
        }
        boolean write = isWriteGroup(opcode);
        if (!write && !isReadGroup(opcode)) {
            return Status.SUCCESS;
        }
        if (isHolder(hostMsb, hostLsb)) {
            return Status.SUCCESS;
        }
        boolean allowed;
        switch (t) {
            case WRITE_EXCLUSIVE:
                allowed = !write;
                break;
            case EXCLUSIVE_ACCESS:
                allowed = false;
                break;
            case WRITE_EXCLUSIVE_REGISTRANTS_ONLY:
            case WRITE_EXCLUSIVE_ALL_REGISTRANTS:
                allowed = !write || isRegistrant(hostMsb, hostLsb);
                break;
            default: // Exclusive Access Registrants Only / All Registrants
                allowed = isRegistrant(hostMsb, hostLsb);
                break;
        }
        return allowed ? Status.SUCCESS : Status.dnr(Status.RESERVATION_CONFLICT);
    }

    /**
     * For a command admitted before this state whose data arrived only now: Command Aborted due to Preempt and Abort
     * if the latest Preempt and Abort preempted its host and the host may no longer run it, else success (a command
     * admitted earlier runs to completion).
     */
    int abortedByPreempt(int opcode, long hostMsb, long hostLsb) {
        if (abortedMsb.length == 0 || indexOf(abortedMsb, abortedLsb, hostMsb, hostLsb) < 0) {
            return Status.SUCCESS;
        }
        return access(opcode, hostMsb, hostLsb) == Status.SUCCESS ? Status.SUCCESS : Status.ABORTED_PREEMPT_AND_ABORT;
    }

    static boolean isWriteGroup(int opcode) {
        return opcode == NvmOpcode.FLUSH.code()
                || opcode == NvmOpcode.WRITE.code()
                || opcode == NvmOpcode.WRITE_UNCORRECTABLE.code()
                || opcode == NvmOpcode.WRITE_ZEROES.code()
                || opcode == NvmOpcode.DATASET_MANAGEMENT.code()
                || opcode == COPY;
    }

    static boolean isReadGroup(int opcode) {
        return opcode == NvmOpcode.READ.code()
                || opcode == NvmOpcode.COMPARE.code()
                || opcode == NvmOpcode.VERIFY.code();
    }

    /** Copy (NVM Command Set 1.0): in the write group whether or not this target implements it. */
    private static final int COPY = 0x19;

    private static int indexOf(long[] m, long[] l, long hostMsb, long hostLsb) {
        for (int i = 0; i < m.length; i++) {
            if (m[i] == hostMsb && l[i] == hostLsb) {
                return i;
            }
        }
        return -1;
    }
}

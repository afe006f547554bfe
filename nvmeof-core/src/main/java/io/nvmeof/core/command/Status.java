package io.nvmeof.core.command;

/**
 * NVMe completion status values (nvmeof-protocol.md §1.2, §1.4). A status is an {@code int} holding the 16-bit wire
 * value of the CQE status field: bit 0 phase (always 0 here), bits 8:1 SC, 11:9 SCT, 13:12 CRD, 14 More, 15 DNR. The
 * constants below carry no DNR bit; add it with {@link #dnr(int)}. An NVMe failure is a status, never an exception.
 */
public final class Status {
    private Status() {}

    // Status code types (nvmeof-protocol.md §1.2).
    public static final int SCT_GENERIC = 0;
    public static final int SCT_COMMAND_SPECIFIC = 1;
    public static final int SCT_MEDIA = 2;
    public static final int SCT_PATH = 3;
    public static final int SCT_VENDOR = 7;

    public static final int DNR_BIT = 0x8000;
    public static final int MORE_BIT = 0x4000;

    public static final int SUCCESS = 0;

    // Generic command status (SCT 0), nvmeof-protocol.md §1.4.
    public static final int INVALID_OPCODE = of(SCT_GENERIC, 0x01);
    public static final int INVALID_FIELD = of(SCT_GENERIC, 0x02);
    public static final int COMMAND_ID_CONFLICT = of(SCT_GENERIC, 0x03);
    public static final int DATA_TRANSFER_ERROR = of(SCT_GENERIC, 0x04);
    public static final int INTERNAL_ERROR = of(SCT_GENERIC, 0x06);
    public static final int ABORT_REQUESTED = of(SCT_GENERIC, 0x07);
    public static final int ABORTED_SQ_DELETION = of(SCT_GENERIC, 0x08);
    /** The other command of a fused pair failed (NVMe Base 2.0c §3.4.2). */
    public static final int ABORTED_FAILED_FUSED = of(SCT_GENERIC, 0x09);
    /** The other command of a fused pair did not come (NVMe Base 2.0c §3.4.2). */
    public static final int ABORTED_MISSING_FUSED = of(SCT_GENERIC, 0x0A);

    public static final int INVALID_NAMESPACE = of(SCT_GENERIC, 0x0B);
    public static final int COMMAND_SEQUENCE_ERROR = of(SCT_GENERIC, 0x0C);
    public static final int INVALID_SGL_LAST_SEGMENT = of(SCT_GENERIC, 0x0D);
    public static final int INVALID_NUMBER_OF_SGL_DESCRIPTORS = of(SCT_GENERIC, 0x0E);
    public static final int DATA_SGL_LENGTH_INVALID = of(SCT_GENERIC, 0x0F);
    public static final int METADATA_SGL_LENGTH_INVALID = of(SCT_GENERIC, 0x10);
    public static final int SGL_DESCRIPTOR_TYPE_INVALID = of(SCT_GENERIC, 0x11);
    public static final int SGL_OFFSET_INVALID = of(SCT_GENERIC, 0x16);
    /** Reservation Report with EDS = 0 while hosts use 128-bit Host Identifiers (NVMe Base 2.0, Reservations). */
    public static final int HOST_IDENTIFIER_INCONSISTENT_FORMAT = of(SCT_GENERIC, 0x18);

    public static final int KEEP_ALIVE_EXPIRED = of(SCT_GENERIC, 0x19);
    public static final int KEEP_ALIVE_INVALID = of(SCT_GENERIC, 0x1A);
    public static final int ABORTED_PREEMPT_AND_ABORT = of(SCT_GENERIC, 0x1B);
    public static final int NAMESPACE_WRITE_PROTECTED = of(SCT_GENERIC, 0x20);
    public static final int COMMAND_INTERRUPTED = of(SCT_GENERIC, 0x21);
    public static final int TRANSIENT_TRANSPORT_ERROR = of(SCT_GENERIC, 0x22);
    public static final int LBA_OUT_OF_RANGE = of(SCT_GENERIC, 0x80);
    public static final int CAPACITY_EXCEEDED = of(SCT_GENERIC, 0x81);
    public static final int NAMESPACE_NOT_READY = of(SCT_GENERIC, 0x82);
    public static final int RESERVATION_CONFLICT = of(SCT_GENERIC, 0x83);

    // Command specific status (SCT 1), nvmeof-protocol.md §1.4.
    public static final int INVALID_QUEUE_IDENTIFIER = of(SCT_COMMAND_SPECIFIC, 0x01);
    public static final int INVALID_QUEUE_SIZE = of(SCT_COMMAND_SPECIFIC, 0x02);
    public static final int ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED = of(SCT_COMMAND_SPECIFIC, 0x05);
    public static final int INVALID_LOG_PAGE = of(SCT_COMMAND_SPECIFIC, 0x09);
    public static final int FEATURE_NOT_SAVEABLE = of(SCT_COMMAND_SPECIFIC, 0x0D);
    public static final int CONNECT_INCOMPATIBLE_FORMAT = of(SCT_COMMAND_SPECIFIC, 0x80);
    public static final int CONNECT_CONTROLLER_BUSY = of(SCT_COMMAND_SPECIFIC, 0x81);
    public static final int CONNECT_INVALID_PARAMETERS = of(SCT_COMMAND_SPECIFIC, 0x82);
    public static final int CONNECT_RESTART_DISCOVERY = of(SCT_COMMAND_SPECIFIC, 0x83);
    public static final int CONNECT_INVALID_HOST = of(SCT_COMMAND_SPECIFIC, 0x84);
    public static final int INVALID_QUEUE_TYPE = of(SCT_COMMAND_SPECIFIC, 0x85);
    /** Set Features I/O Command Set Profile: a combination the controller does not have. */
    public static final int IO_COMMAND_SET_COMBINATION_REJECTED = of(SCT_COMMAND_SPECIFIC, 0x2B);
    /** Copy (NVM Command Set 1.0c §3.2.2): a range, the range count or the total beyond MSSRL, MSRC or MCL. Same code as Connect Restart Discovery: command specific. */
    public static final int COMMAND_SIZE_LIMIT_EXCEEDED = of(SCT_COMMAND_SPECIFIC, 0x83);

    public static final int DISCOVER_RESTART = of(SCT_COMMAND_SPECIFIC, 0x90);
    public static final int AUTHENTICATION_REQUIRED = of(SCT_COMMAND_SPECIFIC, 0x91);

    // Media and data integrity errors (SCT 2), nvmeof-protocol.md §1.4.
    public static final int WRITE_FAULT = of(SCT_MEDIA, 0x80);
    public static final int UNRECOVERED_READ_ERROR = of(SCT_MEDIA, 0x81);
    public static final int COMPARE_FAILURE = of(SCT_MEDIA, 0x85);
    public static final int ACCESS_DENIED = of(SCT_MEDIA, 0x86);

    // Path related (SCT 3), nvmeof-protocol.md §1.4.
    public static final int INTERNAL_PATH_ERROR = of(SCT_PATH, 0x00);
    /** The namespace's ANA group is in the Persistent Loss state on this path (NVMe Base 2.0 §8.1, Asymmetric Namespace Access Reporting). */
    public static final int ANA_PERSISTENT_LOSS = of(SCT_PATH, 0x01);
    /** The namespace's ANA group is Inaccessible on this path (NVMe Base 2.0 §8.1, Asymmetric Namespace Access Reporting). */
    public static final int ANA_INACCESSIBLE = of(SCT_PATH, 0x02);
    /** The namespace's ANA group is changing state on this path (NVMe Base 2.0 §8.1, Asymmetric Namespace Access Reporting). */
    public static final int ANA_TRANSITION = of(SCT_PATH, 0x03);

    /** The wire status for SCT/SC, without More or DNR. */
    public static int of(int sct, int sc) {
        return ((sct & 0x7) << 9) | ((sc & 0xFF) << 1);
    }

    /** {@code status} with the Do Not Retry bit set. */
    public static int dnr(int status) {
        return status | DNR_BIT;
    }

    public static int sct(int status) {
        return (status >>> 9) & 0x7;
    }

    public static int sc(int status) {
        return (status >>> 1) & 0xFF;
    }

    public static boolean isDnr(int status) {
        return (status & DNR_BIT) != 0;
    }

    public static boolean isMore(int status) {
        return (status & MORE_BIT) != 0;
    }

    /** True if SCT and SC are both 0, whatever the other bits say. */
    public static boolean isSuccess(int status) {
        return (status & 0x0FFE) == 0;
    }

    /** True if {@code status} has the same SCT and SC as {@code code}, whatever the DNR/More/CRD/phase bits. */
    public static boolean is(int status, int code) {
        return (status & 0x0FFE) == (code & 0x0FFE);
    }

    /** A readable name for the SCT/SC pair, e.g. "LBA Out of Range". Command-specific codes are named as for admin/fabrics commands. */
    public static String name(int status) {
        int sct = sct(status);
        int sc = sc(status);
        switch (sct) {
            case SCT_GENERIC:
                switch (sc) {
                    case 0x00:
                        return "Successful Completion";
                    case 0x01:
                        return "Invalid Command Opcode";
                    case 0x02:
                        return "Invalid Field in Command";
                    case 0x03:
                        return "Command ID Conflict";
                    case 0x04:
                        return "Data Transfer Error";
                    case 0x06:
                        return "Internal Error";
                    case 0x07:
                        return "Command Abort Requested";
                    case 0x08:
                        return "Command Aborted due to SQ Deletion";
                    case 0x09:
                        return "Command Aborted due to Failed Fused Command";
                    case 0x0A:
                        return "Command Aborted due to Missing Fused Command";
                    case 0x0B:
                        return "Invalid Namespace or Format";
                    case 0x0C:
                        return "Command Sequence Error";
                    case 0x0D:
                        return "Invalid SGL Last Segment Descriptor";
                    case 0x0E:
                        return "Invalid Number of SGL Descriptors";
                    case 0x0F:
                        return "Data SGL Length Invalid";
                    case 0x10:
                        return "Metadata SGL Length Invalid";
                    case 0x11:
                        return "SGL Descriptor Type Invalid";
                    case 0x16:
                        return "SGL Offset Invalid";
                    case 0x18:
                        return "Host Identifier Inconsistent Format";
                    case 0x19:
                        return "Keep Alive Timer Expired";
                    case 0x1A:
                        return "Keep Alive Timeout Invalid";
                    case 0x1B:
                        return "Command Aborted due to Preempt and Abort";
                    case 0x20:
                        return "Namespace is Write Protected";
                    case 0x21:
                        return "Command Interrupted";
                    case 0x22:
                        return "Transient Transport Error";
                    case 0x80:
                        return "LBA Out of Range";
                    case 0x81:
                        return "Capacity Exceeded";
                    case 0x82:
                        return "Namespace Not Ready";
                    case 0x83:
                        return "Reservation Conflict";
                    default:
                        break;
                }
                break;
            case SCT_COMMAND_SPECIFIC:
                switch (sc) {
                    case 0x01:
                        return "Invalid Queue Identifier";
                    case 0x02:
                        return "Invalid Queue Size";
                    case 0x05:
                        return "Asynchronous Event Request Limit Exceeded";
                    case 0x09:
                        return "Invalid Log Page";
                    case 0x0D:
                        return "Feature Identifier Not Saveable";
                    case 0x2B:
                        return "I/O Command Set Combination Rejected";
                    case 0x80:
                        return "Connect Incompatible Format / Conflicting Attributes";
                    case 0x81:
                        return "Connect Controller Busy";
                    case 0x82:
                        return "Connect Invalid Parameters";
                    case 0x83:
                        return "Connect Restart Discovery / Command Size Limit Exceeded";
                    case 0x84:
                        return "Connect Invalid Host";
                    case 0x85:
                        return "Invalid Queue Type";
                    case 0x90:
                        return "Discover Restart";
                    case 0x91:
                        return "Authentication Required";
                    default:
                        break;
                }
                break;
            case SCT_MEDIA:
                switch (sc) {
                    case 0x80:
                        return "Write Fault";
                    case 0x81:
                        return "Unrecovered Read Error";
                    case 0x85:
                        return "Compare Failure";
                    case 0x86:
                        return "Access Denied";
                    case 0x87:
                        return "Deallocated or Unwritten Logical Block";
                    default:
                        break;
                }
                break;
            case SCT_PATH:
                switch (sc) {
                    case 0x00:
                        return "Internal Path Error";
                    case 0x01:
                        return "Asymmetric Access Persistent Loss";
                    case 0x02:
                        return "Asymmetric Access Inaccessible";
                    case 0x03:
                        return "Asymmetric Access Transition";
                    default:
                        break;
                }
                break;
            default:
                break;
        }
        return "Unknown status";
    }

    /** E.g. {@code "LBA Out of Range (sct=0x0 sc=0x80 dnr)"}. */
    public static String toString(int status) {
        return String.format(
                "%s (sct=0x%x sc=0x%02x%s%s)",
                name(status), sct(status), sc(status), isDnr(status) ? " dnr" : "", isMore(status) ? " more" : "");
    }
}

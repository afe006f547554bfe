package io.nvmeof.target;

import io.nvmeof.core.command.FeatureId;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.UUID;

/**
 * The mandatory features that change nothing in a RAM target but that a host may set and read back (NVMe Base
 * Specification 2.0c §5.27.1): Arbitration (01h), Power Management (02h), Temperature Threshold (04h), Error Recovery
 * (05h), Write Atomicity Normal (0Ah), and Get Features Host Identifier (81h). SPDK answers these; nvmet answers them
 * with Invalid Field. Values are checked as the spec and SPDK check them, kept per controller, and lost at a reset
 * like every feature here (none is saveable). Owned by the controller's {@link Features}; admin thread only.
 */
final class FeatureValues {
    /** Arbitration CDW11: AB bits 2:0, LPW 15:8, MPW 23:16, HPW 31:24; bits 7:3 reserved. */
    private static final int ARBITRATION_FIELDS = 0xFFFFFF07;
    /** Power Management CDW11: PS bits 4:0, WH bits 7:5. */
    private static final int POWER_STATE_MASK = 0x1F;

    private static final int POWER_MANAGEMENT_FIELDS = 0xFF;
    /** Temperature Threshold CDW11: TMPTH 15:0, TMPSEL 19:16 (0 composite, 1–8 sensors, 15 all), THSEL 21:20. */
    private static final int TMPSEL_ALL = 0xF;

    private static final int TMPSEL_SENSORS = 9; // 0 composite, 1..8
    private static final int THSEL_OVER = 0;
    private static final int THSEL_UNDER = 1;
    /** The over-temperature threshold's default: 343 K (70 °C); the under threshold's is 0 K. */
    static final int OVER_TEMPERATURE_DEFAULT = 343;
    /** Error Recovery CDW11: TLER 15:0; DULBE bit 16 needs deallocated-or-unwritten error support, which we lack. */
    private static final int ERROR_RECOVERY_TLER = 0xFFFF;

    private static final int ERROR_RECOVERY_DULBE = 1 << 16;
    /** Write Atomicity Normal CDW11: DN bit 0. */
    private static final int WRITE_ATOMICITY_DN = 1;
    /** Get Features Host Identifier CDW11 bit 0: EXHID, the 128-bit identifier (the only one fabrics has). */
    private static final int EXHID = 1;

    static final int HOST_IDENTIFIER_LENGTH = 16;

    private int arbitration;
    private int powerManagement;
    private final int[][] temperatureThresholds = new int[TMPSEL_SENSORS][2];
    private int errorRecovery;
    private int writeAtomicity;

    FeatureValues() {
        for (int[] sensor : temperatureThresholds) {
            sensor[THSEL_OVER] = OVER_TEMPERATURE_DEFAULT;
        }
    }

    /** Whether {@code fid} is one of this class's features. */
    static boolean handles(FeatureId fid) {
        if (fid == null) {
            return false; // an identifier FeatureId does not name (found by the differential harness)
        }
        switch (fid) {
            case ARBITRATION:
            case POWER_MANAGEMENT:
            case TEMPERATURE_THRESHOLD:
            case ERROR_RECOVERY:
            case WRITE_ATOMICITY_NORMAL:
                return true;
            default:
                return false;
        }
    }

    /** Set Features of one of {@link #handles these}; returns the status, DW0 = 0. */
    int set(FeatureId fid, int value) {
        switch (fid) {
            case ARBITRATION:
                arbitration = value & ARBITRATION_FIELDS; // the reserved bits are ignored, as SPDK does
                return Status.SUCCESS;
            case POWER_MANAGEMENT:
                if ((value & POWER_STATE_MASK) != 0) {
                    return Status.dnr(Status.INVALID_FIELD); // NPSS = 0: power state 0 is the only one
                }
                powerManagement = value & POWER_MANAGEMENT_FIELDS;
                return Status.SUCCESS;
            case TEMPERATURE_THRESHOLD: {
                int tmpsel = (value >>> 16) & 0xF;
                int thsel = (value >>> 20) & 0x3;
                if (!validTemperatureSelect(tmpsel, thsel)) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                int threshold = value & 0xFFFF;
                for (int s = 0; s < TMPSEL_SENSORS; s++) {
                    if (tmpsel == TMPSEL_ALL || tmpsel == s) {
                        temperatureThresholds[s][thsel] = threshold;
                    }
                }
                return Status.SUCCESS;
            }
            case ERROR_RECOVERY:
                if ((value & ERROR_RECOVERY_DULBE) != 0) {
                    return Status.dnr(Status.INVALID_FIELD); // no DULBE support (Identify Namespace NSFEAT bit 2)
                }
                errorRecovery = value & ERROR_RECOVERY_TLER;
                return Status.SUCCESS;
            default: // WRITE_ATOMICITY_NORMAL
                writeAtomicity = value & WRITE_ATOMICITY_DN;
                return Status.SUCCESS;
        }
    }

    /**
     * Get Features of one of {@link #handles these}, current ({@code current}) or default value; fills DW0 and
     * returns the status. Temperature Threshold reads the threshold CDW11's TMPSEL and THSEL select.
     */
    int get(FeatureId fid, SubmissionQueueEntry c, boolean current, TargetRequest request) {
        int v;
        switch (fid) {
            case ARBITRATION:
                v = current ? arbitration : 0;
                break;
            case POWER_MANAGEMENT:
                v = current ? powerManagement : 0;
                break;
            case TEMPERATURE_THRESHOLD: {
                int tmpsel = (c.cdw11() >>> 16) & 0xF;
                int thsel = (c.cdw11() >>> 20) & 0x3;
                if (!validTemperatureSelect(tmpsel, thsel) || tmpsel == TMPSEL_ALL) {
                    return Status.dnr(Status.INVALID_FIELD); // a Get reads one threshold: "all sensors" names none
                }
                int def = thsel == THSEL_OVER ? OVER_TEMPERATURE_DEFAULT : 0;
                // DW0 returns the threshold with the selectors it answers for.
                v = (current ? temperatureThresholds[tmpsel][thsel] : def) | (tmpsel << 16) | (thsel << 20);
                break;
            }
            case ERROR_RECOVERY:
                v = current ? errorRecovery : 0;
                break;
            default: // WRITE_ATOMICITY_NORMAL
                v = current ? writeAtomicity : 0;
                break;
        }
        request.response().dw0(v);
        return Status.SUCCESS;
    }

    private static boolean validTemperatureSelect(int tmpsel, int thsel) {
        return (tmpsel < TMPSEL_SENSORS || tmpsel == TMPSEL_ALL) && (thsel == THSEL_OVER || thsel == THSEL_UNDER);
    }

    /**
     * Get Features Host Identifier (81h): the 128-bit Host Identifier from Connect, 16 bytes of data. EXHID must be 1
     * (fabrics knows no 64-bit identifier) and the data exactly 16 bytes, as nvmet checks.
     */
    static int hostIdentifier(TargetRequest request, SubmissionQueueEntry c, UUID hostId) {
        if ((c.cdw11() & EXHID) == 0) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        if (request.dataLength() != HOST_IDENTIFIER_LENGTH) {
            return Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
        }
        ByteBuffer b = ByteBuffer.allocate(HOST_IDENTIFIER_LENGTH).order(ByteOrder.BIG_ENDIAN);
        // The Host Identifier's bytes as Connect carried them: the UUID's textual byte order (nvmeof-protocol.md §0).
        b.putLong(0, hostId.getMostSignificantBits()).putLong(8, hostId.getLeastSignificantBits());
        request.addData(b, 0, HOST_IDENTIFIER_LENGTH, DataRelease.NONE);
        return Status.SUCCESS;
    }
}

package io.nvmeof.core.command;

/**
 * Feature Identifiers (FID, CDW10 bits 7:0 of Set Features and Get Features) that our controllers answer
 * (nvmeof-protocol.md §3.4). Any other FID is not one of these: {@link #of(int)} returns null.
 */
public enum FeatureId {
    ARBITRATION(0x01),
    POWER_MANAGEMENT(0x02),
    /** Temperature Threshold: one value per sensor (TMPSEL) and kind (THSEL, over or under) in CDW11. */
    TEMPERATURE_THRESHOLD(0x04),
    ERROR_RECOVERY(0x05),
    VOLATILE_WRITE_CACHE(0x06),
    NUMBER_OF_QUEUES(0x07),
    ASYNC_EVENT_CONFIGURATION(0x0B),
    /** Interrupt Coalescing: PCIe only; over fabrics Invalid Field, as nvmet answers. */
    INTERRUPT_COALESCING(0x08),
    /** Interrupt Vector Configuration: PCIe only; over fabrics Invalid Field, as nvmet answers. */
    INTERRUPT_VECTOR_CONFIGURATION(0x09),
    WRITE_ATOMICITY_NORMAL(0x0A),
    KEEP_ALIVE_TIMER(0x0F),
    /** I/O Command Set Profile: the I/O Command Set data structure's combination in use (here only 0, NVM). */
    IO_COMMAND_SET_PROFILE(0x19),
    /** Host Identifier: on fabrics it comes from Connect, so Set Features of it is a Command Sequence Error. */
    HOST_IDENTIFIER(0x81),
    /** Reservation Notification Mask: per namespace, which reservation notices this controller wants. */
    RESERVATION_NOTIFICATION_MASK(0x82),
    /** Reservation Persistence (PTPL): a RAM target cannot persist through power loss. */
    RESERVATION_PERSISTENCE(0x83);

    private static final FeatureId[] BY_CODE = new FeatureId[256];

    static {
        for (FeatureId f : values()) {
            BY_CODE[f.code] = f;
        }
    }

    private final int code;

    FeatureId(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The feature for {@code code} (its low 8 bits), or null if it is not one of these. Allocation-free. */
    public static FeatureId of(int code) {
        return BY_CODE[code & 0xFF];
    }
}

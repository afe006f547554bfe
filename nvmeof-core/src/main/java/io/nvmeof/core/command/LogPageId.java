package io.nvmeof.core.command;

/**
 * Log Page Identifiers (LID, CDW10 bits 7:0 of Get Log Page) that our controllers return (nvmeof-protocol.md §3.3).
 * Any other LID is not one of these: {@link #of(int)} returns null.
 */
public enum LogPageId {
    /** Supported Log Pages: which LIDs this controller returns. */
    SUPPORTED_LOG_PAGES(0x00),
    ERROR_INFORMATION(0x01),
    SMART_HEALTH_INFORMATION(0x02),
    /** Firmware Slot Information: one read-only slot, active. */
    FIRMWARE_SLOT_INFORMATION(0x03),
    CHANGED_NAMESPACE_LIST(0x04),
    COMMANDS_SUPPORTED_AND_EFFECTS(0x05),
    /** Asymmetric Namespace Access: the ANA group states of the path the command came on (nvmeof-protocol.md §3.3). */
    ASYMMETRIC_NAMESPACE_ACCESS(0x0C),
    /** Reservation Notification: one 64-byte notice per read (NVMe Base 2.0, Reservations). */
    RESERVATION_NOTIFICATION(0x80),
    /** The discovery log page, on a discovery controller only. */
    DISCOVERY(0x70),
    /**
     * nvmeof-java's performance page (CPU and work counters for bin/nvmeof-perf): the first of the vendor-specific
     * LIDs C0h–FFh; other targets answer it with an error.
     */
    VENDOR_PERF_STATS(0xC0);

    private static final LogPageId[] BY_CODE = new LogPageId[256];

    static {
        for (LogPageId l : values()) {
            BY_CODE[l.code] = l;
        }
    }

    private final int code;

    LogPageId(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The log page for {@code code} (its low 8 bits), or null if it is not one of these. Allocation-free. */
    public static LogPageId of(int code) {
        return BY_CODE[code & 0xFF];
    }
}

package io.nvmeof.core.command;

import java.util.Locale;

/**
 * Asymmetric Namespace Access states (NVMe Base 2.0 §8.1, Asymmetric Namespace Access Reporting; nvmeof-protocol.md §3.3): the state an ANA group has on
 * one path (controller). The code is the ANAS value of an ANA group descriptor (bits 3:0 of byte 16).
 */
public enum AnaState {
    OPTIMIZED(0x01, Status.SUCCESS),
    NON_OPTIMIZED(0x02, Status.SUCCESS),
    INACCESSIBLE(0x03, Status.ANA_INACCESSIBLE),
    PERSISTENT_LOSS(0x04, Status.ANA_PERSISTENT_LOSS),
    CHANGE(0x0F, Status.ANA_TRANSITION);

    private static final AnaState[] BY_CODE = new AnaState[16];

    static {
        for (AnaState s : values()) {
            BY_CODE[s.code] = s;
        }
    }

    private final int code;
    private final int ioStatus;

    AnaState(int code, int ioStatus) {
        this.code = code;
        this.ioStatus = ioStatus;
    }

    /** The ANAS value. */
    public int code() {
        return code;
    }

    /**
     * The status of an I/O command to a namespace of a group in this state: success for the two accessible states,
     * else the path-related status (SCT 3) without DNR, so a multipath host retries on another path.
     */
    public int ioStatus() {
        return ioStatus;
    }

    /** Whether commands that access the namespace are processed (optimized or non-optimized). */
    public boolean accessible() {
        return ioStatus == Status.SUCCESS;
    }

    /** The state with ANAS {@code code} (its low 4 bits), or null for a reserved value. Allocation-free. */
    public static AnaState of(int code) {
        return BY_CODE[code & 0xF];
    }

    /** The name as configuration files write it: "optimized", "non-optimized", "inaccessible", "persistent-loss", "change". */
    public String configName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Parses a {@link #configName()} (case and '_' / '-' do not matter).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static AnaState parse(String text) {
        if (text != null) {
            String t = text.trim().toUpperCase(Locale.ROOT).replace('-', '_');
            for (AnaState s : values()) {
                if (s.name().equals(t)) {
                    return s;
                }
            }
        }
        throw new IllegalArgumentException("ANA state must be one of optimized, non-optimized, inaccessible, "
                + "persistent-loss, change: '" + text + "'");
    }
}

package io.nvmeof.core.command;

/**
 * Controller or Namespace Structure values (CNS, CDW10 bits 7:0 of Identify) that our controllers return
 * (nvmeof-protocol.md §3.2). Any other CNS is not one of these: {@link #of(int)} returns null.
 */
public enum IdentifyCns {
    /** Identify Namespace data structure for the NSID (nvmeof-protocol.md §3.2.2). */
    NAMESPACE(0x00),
    /** Identify Controller data structure (nvmeof-protocol.md §3.2.1); the only CNS of a discovery controller. */
    CONTROLLER(0x01),
    /** Active Namespace ID list: the active NSIDs greater than the NSID field. */
    ACTIVE_NAMESPACE_LIST(0x02),
    /** Namespace Identification Descriptor list (nvmeof-protocol.md §3.2.3). */
    NAMESPACE_IDENTIFICATION_DESCRIPTORS(0x03),
    /** I/O Command Set specific Identify Namespace data structure, for the CSI in CDW11. */
    IO_COMMAND_SET_NAMESPACE(0x05),
    /** I/O Command Set specific Identify Controller data structure, for the CSI in CDW11 (nvmeof-protocol.md §3.2.4). */
    IO_COMMAND_SET_CONTROLLER(0x06),
    /** Active Namespace ID list of the I/O command set in CDW11's CSI. */
    IO_COMMAND_SET_ACTIVE_NAMESPACE_LIST(0x07),
    /** I/O Command Set Independent Identify Namespace data structure. */
    IO_COMMAND_SET_INDEPENDENT_NAMESPACE(0x08),
    /** Identify I/O Command Set data structure: the command set combinations the controller supports. */
    IO_COMMAND_SET(0x1C);

    private static final IdentifyCns[] BY_CODE = new IdentifyCns[256];

    static {
        for (IdentifyCns c : values()) {
            BY_CODE[c.code] = c;
        }
    }

    private final int code;

    IdentifyCns(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The CNS for {@code code} (its low 8 bits), or null if it is not one of these. Allocation-free. */
    public static IdentifyCns of(int code) {
        return BY_CODE[code & 0xFF];
    }
}

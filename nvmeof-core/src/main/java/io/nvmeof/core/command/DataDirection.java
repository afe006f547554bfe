package io.nvmeof.core.command;

/** The data transfer direction of a command, from bits 1:0 of its opcode (or FCTYPE for fabrics), nvmeof-protocol.md §1.1. */
public enum DataDirection {
    NONE,
    HOST_TO_CONTROLLER,
    CONTROLLER_TO_HOST,
    BIDIRECTIONAL;

    private static final DataDirection[] BY_BITS = values();

    /** The direction of an opcode (admin or I/O) or of a fabrics command type. */
    public static DataDirection of(int opcodeOrFctype) {
        return BY_BITS[opcodeOrFctype & 0x3];
    }
}

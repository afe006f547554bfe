package io.nvmeof.core.command;

/** Fabrics command types, byte 4 of a command with opcode 0x7F (nvmeof-protocol.md §2.1). */
public enum FabricsCommandType {
    PROPERTY_SET(0x00),
    CONNECT(0x01),
    PROPERTY_GET(0x04),
    AUTHENTICATION_SEND(0x05),
    AUTHENTICATION_RECEIVE(0x06),
    DISCONNECT(0x08);

    /** The opcode shared by all fabrics commands. */
    public static final int OPCODE = 0x7F;

    private static final FabricsCommandType[] BY_CODE = new FabricsCommandType[256];

    static {
        for (FabricsCommandType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;

    FabricsCommandType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public DataDirection direction() {
        return DataDirection.of(code);
    }

    /** The type for {@code code}, or null if it is not one of these. Allocation-free. */
    public static FabricsCommandType of(int code) {
        return BY_CODE[code & 0xFF];
    }
}

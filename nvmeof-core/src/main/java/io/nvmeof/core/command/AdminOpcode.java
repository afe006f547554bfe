package io.nvmeof.core.command;

/** Admin command opcodes that matter on a fabrics controller (nvmeof-protocol.md §3.1). */
public enum AdminOpcode {
    DELETE_IO_SQ(0x00),
    CREATE_IO_SQ(0x01),
    GET_LOG_PAGE(0x02),
    DELETE_IO_CQ(0x04),
    CREATE_IO_CQ(0x05),
    IDENTIFY(0x06),
    ABORT(0x08),
    SET_FEATURES(0x09),
    GET_FEATURES(0x0A),
    ASYNC_EVENT_REQUEST(0x0C),
    KEEP_ALIVE(0x18),
    FABRICS(0x7F);

    private static final AdminOpcode[] BY_CODE = new AdminOpcode[256];

    static {
        for (AdminOpcode op : values()) {
            BY_CODE[op.code] = op;
        }
    }

    private final int code;

    AdminOpcode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public DataDirection direction() {
        return DataDirection.of(code);
    }

    /** The opcode for {@code code}, or null if it is not one of these. Allocation-free. */
    public static AdminOpcode of(int code) {
        return BY_CODE[code & 0xFF];
    }
}

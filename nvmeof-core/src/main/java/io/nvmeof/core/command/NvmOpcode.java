package io.nvmeof.core.command;

/** NVM command set I/O opcodes (nvmeof-protocol.md §4.1). */
public enum NvmOpcode {
    FLUSH(0x00),
    WRITE(0x01),
    READ(0x02),
    WRITE_UNCORRECTABLE(0x04),
    COMPARE(0x05),
    WRITE_ZEROES(0x08),
    DATASET_MANAGEMENT(0x09),
    VERIFY(0x0C),
    COPY(0x19),
    /** Reservation Register, Report, Acquire, Release (NVMe Base 2.0, Reservations, §8.19). */
    RESERVATION_REGISTER(0x0D),
    RESERVATION_REPORT(0x0E),
    RESERVATION_ACQUIRE(0x11),
    RESERVATION_RELEASE(0x15),
    FABRICS(0x7F);

    private static final NvmOpcode[] BY_CODE = new NvmOpcode[256];

    static {
        for (NvmOpcode op : values()) {
            BY_CODE[op.code] = op;
        }
    }

    private final int code;

    NvmOpcode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public DataDirection direction() {
        return DataDirection.of(code);
    }

    /** The opcode for {@code code}, or null if it is not one of these. Allocation-free. */
    public static NvmOpcode of(int code) {
        return BY_CODE[code & 0xFF];
    }
}

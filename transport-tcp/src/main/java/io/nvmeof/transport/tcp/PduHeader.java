package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;

/**
 * The 8-byte NVMe/TCP common header (CH) that starts every PDU (nvmeof-protocol.md §5.2), and the base of the PDU
 * flyweights.
 *
 * <pre>
 *  byte 0      1       2      3      4                  8
 *       +------+-------+------+------+------------------+----------------------------
 *       | TYPE | FLAGS | HLEN | PDO  | PLEN (u32 LE)    | PDU-specific header (HLEN - 8)
 *       +------+-------+------+------+------------------+----------------------------
 *  FLAGS: bit 0 HDGSTF, bit 1 DDGSTF, bit 2 LAST_PDU, bit 3 SUCCESS (nvmeof-protocol.md §5.2)
 * </pre>
 * A PDU on the wire is {@code [CH + PSH (HLEN)] [HDGST 4] [PAD to PDO] [DATA] [DDGST 4]} (nvmeof-protocol.md §5.2).
 *
 * <p>Like the core's flyweights, a PDU flyweight owns no memory and never allocates: {@link #wrap} remembers a
 * {@link ByteBuf} and an offset, and every accessor uses absolute little-endian gets and sets (nvmeof-protocol.md §0), so the buffer's
 * reader and writer indexes are never touched. The flyweight is valid only as long as the buffer's owner says so.
 * Shared by the controller and the host side.
 */
public class PduHeader {
    /** Size of the common header (nvmeof-protocol.md §5.2). */
    public static final int LENGTH = 8;

    public static final int TYPE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int HLEN_OFFSET = 2;
    public static final int PDO_OFFSET = 3;
    public static final int PLEN_OFFSET = 4;

    // PDU types (nvmeof-protocol.md §5.3).
    public static final int TYPE_IC_REQ = 0x00;
    public static final int TYPE_IC_RESP = 0x01;
    public static final int TYPE_H2C_TERM_REQ = 0x02;
    public static final int TYPE_C2H_TERM_REQ = 0x03;
    public static final int TYPE_CAPSULE_CMD = 0x04;
    public static final int TYPE_CAPSULE_RESP = 0x05;
    public static final int TYPE_H2C_DATA = 0x06;
    public static final int TYPE_C2H_DATA = 0x07;
    public static final int TYPE_R2T = 0x09;

    // FLAGS bits (nvmeof-protocol.md §5.2).
    public static final int FLAG_HDGSTF = 0x01;
    public static final int FLAG_DDGSTF = 0x02;
    public static final int FLAG_LAST_PDU = 0x04;
    public static final int FLAG_SUCCESS = 0x08;

    /** HDGST and DDGST are 4-byte little-endian CRC32C values (nvmeof-protocol.md §5.8). */
    public static final int DIGEST_LENGTH = 4;

    protected ByteBuf buffer;
    protected int offset;

    /** Points this flyweight at the PDU starting at absolute index {@code offset} of {@code buffer}. */
    public PduHeader wrap(ByteBuf buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public ByteBuf buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    public int type() {
        return buffer.getUnsignedByte(offset + TYPE_OFFSET);
    }

    public int flags() {
        return buffer.getUnsignedByte(offset + FLAGS_OFFSET);
    }

    public PduHeader flags(int flags) {
        buffer.setByte(offset + FLAGS_OFFSET, flags);
        return this;
    }

    public boolean hasFlag(int flag) {
        return (flags() & flag) != 0;
    }

    public int hlen() {
        return buffer.getUnsignedByte(offset + HLEN_OFFSET);
    }

    public int pdo() {
        return buffer.getUnsignedByte(offset + PDO_OFFSET);
    }

    /** PLEN, unsigned 32 bits in a long. */
    public long plen() {
        return buffer.getUnsignedIntLE(offset + PLEN_OFFSET);
    }

    /** Writes the whole common header. */
    public PduHeader header(int type, int flags, int hlen, int pdo, int plen) {
        buffer.setByte(offset + TYPE_OFFSET, type);
        buffer.setByte(offset + FLAGS_OFFSET, flags);
        buffer.setByte(offset + HLEN_OFFSET, hlen);
        buffer.setByte(offset + PDO_OFFSET, pdo);
        buffer.setIntLE(offset + PLEN_OFFSET, plen);
        return this;
    }

    /** Zeroes {@code length} bytes from the start of the PDU (reserved fields are sent as zero, nvmeof-protocol.md §0). */
    protected final void zero(int length) {
        buffer.setZero(offset, length);
    }

    /** A readable name for a PDU type, for logs. */
    public static String typeName(int type) {
        switch (type) {
            case TYPE_IC_REQ:
                return "ICReq";
            case TYPE_IC_RESP:
                return "ICResp";
            case TYPE_H2C_TERM_REQ:
                return "H2CTermReq";
            case TYPE_C2H_TERM_REQ:
                return "C2HTermReq";
            case TYPE_CAPSULE_CMD:
                return "CapsuleCmd";
            case TYPE_CAPSULE_RESP:
                return "CapsuleResp";
            case TYPE_H2C_DATA:
                return "H2CData";
            case TYPE_C2H_DATA:
                return "C2HData";
            case TYPE_R2T:
                return "R2T";
            default:
                return String.format("unknown(0x%02x)", type);
        }
    }
}

package io.nvmeof.transport.tcp;

/**
 * ICReq, the host's first PDU on a connection (nvmeof-protocol.md §5.4). 128 bytes, no digests, no data.
 *
 * <pre>
 *  byte 0          8      10     11     12              16            128
 *       +----------+------+------+------+---------------+-------------+
 *       | CH       | PFV  | HPDA | DGST | MAXR2T        | reserved    |
 *       | 00 00 80 00 80 00 00 00      (u16) (u8) (u8)  (u32, 0's based)
 *       +----------+------+------+------+---------------+-------------+
 *  DGST: bit 0 header digest wanted, bit 1 data digest wanted
 * </pre>
 */
public final class IcReqPdu extends PduHeader {
    /** HLEN = PLEN = 128 (nvmeof-protocol.md §5.4). */
    public static final int LENGTH = 128;

    public static final int PFV_OFFSET = 8;
    public static final int HPDA_OFFSET = 10;
    public static final int DGST_OFFSET = 11;
    public static final int MAXR2T_OFFSET = 12;

    /** DGST bit 0: header digest (nvmeof-protocol.md §5.4). */
    public static final int DGST_HEADER = 0x01;
    /** DGST bit 1: data digest (nvmeof-protocol.md §5.4). */
    public static final int DGST_DATA = 0x02;

    @Override
    public IcReqPdu wrap(io.netty.buffer.ByteBuf buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public int pfv() {
        return buffer.getUnsignedShortLE(offset + PFV_OFFSET);
    }

    /** HPDA, 0's based in dwords (nvmeof-protocol.md §5.9). */
    public int hpda() {
        return buffer.getUnsignedByte(offset + HPDA_OFFSET);
    }

    public int dgst() {
        return buffer.getUnsignedByte(offset + DGST_OFFSET);
    }

    /** MAXR2T, 0's based (nvmeof-protocol.md §5.4). */
    public long maxR2t() {
        return buffer.getUnsignedIntLE(offset + MAXR2T_OFFSET);
    }

    /** Writes a whole ICReq (128 bytes, reserved bytes zeroed). */
    public IcReqPdu set(int pfv, int hpda, int dgst, int maxR2t) {
        zero(LENGTH);
        header(TYPE_IC_REQ, 0, LENGTH, 0, LENGTH);
        buffer.setShortLE(offset + PFV_OFFSET, pfv);
        buffer.setByte(offset + HPDA_OFFSET, hpda);
        buffer.setByte(offset + DGST_OFFSET, dgst);
        buffer.setIntLE(offset + MAXR2T_OFFSET, maxR2t);
        return this;
    }
}

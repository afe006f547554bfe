package io.nvmeof.transport.tcp;

/**
 * ICResp, the controller's answer to ICReq (nvmeof-protocol.md §5.4). 128 bytes, no digests, no data.
 *
 * <pre>
 *  byte 0          8      10     11     12              16            128
 *       +----------+------+------+------+---------------+-------------+
 *       | CH       | PFV  | CPDA | DGST | MAXH2CDATA    | reserved    |
 *       | 01 00 80 00 80 00 00 00      (u16) (u8) (u8)  (u32 bytes)
 *       +----------+------+------+------+---------------+-------------+
 *  DGST: the digests enabled, bit 0 header, bit 1 data
 * </pre>
 */
public final class IcRespPdu extends PduHeader {
    /** HLEN = PLEN = 128 (nvmeof-protocol.md §5.4). */
    public static final int LENGTH = 128;

    public static final int PFV_OFFSET = 8;
    public static final int CPDA_OFFSET = 10;
    public static final int DGST_OFFSET = 11;
    public static final int MAXH2CDATA_OFFSET = 12;
    /** The Linux host rejects MAXH2CDATA below 4096 or not a multiple of 4 (nvmeof-protocol.md §5.4, §8). */
    public static final int MIN_MAXH2CDATA = 4096;

    @Override
    public IcRespPdu wrap(io.netty.buffer.ByteBuf buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public int pfv() {
        return buffer.getUnsignedShortLE(offset + PFV_OFFSET);
    }

    /** CPDA, 0's based in dwords (nvmeof-protocol.md §5.9). */
    public int cpda() {
        return buffer.getUnsignedByte(offset + CPDA_OFFSET);
    }

    public int dgst() {
        return buffer.getUnsignedByte(offset + DGST_OFFSET);
    }

    public long maxH2cData() {
        return buffer.getUnsignedIntLE(offset + MAXH2CDATA_OFFSET);
    }

    /** Writes a whole ICResp (128 bytes, reserved bytes zeroed). */
    public IcRespPdu set(int pfv, int cpda, int dgst, int maxH2cData) {
        zero(LENGTH);
        header(TYPE_IC_RESP, 0, LENGTH, 0, LENGTH);
        buffer.setShortLE(offset + PFV_OFFSET, pfv);
        buffer.setByte(offset + CPDA_OFFSET, cpda);
        buffer.setByte(offset + DGST_OFFSET, dgst);
        buffer.setIntLE(offset + MAXH2CDATA_OFFSET, maxH2cData);
        return this;
    }
}

package io.nvmeof.transport.tcp;

/**
 * H2CData: command data, host to controller, answering an R2T (nvmeof-protocol.md §5.6).
 *
 * <pre>
 *  byte 0          8       10      12        16        20         24       28
 *       +----------+-------+-------+---------+---------+----------+--------+-----+------+-------+
 *       | CH       | CCCID | TTAG  | DATAO   | DATAL   | reserved | HDGST? | PAD | DATA | DDGST?|
 *       | 06 fl 18 pdo plen (u16)  (u32)     (u32)                |        |     |      |       |
 *       +----------+-------+-------+---------+---------+----------+--------+-----+------+-------+
 *  HLEN 24; FLAGS LAST_PDU on the last PDU answering an R2T; PLEN = PDO + DATAL (+4 with DDGST)
 * </pre>
 */
public final class H2cDataPdu extends PduHeader {
    /** HLEN of H2CData, C2HData and R2T (nvmeof-protocol.md §5.6). */
    public static final int HLEN = 24;

    public static final int CCCID_OFFSET = 8;
    public static final int TTAG_OFFSET = 10;
    public static final int DATAO_OFFSET = 12;
    public static final int DATAL_OFFSET = 16;

    @Override
    public H2cDataPdu wrap(io.netty.buffer.ByteBuf buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public int cccid() {
        return buffer.getUnsignedShortLE(offset + CCCID_OFFSET);
    }

    public int ttag() {
        return buffer.getUnsignedShortLE(offset + TTAG_OFFSET);
    }

    public long datao() {
        return buffer.getUnsignedIntLE(offset + DATAO_OFFSET);
    }

    public long datal() {
        return buffer.getUnsignedIntLE(offset + DATAL_OFFSET);
    }

    /** Writes the 24-byte header of an H2CData PDU carrying {@code datal} bytes with no padding (nvmeof-protocol.md §5.6, §5.9). */
    public H2cDataPdu set(
            boolean headerDigest, boolean dataDigest, boolean last, int cccid, int ttag, int datao, int datal) {
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        int dd = dataDigest ? DIGEST_LENGTH : 0;
        int flags = (headerDigest ? FLAG_HDGSTF : 0) | (dataDigest ? FLAG_DDGSTF : 0) | (last ? FLAG_LAST_PDU : 0);
        header(TYPE_H2C_DATA, flags, HLEN, HLEN + hd, HLEN + hd + datal + dd);
        buffer.setShortLE(offset + CCCID_OFFSET, cccid);
        buffer.setShortLE(offset + TTAG_OFFSET, ttag);
        buffer.setIntLE(offset + DATAO_OFFSET, datao);
        buffer.setIntLE(offset + DATAL_OFFSET, datal);
        buffer.setIntLE(offset + 20, 0);
        return this;
    }
}

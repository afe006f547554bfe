package io.nvmeof.transport.tcp;

/**
 * C2HData: command data, controller to host (nvmeof-protocol.md §5.6, rules in nvmeof-protocol.md §5.10).
 *
 * <pre>
 *  byte 0          8       10        12        16        20         24       28
 *       +----------+-------+---------+---------+---------+----------+--------+-----+------+-------+
 *       | CH       | CCCID | reserved| DATAO   | DATAL   | reserved | HDGST? | PAD | DATA | DDGST?|
 *       | 07 fl 18 pdo plen (u16)    (u32)     (u32)                |        |     |      |       |
 *       +----------+-------+---------+---------+---------+----------+--------+-----+------+-------+
 *  HLEN 24; FLAGS LAST_PDU on the command's last C2HData, SUCCESS (only with LAST_PDU) = no CapsuleResp follows
 * </pre>
 */
public final class C2hDataPdu extends PduHeader {
    public static final int HLEN = 24;
    public static final int CCCID_OFFSET = 8;
    public static final int DATAO_OFFSET = 12;
    public static final int DATAL_OFFSET = 16;

    @Override
    public C2hDataPdu wrap(io.netty.buffer.ByteBuf buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public int cccid() {
        return buffer.getUnsignedShortLE(offset + CCCID_OFFSET);
    }

    public long datao() {
        return buffer.getUnsignedIntLE(offset + DATAO_OFFSET);
    }

    public long datal() {
        return buffer.getUnsignedIntLE(offset + DATAL_OFFSET);
    }

    /**
     * Writes the 24-byte header of a C2HData PDU with no padding (HPDA 0, nvmeof-protocol.md §5.9). {@code extraFlags} may hold
     * {@link #FLAG_LAST_PDU} and {@link #FLAG_SUCCESS}.
     */
    public C2hDataPdu set(boolean headerDigest, boolean dataDigest, int extraFlags, int cccid, int datao, int datal) {
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        int dd = dataDigest ? DIGEST_LENGTH : 0;
        int flags = (headerDigest ? FLAG_HDGSTF : 0) | (dataDigest ? FLAG_DDGSTF : 0) | extraFlags;
        header(TYPE_C2H_DATA, flags, HLEN, HLEN + hd, HLEN + hd + datal + dd);
        buffer.setShortLE(offset + CCCID_OFFSET, cccid);
        buffer.setShortLE(offset + 10, 0);
        buffer.setIntLE(offset + DATAO_OFFSET, datao);
        buffer.setIntLE(offset + DATAL_OFFSET, datal);
        buffer.setIntLE(offset + 20, 0);
        return this;
    }
}

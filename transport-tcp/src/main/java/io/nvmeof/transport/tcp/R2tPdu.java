package io.nvmeof.transport.tcp;

/**
 * R2T: ready to transfer, the controller asks for a range of a command's data (nvmeof-protocol.md §5.6, §5.10).
 *
 * <pre>
 *  byte 0          8       10      12        16        20         24       28
 *       +----------+-------+-------+---------+---------+----------+--------+
 *       | CH       | CCCID | TTAG  | R2TO    | R2TL    | reserved | HDGST? |
 *       | 09 fl 18 00 plen (u16)   (u32)     (u32)                |        |
 *       +----------+-------+-------+---------+---------+----------+--------+
 *  HLEN 24, PDO 0, PLEN 24 (28 with HDGST)
 * </pre>
 */
public final class R2tPdu extends PduHeader {
    public static final int HLEN = 24;
    public static final int CCCID_OFFSET = 8;
    public static final int TTAG_OFFSET = 10;
    public static final int R2TO_OFFSET = 12;
    public static final int R2TL_OFFSET = 16;

    @Override
    public R2tPdu wrap(io.netty.buffer.ByteBuf buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public int cccid() {
        return buffer.getUnsignedShortLE(offset + CCCID_OFFSET);
    }

    public int ttag() {
        return buffer.getUnsignedShortLE(offset + TTAG_OFFSET);
    }

    public long r2to() {
        return buffer.getUnsignedIntLE(offset + R2TO_OFFSET);
    }

    public long r2tl() {
        return buffer.getUnsignedIntLE(offset + R2TL_OFFSET);
    }

    /** Writes the whole 24-byte R2T header. */
    public R2tPdu set(boolean headerDigest, int cccid, int ttag, int r2to, int r2tl) {
        header(TYPE_R2T, headerDigest ? FLAG_HDGSTF : 0, HLEN, 0, HLEN + (headerDigest ? DIGEST_LENGTH : 0));
        buffer.setShortLE(offset + CCCID_OFFSET, cccid);
        buffer.setShortLE(offset + TTAG_OFFSET, ttag);
        buffer.setIntLE(offset + R2TO_OFFSET, r2to);
        buffer.setIntLE(offset + R2TL_OFFSET, r2tl);
        buffer.setIntLE(offset + 20, 0);
        return this;
    }
}

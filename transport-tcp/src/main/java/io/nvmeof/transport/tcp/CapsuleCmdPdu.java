package io.nvmeof.transport.tcp;

/**
 * CapsuleCmd: a command capsule, host to controller (nvmeof-protocol.md §5.5).
 *
 * <pre>
 *  byte 0          8                                 72       76
 *       +----------+---------------------------------+--------+-----+------------------+-------+
 *       | CH       | SQE (64 bytes, nvmeof-protocol.md §1.1)            | HDGST? | PAD | in-capsule data  | DDGST?|
 *       | 04 fl 48 pdo plen                          |        |     | (SGL 0x01)       |       |
 *       +----------+---------------------------------+--------+-----+------------------+-------+
 *  HLEN 72; PDO 0 without data, else 72 (+4 with HDGST); PLEN = PDO + L (+4 with DDGST)
 * </pre>
 */
public final class CapsuleCmdPdu extends PduHeader {
    /** HLEN of a CapsuleCmd: CH + 64-byte SQE (nvmeof-protocol.md §5.5). */
    public static final int HLEN = 72;

    public static final int SQE_OFFSET = 8;

    @Override
    public CapsuleCmdPdu wrap(io.netty.buffer.ByteBuf buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    /** Absolute index of the SQE in the buffer. */
    public int sqeIndex() {
        return offset + SQE_OFFSET;
    }

    /**
     * Writes the common header of a capsule with {@code dataLength} in-capsule bytes and no padding (nvmeof-protocol.md §5.5, §5.9);
     * the caller writes the SQE at {@link #sqeIndex()}.
     */
    public CapsuleCmdPdu set(boolean headerDigest, boolean dataDigest, int dataLength) {
        int hd = headerDigest ? DIGEST_LENGTH : 0;
        if (dataLength == 0) {
            header(TYPE_CAPSULE_CMD, headerDigest ? FLAG_HDGSTF : 0, HLEN, 0, HLEN + hd);
        } else {
            int dd = dataDigest ? DIGEST_LENGTH : 0;
            int flags = (headerDigest ? FLAG_HDGSTF : 0) | (dataDigest ? FLAG_DDGSTF : 0);
            header(TYPE_CAPSULE_CMD, flags, HLEN, HLEN + hd, HLEN + hd + dataLength + dd);
        }
        return this;
    }
}

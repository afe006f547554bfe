package io.nvmeof.transport.tcp;

/**
 * CapsuleResp: a response capsule, controller to host (nvmeof-protocol.md §5.5).
 *
 * <pre>
 *  byte 0          8                       24       28
 *       +----------+-----------------------+--------+
 *       | CH       | CQE (16 bytes, nvmeof-protocol.md §1.2)  | HDGST? |
 *       | 05 fl 18 00 plen                 |        |
 *       +----------+-----------------------+--------+
 *  HLEN 24, PDO 0, PLEN 24 (28 with HDGST); never data
 * </pre>
 */
public final class CapsuleRespPdu extends PduHeader {
    /** HLEN of a CapsuleResp: CH + 16-byte CQE (nvmeof-protocol.md §5.5). */
    public static final int HLEN = 24;

    public static final int CQE_OFFSET = 8;

    @Override
    public CapsuleRespPdu wrap(io.netty.buffer.ByteBuf buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    /** Absolute index of the CQE in the buffer. */
    public int cqeIndex() {
        return offset + CQE_OFFSET;
    }

    /** Writes the common header; the caller writes the CQE at {@link #cqeIndex()}. */
    public CapsuleRespPdu set(boolean headerDigest) {
        header(TYPE_CAPSULE_RESP, headerDigest ? FLAG_HDGSTF : 0, HLEN, 0, HLEN + (headerDigest ? DIGEST_LENGTH : 0));
        return this;
    }

    public int cid() {
        return buffer.getUnsignedShortLE(offset + CQE_OFFSET + 12);
    }

    /** The CQE status field as on the wire (nvmeof-protocol.md §1.2). */
    public int status() {
        return buffer.getUnsignedShortLE(offset + CQE_OFFSET + 14);
    }
}

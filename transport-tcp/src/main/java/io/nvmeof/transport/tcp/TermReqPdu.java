package io.nvmeof.transport.tcp;

/**
 * H2CTermReq (0x02) and C2HTermReq (0x03): a fatal transport error; the sender closes the connection after it
 * (nvmeof-protocol.md §5.7).
 *
 * <pre>
 *  byte 0          8       10              14                  24
 *       +----------+-------+---------------+-------------------+--------------------------------+
 *       | CH       | FES   | FEI           | reserved          | offending PDU header (≤ 128 B) |
 *       | 03 00 18 00 plen (u16) (u32)     |                   |                                |
 *       +----------+-------+---------------+-------------------+--------------------------------+
 *  HLEN 24, PDO 0, PLEN = 24 + copied header length (24..152), never digests
 * </pre>
 */
public final class TermReqPdu extends PduHeader {
    public static final int HLEN = 24;
    public static final int FES_OFFSET = 8;
    public static final int FEI_OFFSET = 10;
    /** At most 128 bytes of the offending header follow, so PLEN ≤ 152 (nvmeof-protocol.md §5.7, §8). */
    public static final int MAX_COPIED_HEADER = 128;

    public static final int MAX_PLEN = HLEN + MAX_COPIED_HEADER;

    // Fatal error status values (nvmeof-protocol.md §5.7).
    /** FEI = byte offset of the bad field. */
    public static final int FES_INVALID_HEADER_FIELD = 0x01;

    public static final int FES_PDU_SEQUENCE_ERROR = 0x02;
    /** FEI = the digest value received. */
    public static final int FES_HEADER_DIGEST_ERROR = 0x03;

    public static final int FES_DATA_OUT_OF_RANGE = 0x04;
    public static final int FES_DATA_LIMIT_EXCEEDED = 0x05;
    /** FEI = byte offset of the unsupported field. */
    public static final int FES_UNSUPPORTED_PARAMETER = 0x06;

    @Override
    public TermReqPdu wrap(io.netty.buffer.ByteBuf buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public int fes() {
        return buffer.getUnsignedShortLE(offset + FES_OFFSET);
    }

    public int fei() {
        return buffer.getIntLE(offset + FEI_OFFSET);
    }

    /** Writes the 24-byte header; the caller copies {@code copiedHeaderLength} bytes after it. */
    public TermReqPdu set(int type, int fes, int fei, int copiedHeaderLength) {
        if (copiedHeaderLength < 0 || copiedHeaderLength > MAX_COPIED_HEADER) {
            throw new IllegalArgumentException("a TermReq carries at most 128 header bytes: " + copiedHeaderLength);
        }
        zero(HLEN);
        header(type, 0, HLEN, 0, HLEN + copiedHeaderLength);
        buffer.setShortLE(offset + FES_OFFSET, fes);
        buffer.setIntLE(offset + FEI_OFFSET, fei);
        return this;
    }

    public static String fesName(int fes) {
        switch (fes) {
            case FES_INVALID_HEADER_FIELD:
                return "Invalid PDU Header Field";
            case FES_PDU_SEQUENCE_ERROR:
                return "PDU Sequence Error";
            case FES_HEADER_DIGEST_ERROR:
                return "Header Digest Error";
            case FES_DATA_OUT_OF_RANGE:
                return "Data Transfer Out of Range";
            case FES_DATA_LIMIT_EXCEEDED:
                return "Data Transfer Limit Exceeded";
            case FES_UNSUPPORTED_PARAMETER:
                return "Unsupported Parameter";
            default:
                return String.format("FES 0x%x", fes);
        }
    }
}

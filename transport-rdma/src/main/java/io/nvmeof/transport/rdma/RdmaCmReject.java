package io.nvmeof.transport.rdma;

import io.nvmeof.core.wire.Flyweight;

/**
 * The NVMe/RDMA CM reject private data, target → host, 4 bytes, with reject reason "consumer defined" (protocol
 * reference nvmeof-protocol.md §6.1).
 *
 * <pre>
 *  byte 0        2        4
 *       +--------+--------+
 *       | RECFMT |  STS   |
 *       +--------+--------+
 * </pre>
 */
public final class RdmaCmReject extends Flyweight {
    public static final int LENGTH = 4;
    public static final int RECFMT_OFFSET = 0;
    public static final int STS_OFFSET = 2;

    // STS values (nvmeof-protocol.md §6.1, Linux nvme-rdma.h NVME_RDMA_CM_*).
    public static final int STS_INVALID_LEN = 0x01;
    public static final int STS_INVALID_RECFMT = 0x02;
    public static final int STS_INVALID_QID = 0x03;
    public static final int STS_INVALID_HSQSIZE = 0x04;
    public static final int STS_INVALID_HRQSIZE = 0x05;
    public static final int STS_NO_RSC = 0x06;
    public static final int STS_INVALID_IRD = 0x07;
    public static final int STS_INVALID_ORD = 0x08;
    public static final int STS_INVALID_CNTLID = 0x09;

    @Override
    public int length() {
        return LENGTH;
    }

    public int recfmt() {
        return u16(RECFMT_OFFSET);
    }

    public int sts() {
        return u16(STS_OFFSET);
    }

    public RdmaCmReject set(int sts) {
        u16(RECFMT_OFFSET, 0);
        u16(STS_OFFSET, sts);
        return this;
    }

    /** A name for logs and exception messages. */
    public static String stsName(int sts) {
        switch (sts) {
            case STS_INVALID_LEN:
                return "invalid private data length";
            case STS_INVALID_RECFMT:
                return "invalid RECFMT";
            case STS_INVALID_QID:
                return "invalid QID";
            case STS_INVALID_HSQSIZE:
                return "invalid HSQSIZE";
            case STS_INVALID_HRQSIZE:
                return "invalid HRQSIZE";
            case STS_NO_RSC:
                return "no resources";
            case STS_INVALID_IRD:
                return "invalid IRD";
            case STS_INVALID_ORD:
                return "invalid ORD";
            case STS_INVALID_CNTLID:
                return "invalid CNTLID";
            default:
                return "unknown status";
        }
    }
}

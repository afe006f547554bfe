package io.nvmeof.transport.rdma;

import io.nvmeof.core.wire.Flyweight;

/**
 * The NVMe/RDMA CM connect request private data, host → target, 32 bytes (nvmeof-protocol.md §6.1).
 *
 * <pre>
 *  byte 0        2       4         6         8        10            32
 *       +--------+-------+---------+---------+--------+--- ... -----+
 *       | RECFMT |  QID  | HRQSIZE | HSQSIZE | CNTLID |  reserved   |
 *       +--------+-------+---------+---------+--------+--- ... -----+
 * </pre>
 * HRQSIZE: receive buffers the host posts (its queue size); HSQSIZE: the host's send queue size, 0's based (= the
 * SQSIZE of Connect); CNTLID: 0 on the admin queue, the admin Connect's CNTLID on I/O queues.
 */
public final class RdmaCmRequest extends Flyweight {
    public static final int LENGTH = 32;
    public static final int RECFMT_OFFSET = 0;
    public static final int QID_OFFSET = 2;
    public static final int HRQSIZE_OFFSET = 4;
    public static final int HSQSIZE_OFFSET = 6;
    public static final int CNTLID_OFFSET = 8;

    @Override
    public int length() {
        return LENGTH;
    }

    public int recfmt() {
        return u16(RECFMT_OFFSET);
    }

    public int qid() {
        return u16(QID_OFFSET);
    }

    public int hrqsize() {
        return u16(HRQSIZE_OFFSET);
    }

    public int hsqsize() {
        return u16(HSQSIZE_OFFSET);
    }

    public int cntlid() {
        return u16(CNTLID_OFFSET);
    }

    /** Writes all 32 bytes: RECFMT 0, the fields, reserved zero. */
    public RdmaCmRequest set(int qid, int hrqsize, int hsqsize, int cntlid) {
        clear();
        u16(RECFMT_OFFSET, 0);
        u16(QID_OFFSET, qid);
        u16(HRQSIZE_OFFSET, hrqsize);
        u16(HSQSIZE_OFFSET, hsqsize);
        u16(CNTLID_OFFSET, cntlid);
        return this;
    }

    public RdmaCmRequest recfmt(int recfmt) {
        u16(RECFMT_OFFSET, recfmt);
        return this;
    }
}

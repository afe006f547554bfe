package io.nvmeof.transport.rdma;

import io.nvmeof.core.wire.Flyweight;

/**
 * The NVMe/RDMA CM accept private data, target → host, 32 bytes (nvmeof-protocol.md §6.1).
 *
 * <pre>
 *  byte 0        2         4                    32
 *       +--------+---------+------- ... --------+
 *       | RECFMT | CRQSIZE |      reserved      |
 *       +--------+---------+------- ... --------+
 * </pre>
 * CRQSIZE: receive buffers the controller posted (nvmet: HSQSIZE + 1). The Linux host ignores it.
 */
public final class RdmaCmAccept extends Flyweight {
    public static final int LENGTH = 32;
    public static final int RECFMT_OFFSET = 0;
    public static final int CRQSIZE_OFFSET = 2;

    @Override
    public int length() {
        return LENGTH;
    }

    public int recfmt() {
        return u16(RECFMT_OFFSET);
    }

    public int crqsize() {
        return u16(CRQSIZE_OFFSET);
    }

    /** Writes all 32 bytes: RECFMT 0, CRQSIZE, reserved zero. */
    public RdmaCmAccept set(int crqsize) {
        clear();
        u16(CRQSIZE_OFFSET, crqsize);
        return this;
    }
}

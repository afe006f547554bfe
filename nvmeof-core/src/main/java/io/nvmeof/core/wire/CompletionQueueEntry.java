package io.nvmeof.core.wire;

import io.nvmeof.core.command.Status;

/**
 * The 16-byte Completion Queue Entry, the NVMe response (nvmeof-protocol.md §1.2).
 *
 * <pre>
 *  0            4            8       10      12      14
 *  +------------+------------+-------+-------+-------+--------+
 *  | DW0        | DW1        | SQHD  | SQID  | CID   | STATUS |
 *  +------------+------------+-------+-------+-------+--------+
 * </pre>
 * STATUS is kept as the 16-bit wire value, phase bit 0 included; see {@link Status}.
 */
public final class CompletionQueueEntry extends Flyweight {
    public static final int LENGTH = 16;
    public static final int DW0_OFFSET = 0;
    public static final int DW1_OFFSET = 4;
    public static final int SQHD_OFFSET = 8;
    public static final int SQID_OFFSET = 10;
    public static final int CID_OFFSET = 12;
    public static final int STATUS_OFFSET = 14;

    @Override
    public int length() {
        return LENGTH;
    }

    public int dw0() {
        return u32(DW0_OFFSET);
    }

    public CompletionQueueEntry dw0(int value) {
        u32(DW0_OFFSET, value);
        return this;
    }

    public int dw1() {
        return u32(DW1_OFFSET);
    }

    public CompletionQueueEntry dw1(int value) {
        u32(DW1_OFFSET, value);
        return this;
    }

    /** DW0 and DW1 as one 64-bit value (Property Get of an 8-byte property, nvmeof-protocol.md §2.3). */
    public long result64() {
        return u64(DW0_OFFSET);
    }

    public CompletionQueueEntry result64(long value) {
        u64(DW0_OFFSET, value);
        return this;
    }

    public int sqhd() {
        return u16(SQHD_OFFSET);
    }

    public CompletionQueueEntry sqhd(int value) {
        u16(SQHD_OFFSET, value);
        return this;
    }

    public int sqid() {
        return u16(SQID_OFFSET);
    }

    public CompletionQueueEntry sqid(int value) {
        u16(SQID_OFFSET, value);
        return this;
    }

    public int cid() {
        return u16(CID_OFFSET);
    }

    public CompletionQueueEntry cid(int value) {
        u16(CID_OFFSET, value);
        return this;
    }

    /** The status field as on the wire (nvmeof-protocol.md §1.2), phase bit included. */
    public int status() {
        return u16(STATUS_OFFSET);
    }

    public CompletionQueueEntry status(int value) {
        u16(STATUS_OFFSET, value);
        return this;
    }

    @Override
    public String toString() {
        return String.format(
                "CQE[cid=%d sqid=%d sqhd=%d dw0=0x%08x dw1=0x%08x status=%s]",
                cid(), sqid(), sqhd(), dw0(), dw1(), Status.toString(status()));
    }
}

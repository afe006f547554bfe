package io.nvmeof.core.wire;

import java.nio.ByteBuffer;

/**
 * The 64-byte Submission Queue Entry, the NVMe command (nvmeof-protocol.md §1.1), with the fabrics fields of nvmeof-protocol.md §2 on top.
 *
 * <pre>
 *  0      1      2      4            8            16           24                      40        44 .. 60
 *  +------+------+------+------------+------------+------------+-----------------------+---------+------
 *  | OPC  |FLAGS | CID  | NSID       | CDW2, CDW3 | MPTR       | DPTR: one SGL (16 B)  | CDW10   | CDW11..CDW15
 *  +------+------+------+------------+------------+------------+-----------------------+---------+------
 * </pre>
 * Fabrics commands (OPC 0x7F) carry FCTYPE in byte 4 and their own fields in bytes 40–63 (nvmeof-protocol.md §2.1); the accessors for
 * Connect (nvmeof-protocol.md §2.2) and Property Get/Set (nvmeof-protocol.md §2.3) are named after the spec fields.
 */
public final class SubmissionQueueEntry extends Flyweight {
    public static final int LENGTH = 64;
    public static final int OPCODE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int CID_OFFSET = 2;
    public static final int NSID_OFFSET = 4;
    public static final int FCTYPE_OFFSET = 4;
    public static final int CDW2_OFFSET = 8;
    public static final int CDW3_OFFSET = 12;
    public static final int MPTR_OFFSET = 16;
    public static final int SGL1_OFFSET = 24;
    public static final int CDW10_OFFSET = 40;
    public static final int CDW11_OFFSET = 44;
    public static final int CDW12_OFFSET = 48;
    public static final int CDW13_OFFSET = 52;
    public static final int CDW14_OFFSET = 56;
    public static final int CDW15_OFFSET = 60;

    /** FLAGS with PSDT = 01 (SGL, MPTR contiguous) and no FUSE: what fabrics requires on every command (nvmeof-protocol.md §1.1). */
    public static final int FLAGS_SGL = 0x40;

    // Connect (nvmeof-protocol.md §2.2).
    public static final int CONNECT_RECFMT_OFFSET = 40;
    public static final int CONNECT_QID_OFFSET = 42;
    public static final int CONNECT_SQSIZE_OFFSET = 44;
    public static final int CONNECT_CATTR_OFFSET = 46;
    public static final int CONNECT_KATO_OFFSET = 48;
    /** CATTR bit 2: the host disables SQ flow control (nvmeof-protocol.md §2.2). */
    public static final int CATTR_DISABLE_SQ_FLOW_CONTROL = 0x04;

    // Property Get/Set (nvmeof-protocol.md §2.3).
    public static final int PROPERTY_ATTRIB_OFFSET = 40;
    public static final int PROPERTY_OFFSET_OFFSET = 44;
    public static final int PROPERTY_VALUE_OFFSET = 48;

    // Authentication Send/Receive (nvmeof-protocol.md §2.5, NVMe Base 2.0 §6.2, §6.3).
    public static final int AUTH_SPSP0_OFFSET = 41;
    public static final int AUTH_SPSP1_OFFSET = 42;
    public static final int AUTH_SECP_OFFSET = 43;
    /** TL (Authentication Send) or AL (Authentication Receive): the payload length in bytes. */
    public static final int AUTH_LENGTH_OFFSET = 44;

    private final SglDescriptor sgl = new SglDescriptor();

    @Override
    public int length() {
        return LENGTH;
    }

    @Override
    public SubmissionQueueEntry wrap(ByteBuffer buffer, int offset) {
        super.wrap(buffer, offset);
        sgl.wrap(buffer, offset + SGL1_OFFSET);
        return this;
    }

    public int opcode() {
        return u8(OPCODE_OFFSET);
    }

    public SubmissionQueueEntry opcode(int opcode) {
        u8(OPCODE_OFFSET, opcode);
        return this;
    }

    public int flags() {
        return u8(FLAGS_OFFSET);
    }

    public SubmissionQueueEntry flags(int flags) {
        u8(FLAGS_OFFSET, flags);
        return this;
    }

    /** FUSE, bits 1:0 of FLAGS. */
    public int fuse() {
        return flags() & 0x3;
    }

    /** PSDT, bits 7:6 of FLAGS. */
    public int psdt() {
        return flags() >>> 6;
    }

    public int cid() {
        return u16(CID_OFFSET);
    }

    public SubmissionQueueEntry cid(int cid) {
        u16(CID_OFFSET, cid);
        return this;
    }

    public int nsid() {
        return u32(NSID_OFFSET);
    }

    public SubmissionQueueEntry nsid(int nsid) {
        u32(NSID_OFFSET, nsid);
        return this;
    }

    /** Fabrics command type, byte 4 of a fabrics command (nvmeof-protocol.md §2.1). */
    public int fctype() {
        return u8(FCTYPE_OFFSET);
    }

    public SubmissionQueueEntry fctype(int fctype) {
        u8(FCTYPE_OFFSET, fctype);
        return this;
    }

    public int cdw2() {
        return u32(CDW2_OFFSET);
    }

    public int cdw3() {
        return u32(CDW3_OFFSET);
    }

    public long mptr() {
        return u64(MPTR_OFFSET);
    }

    /** The data pointer: one SGL descriptor on fabrics (nvmeof-protocol.md §1.1). The returned flyweight is owned by this one. */
    public SglDescriptor sgl() {
        return sgl;
    }

    /** CDW10..CDW15 by number (10..15). */
    public int cdw(int n) {
        if (n < 10 || n > 15) {
            throw new IllegalArgumentException("command dwords 10..15 only: " + n);
        }
        return u32(CDW10_OFFSET + 4 * (n - 10));
    }

    public SubmissionQueueEntry cdw(int n, int value) {
        if (n < 10 || n > 15) {
            throw new IllegalArgumentException("command dwords 10..15 only: " + n);
        }
        u32(CDW10_OFFSET + 4 * (n - 10), value);
        return this;
    }

    public int cdw10() {
        return u32(CDW10_OFFSET);
    }

    public int cdw11() {
        return u32(CDW11_OFFSET);
    }

    public int cdw12() {
        return u32(CDW12_OFFSET);
    }

    public int cdw13() {
        return u32(CDW13_OFFSET);
    }

    public int cdw14() {
        return u32(CDW14_OFFSET);
    }

    public int cdw15() {
        return u32(CDW15_OFFSET);
    }

    // NVM command fields (nvmeof-protocol.md §4.2).

    /** SLBA, CDW10–11 of Read/Write/Compare/Write Zeroes. */
    public long slba() {
        return u64(CDW10_OFFSET);
    }

    public SubmissionQueueEntry slba(long slba) {
        u64(CDW10_OFFSET, slba);
        return this;
    }

    /** NLB, 0's based, CDW12 bits 15:0. */
    public int nlb() {
        return u16(CDW12_OFFSET);
    }

    public SubmissionQueueEntry nlb(int zeroBasedBlocks) {
        u16(CDW12_OFFSET, zeroBasedBlocks);
        return this;
    }

    // Connect (nvmeof-protocol.md §2.2).

    public int connectRecfmt() {
        return u16(CONNECT_RECFMT_OFFSET);
    }

    public int connectQid() {
        return u16(CONNECT_QID_OFFSET);
    }

    /** SQSIZE, 0's based. */
    public int connectSqsize() {
        return u16(CONNECT_SQSIZE_OFFSET);
    }

    public int connectCattr() {
        return u8(CONNECT_CATTR_OFFSET);
    }

    /** KATO in milliseconds (unsigned; fits an int for every sane value). */
    public int connectKato() {
        return u32(CONNECT_KATO_OFFSET);
    }

    public SubmissionQueueEntry connect(int recfmt, int qid, int sqsize, int cattr, int katoMillis) {
        u16(CONNECT_RECFMT_OFFSET, recfmt);
        u16(CONNECT_QID_OFFSET, qid);
        u16(CONNECT_SQSIZE_OFFSET, sqsize);
        u8(CONNECT_CATTR_OFFSET, cattr);
        u8(CONNECT_CATTR_OFFSET + 1, 0);
        u32(CONNECT_KATO_OFFSET, katoMillis);
        return this;
    }

    // Property Get/Set (nvmeof-protocol.md §2.3).

    /** ATTRIB bits 2:0: 0 = 4-byte property, 1 = 8-byte property. */
    public int propertySize() {
        return u8(PROPERTY_ATTRIB_OFFSET) & 0x7;
    }

    public int propertyOffset() {
        return u32(PROPERTY_OFFSET_OFFSET);
    }

    public long propertyValue() {
        return u64(PROPERTY_VALUE_OFFSET);
    }

    public SubmissionQueueEntry property(int sizeAttrib, int propertyOffset, long value) {
        u8(PROPERTY_ATTRIB_OFFSET, sizeAttrib);
        u32(PROPERTY_OFFSET_OFFSET, propertyOffset);
        u64(PROPERTY_VALUE_OFFSET, value);
        return this;
    }

    // Authentication Send/Receive (nvmeof-protocol.md §2.5).

    public int authSecp() {
        return u8(AUTH_SECP_OFFSET);
    }

    public int authSpsp0() {
        return u8(AUTH_SPSP0_OFFSET);
    }

    public int authSpsp1() {
        return u8(AUTH_SPSP1_OFFSET);
    }

    /** TL of an Authentication Send, AL of an Authentication Receive (unsigned 32 bits, here at most 2^31 - 1). */
    public int authLength() {
        return u32(AUTH_LENGTH_OFFSET);
    }

    /** Fills SECP, SPSP0, SPSP1 and TL/AL (byte 40 reserved, zeroed). */
    public SubmissionQueueEntry auth(int secp, int spsp0, int spsp1, int length) {
        u8(CDW10_OFFSET, 0);
        u8(AUTH_SPSP0_OFFSET, spsp0);
        u8(AUTH_SPSP1_OFFSET, spsp1);
        u8(AUTH_SECP_OFFSET, secp);
        u32(AUTH_LENGTH_OFFSET, length);
        return this;
    }

    @Override
    public String toString() {
        return String.format(
                "SQE[opc=0x%02x flags=0x%02x cid=%d nsid=%d cdw10=0x%08x cdw11=0x%08x cdw12=0x%08x sgl=0x%02x len=%d]",
                opcode(), flags(), cid(), nsid(), cdw10(), cdw11(), cdw12(), sgl.identifier(), sgl.dataLength());
    }
}

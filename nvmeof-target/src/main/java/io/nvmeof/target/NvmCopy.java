package io.nvmeof.target;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Copy (NVM opcode 19h, NVM Command Set Specification 1.0c §3.2.2), Source Range Entries format 0 only: the blocks of
 * up to {@link #MSRC} + 1 source ranges, read in order, land one after the other from SDLBA. The limits are what
 * Identify Namespace advertises (MSSRL, MCL, MSRC) and Identify Controller OCFS bit 0 (format 0); ONCS bit 8 says
 * Copy is there. Sources are gathered first, so overlapping source and destination ranges copy as if read before any
 * write. Owned by its queue's {@link NvmCommands}; queue thread only. The gather buffer is allocated once per queue,
 * at its first Copy (MCL blocks of the largest block size), so a Copy allocates nothing after that.
 */
final class NvmCopy {
    /** Maximum Single Source Range Length, in blocks. */
    static final int MSSRL = 256;
    /** Maximum Copy Length, in blocks (all ranges together). */
    static final int MCL = 256;
    /** Maximum Source Range Count, 0's based: 16 ranges. */
    static final int MSRC = 15;
    /** A source range entry of format 0 is 32 bytes: SLBA at 8, NLB (0's based, 16 bits) at 16. */
    static final int RANGE_ENTRY = 32;

    private static final int FORMAT_0 = 0;
    private static final int LARGEST_BLOCK = 4096;

    private ByteBuffer gather;

    /** The checks before the data (the range list) comes; SUCCESS if the list should be fetched. */
    static int check(TargetRequest request, SubmissionQueueEntry c, RamNamespace ns) {
        if (ns.readOnly()) {
            return Status.dnr(Status.NAMESPACE_WRITE_PROTECTED);
        }
        int ranges = (c.cdw12() & 0xFF) + 1; // NR, 0's based
        int format = (c.cdw12() >>> 8) & 0xF; // DF
        if (format != FORMAT_0) {
            return Status.dnr(Status.INVALID_FIELD); // OCFS: format 0 only
        }
        if (ranges > MSRC + 1) {
            return Status.dnr(Status.COMMAND_SIZE_LIMIT_EXCEEDED);
        }
        if (request.dataLength() < ranges * RANGE_ENTRY) {
            return Status.dnr(Status.DATA_SGL_LENGTH_INVALID); // a longer buffer is fine, as with DSM
        }
        return Status.SUCCESS;
    }

    /** The range list is in: checks every range, then copies. Returns the status. */
    int copy(ByteBuffer list, SubmissionQueueEntry c, RamNamespace ns) {
        int ranges = (c.cdw12() & 0xFF) + 1;
        long sdlba = (c.cdw10() & 0xFFFFFFFFL) | ((long) c.cdw11() << 32);
        long blocks = ns.blocks();
        long total = 0;
        for (int i = 0; i < ranges; i++) {
            long slba = list.getLong(i * RANGE_ENTRY + 8);
            int nlb = (list.getShort(i * RANGE_ENTRY + 16) & 0xFFFF) + 1;
            if (nlb > MSSRL) {
                return Status.dnr(Status.COMMAND_SIZE_LIMIT_EXCEEDED);
            }
            if (Long.compareUnsigned(slba, blocks) >= 0 || slba + nlb > blocks) {
                return Status.dnr(Status.LBA_OUT_OF_RANGE);
            }
            total += nlb;
        }
        if (total > MCL) {
            return Status.dnr(Status.COMMAND_SIZE_LIMIT_EXCEEDED);
        }
        if (Long.compareUnsigned(sdlba, blocks) >= 0 || sdlba + total > blocks) {
            return Status.dnr(Status.LBA_OUT_OF_RANGE);
        }
        if (gather == null) {
            gather = ByteBuffer.allocateDirect(MCL * LARGEST_BLOCK).order(ByteOrder.LITTLE_ENDIAN);
        }
        int shift = ns.blockShift();
        int at = 0;
        for (int i = 0; i < ranges; i++) {
            long slba = list.getLong(i * RANGE_ENTRY + 8);
            int bytes = ((list.getShort(i * RANGE_ENTRY + 16) & 0xFFFF) + 1) << shift;
            ns.readInto(gather, at, slba << shift, bytes);
            at += bytes;
        }
        return ns.write(gather, 0, sdlba << shift, at);
    }
}

package io.nvmeof.conformance;

import io.nvmeof.core.command.NvmOpcode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * NVM command set I/O commands (nvmeof-protocol.md §4): Read, Write, Compare, Verify, Write Zeroes, Write
 * Uncorrectable, Flush, Dataset Management, Copy, fused Compare and Write, reservation commands and undefined
 * opcodes — with SLBA/NLB at the namespace's edges and beyond, reserved bits, NSIDs and SGLs varied.
 *
 * <p>Commands that change the media start in the first or the last {@link Geometry#EDGE_REGION_BLOCKS} blocks (or lie
 * beyond the end) and reach at most {@link Geometry#RESTORED_HEAD_BLOCKS} blocks from the start: the runner zeroes
 * those blocks after the sequence, so every sequence starts from zeros.
 */
final class NvmGen {
    /**
     * In-capsule data on I/O queues: 16 KiB, what both nvmet-tcp (its default inline data size) and ours take, so a
     * NORMAL write goes in-capsule exactly when a Linux host would send it so (nvmeof-protocol.md §5.10).
     */
    static final int IO_IN_CAPSULE = 16384;

    private final Pick pick;
    private final Geometry g;

    NvmGen(Pick pick, Geometry g) {
        this.pick = pick;
        this.g = g;
    }

    /** True for the opcodes whose success changes the media. */
    static boolean modifies(int opcode) {
        return opcode == NvmOpcode.WRITE.code()
                || opcode == NvmOpcode.WRITE_ZEROES.code()
                || opcode == NvmOpcode.WRITE_UNCORRECTABLE.code()
                || opcode == NvmOpcode.DATASET_MANAGEMENT.code()
                || opcode == 0x19; // Copy
    }

    /** One or two commands (a fused pair is two). */
    List<Cmd> random() {
        int r = pick.below(100);
        if (r < 22) {
            return List.of(rw(NvmOpcode.READ.code(), false));
        } else if (r < 42) {
            return List.of(rw(NvmOpcode.WRITE.code(), true));
        } else if (r < 48) {
            return List.of(rw(NvmOpcode.COMPARE.code(), false));
        } else if (r < 53) {
            return List.of(rw(NvmOpcode.VERIFY.code(), false));
        } else if (r < 61) {
            return List.of(rw(NvmOpcode.WRITE_ZEROES.code(), true));
        } else if (r < 63) {
            return List.of(rw(NvmOpcode.WRITE_UNCORRECTABLE.code(), true));
        } else if (r < 70) {
            return List.of(flush());
        } else if (r < 79) {
            return List.of(dsm());
        } else if (r < 82) {
            return List.of(copy());
        } else if (r < 86) {
            return fusedCompareAndWrite();
        } else {
            return List.of(otherOpcode());
        }
    }

    /** A write then a read of the same blocks: proves the data path keeps data on both. */
    List<Cmd> writeThenRead() {
        long slba = pick.chance(50) ? pick.below(32) : g.blocks() - 1 - pick.below(32);
        int nlb = pick.below(16);
        byte[] data = pick.bytes((nlb + 1) * g.blockSize());
        String what = String.format(" slba=%s nlb=%d", slbaText(slba), nlb);
        Cmd w = io(NvmOpcode.WRITE.code(), "write (then read)" + what, 1, slba, nlb, 0, SglVariant.NORMAL, data);
        Cmd rd = io(NvmOpcode.READ.code(), "read (after write)" + what, 1, slba, nlb, 0, SglVariant.NORMAL, null);
        return List.of(w, rd);
    }

    private long slba(boolean modifying, int nlb) {
        long cap = g.blocks();
        if (pick.chance(70)) {
            return pick.chance(50)
                    ? pick.below(Geometry.EDGE_REGION_BLOCKS)
                    : cap - Math.min(Geometry.EDGE_REGION_BLOCKS, 1 + pick.below(Geometry.EDGE_REGION_BLOCKS));
        }
        long[] edges = {0, cap - 1, cap - 1 - nlb, cap - nlb, cap, cap + 1, 1L << 32, 1L << 63, -1L};
        long v = pick.oneLong(edges);
        if (modifying
                && v >= 0
                && v < cap
                && v >= Geometry.EDGE_REGION_BLOCKS
                && v < cap - Geometry.EDGE_REGION_BLOCKS) {
            return 0;
        }
        return v;
    }

    private int nlb() {
        return pick.chance(70) ? pick.below(16) : pick.one(0, 1, 7, 63, 255, 0xFFFF);
    }

    Cmd rw(int opc, boolean modifying) {
        int nlb = nlb();
        long slba = slba(modifying, nlb);
        int nsid = pick.chance(85) ? 1 : pick.nsid();
        // CDW12: LR 31, FUA 30, PRINFO 29:26, STC 24, DTYPE 23:20 (Write), DEAC 25 (Write Zeroes); CDW13 DSM 7:0.
        int cdw12Flags =
                pick.chance(75) ? 0 : pick.one(1 << 31, 1 << 30, 0xF << 26, 1 << 25, 1 << 24, 0xF << 20, 0x000F0000);
        boolean hasData = opc != NvmOpcode.WRITE_ZEROES.code()
                && opc != NvmOpcode.WRITE_UNCORRECTABLE.code()
                && opc != NvmOpcode.VERIFY.code();
        long blocks = (nlb & 0xFFFFL) + 1;
        int len = (int) Math.min(blocks * g.blockSize(), 256 * 1024);
        byte[] data = hasData && (opc == NvmOpcode.WRITE.code() || opc == NvmOpcode.COMPARE.code())
                ? (pick.chance(50) ? new byte[len] : pick.bytes(len))
                : null;
        SglVariant sgl = hasData ? pick.sgl() : (pick.chance(85) ? SglVariant.ZERO_TRANSPORT : pick.sgl());
        String label = String.format(
                "%s slba=%s nlb=%d nsid=%x cdw12=%08x sgl=%s", name(opc), slbaText(slba), nlb, nsid, cdw12Flags, sgl);
        return io(opc, label, nsid, slba, nlb, cdw12Flags, sgl, data);
    }

    private Cmd io(int opc, String label, int nsid, long slba, int nlb, int cdw12Flags, SglVariant sgl, byte[] data) {
        int len = (int) Math.min(((nlb & 0xFFFFL) + 1) * g.blockSize(), 256 * 1024);
        Sqe s = Sqe.io(opc, label)
                .nsid(nsid)
                .cdw(10, (int) slba)
                .cdw(11, (int) (slba >>> 32))
                .cdw(12, (nlb & 0xFFFF) | cdw12Flags)
                .cdw(13, pick.reservedBits(0xFFFFFF00))
                .cdw(14, 0)
                .cdw(15, pick.reservedBits(0xFFFFFFFF));
        if (sgl == SglVariant.ZERO_TRANSPORT && data == null) {
            return s.sgl(0x5A, 0, 0).build();
        }
        return s.data(sgl, data, len, IO_IN_CAPSULE).build();
    }

    private String slbaText(long slba) {
        long cap = g.blocks();
        if (slba >= cap - 1000 && slba <= cap + 1000) {
            long d = slba - cap;
            return d == 0 ? "cap" : d > 0 ? "cap+" + d : "cap" + d;
        }
        return Long.toUnsignedString(slba);
    }

    Cmd flush() {
        int nsid = pick.chance(60) ? 1 : pick.nsid();
        SglVariant sgl = pick.chance(85) ? SglVariant.ZERO_TRANSPORT : pick.sgl();
        Sqe s = Sqe.io(NvmOpcode.FLUSH.code(), String.format("flush nsid=%x sgl=%s", nsid, sgl))
                .nsid(nsid)
                .cdw(10, pick.reservedBits(0xFFFFFFFF));
        return sgl == SglVariant.ZERO_TRANSPORT
                ? s.sgl(0x5A, 0, 0).build()
                : s.data(sgl, null, 0, 0).build();
    }

    /** Dataset Management: NR ranges of 16 bytes, attributes IDR/IDW/AD; ranges in the edge regions or beyond the end. */
    Cmd dsm() {
        int nr = pick.chance(70) ? pick.below(4) : pick.one(0, 255);
        int attr = pick.one(0x4, 0x4, 0x1, 0x2, 0x7, 0, 0xFFFFFFF8 | 0x4);
        int ranges = nr + 1;
        ByteBuffer b = ByteBuffer.allocate(ranges * 16).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < ranges; i++) {
            int nlb = pick.chance(80) ? 1 + pick.below(16) : pick.one(0, 0x7FFFFFFF, -1);
            long slba = pick.chance(85)
                    ? pick.below(Geometry.EDGE_REGION_BLOCKS - 16)
                    : pick.oneLong(g.blocks(), g.blocks() - 1, -1L);
            b.putInt(i * 16, 0).putInt(i * 16 + 4, nlb).putLong(i * 16 + 8, slba);
        }
        int len = pick.chance(90) ? ranges * 16 : pick.one(0, 16, 4096);
        int nsid = pick.chance(85) ? 1 : pick.nsid();
        SglVariant sgl = pick.sgl();
        int cdw10 = nr | pick.reservedBits(0xFFFFFF00); // NR in bits 7:0, the rest reserved
        return Sqe.io(
                        NvmOpcode.DATASET_MANAGEMENT.code(),
                        String.format(
                                "dsm nr=%d attr=%x len=%d nsid=%x cdw10=%08x sgl=%s", nr, attr, len, nsid, cdw10, sgl))
                .nsid(nsid)
                .cdw(10, cdw10)
                .cdw(11, attr)
                .data(sgl, b.array(), len, IO_IN_CAPSULE)
                .build();
    }

    /** Copy (19h) with one source range format 0h entry of 32 bytes, inside the first edge region. */
    Cmd copy() {
        ByteBuffer b = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(8, pick.below(16)).putShort(16, (short) pick.below(8));
        long sdlba = 32 + pick.below(16);
        return Sqe.io(0x19, "copy")
                .nsid(1)
                .cdw(10, (int) sdlba)
                .cdw(11, 0)
                .cdw(12, 0) // NR 0 (one range), format 0h
                .data(SglVariant.NORMAL, b.array(), 32, IO_IN_CAPSULE)
                .build();
    }

    /** Compare (FUSE 01b) and Write (FUSE 10b) on the same blocks, sent back to back (nvmeof-protocol.md §4). */
    List<Cmd> fusedCompareAndWrite() {
        long slba = pick.below(Geometry.EDGE_REGION_BLOCKS - 8);
        int nlb = pick.below(4);
        int len = (nlb + 1) * g.blockSize();
        Cmd compare = Sqe.io(NvmOpcode.COMPARE.code(), "fused compare")
                .flags(0x40 | 0x01)
                .nsid(1)
                .cdw(10, (int) slba)
                .cdw(12, nlb)
                .data(SglVariant.NORMAL, new byte[len], len, IO_IN_CAPSULE)
                .build()
                .withFusedWithNext();
        Cmd write = Sqe.io(NvmOpcode.WRITE.code(), "fused write")
                .flags(0x40 | 0x02)
                .nsid(1)
                .cdw(10, (int) slba)
                .cdw(12, nlb)
                .data(SglVariant.NORMAL, pick.bytes(len), len, IO_IN_CAPSULE)
                .build();
        return List.of(compare, write);
    }

    /** Reservation commands, undefined I/O opcodes and admin opcodes sent on an I/O queue. */
    Cmd otherOpcode() {
        int opc = pick.one(
                0x0D, 0x0E, 0x11, 0x15, 0x03, 0x06, 0x07, 0x0A, 0x0B, 0x10, 0x12, 0x18, 0x1D, 0x7C, 0x7E, 0x80, 0x81,
                0xC0, 0xFF, 0x18);
        int len = (opc & 0x3) == 0 ? 0 : (opc & 0x3) == 2 ? 4096 : 16;
        return Sqe.io(opc, String.format("io opc=%02x", opc))
                .nsid(pick.chance(80) ? 1 : pick.nsid())
                .data(pick.sgl(), pick.bytes(len), len, IO_IN_CAPSULE)
                .build();
    }

    private static String name(int opc) {
        NvmOpcode op = NvmOpcode.of(opc);
        return op != null ? op.name().toLowerCase().replace('_', '-') : String.format("opc-%02x", opc);
    }
}

package io.nvmeof.transport.rdma.soft;

import static io.nvmeof.transport.rdma.soft.Shm.INT;
import static io.nvmeof.transport.rdma.soft.Shm.LONG;

import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.nio.ByteBuffer;

/**
 * The layout of the software RNIC's queue files, which a QP's file ({@code <pid>-q<n>}), a shared CQ's
 * ({@code <pid>-c<n>}) and an SRQ's ({@code <pid>-s<n>}) share, and the accesses to their rings that more than one of
 * them makes. No state: the files belong to the {@link SoftQueuePair}, {@link SoftCompletionQueue} or
 * {@link SoftSharedReceiveQueue} that created them; whoever maps one (its owner, or a peer's sending thread) calls
 * these. Nothing here locks or allocates.
 *
 * <p>Header: {@code 0 int magic, 8 int state (a QP's QueuePair.State ordinal; either side may set ERROR), 16 int the
 * shared CQ's file number or a CQ's/SRQ's capacity, 20 int the QP's slot on its shared CQ, 24 int the SRQ's file
 * number, 28 int QP number, 64 long rq head (consumers CAS it: the peer's sender, the owner's flush), 128 long rq tail
 * (the owner publishes it with release), 192 long cq tail (producers CAS it)}; at 256 the receive ring ({@code 32-byte
 * WQEs: long wrId, int lkey, int offset, int length}); then the CQ ring ({@code 32-byte CQEs: long sequence (Vyukov
 * bounded MPMC: a producer that claimed position p publishes p + 1; the consumer frees it with p + capacity), long
 * wrId, int opcode|status<<4|withInvalidate<<12 (a shared CQ's: |slot<<13), int byteLength, int invalidated rkey, int
 * send-queue entries retired}). A CQ's or SRQ's file has only its one ring, from 256.
 */
final class QueueFile {
    static final int H_MAGIC = 0, H_STATE = 8, H_RQ_HEAD = 64, H_RQ_TAIL = 128, H_CQ_TAIL = 192, RQ_BASE = 256;
    /** Header ints: the shared CQ's file number (0: the ring in this file), our slot on it, the SRQ's file number. */
    static final int H_CQ_FILE = 16, H_CQ_SLOT = 20, H_SRQ_FILE = 24, H_QPN = 28;

    static final int RQE = 32, CQE = 32;

    private static final WorkCompletion.Opcode[] OPCODES = WorkCompletion.Opcode.values();
    private static final WorkCompletion.Status[] STATUSES = WorkCompletion.Status.values();

    private QueueFile() {}

    /** Sets each CQE's sequence to its position: the ring from {@code base} is empty. */
    static void initCompletionRing(ByteBuffer b, int base, int capacity) {
        for (int i = 0; i < capacity; i++) {
            LONG.set(b, base + i * CQE, (long) i);
        }
    }

    /**
     * Writes a receive WQE at {@code tail} of the receive ring in {@code b} and publishes {@code tail + 1} (owner
     * thread; the caller checked there is room). The lkey is 0 for a region of another device.
     */
    static void postReceive(
            ByteBuffer b,
            long tail,
            int mask,
            SoftDevice device,
            long wrId,
            MemoryRegion region,
            int offset,
            int length) {
        int e = RQ_BASE + (int) (tail & mask) * RQE;
        LONG.set(b, e, wrId);
        int key = region instanceof SoftMemoryRegion m && m.device == device ? m.key : 0;
        INT.set(b, e + 8, key);
        INT.set(b, e + 12, offset);
        INT.set(b, e + 16, length);
        LONG.setRelease(b, H_RQ_TAIL, tail + 1);
    }

    /** Produces one CQE into the ring at {@code base} of {@code b} (any thread); false if the ring is full. */
    static boolean putCompletion(
            ByteBuffer b, int base, int mask, long wrId, int word, int length, int inv, int retire) {
        for (; ; ) {
            long pos = (long) LONG.getVolatile(b, H_CQ_TAIL);
            int cell = base + (int) (pos & mask) * CQE;
            long seq = (long) LONG.getAcquire(b, cell);
            if (seq == pos) {
                if (LONG.compareAndSet(b, H_CQ_TAIL, pos, pos + 1)) {
                    LONG.set(b, cell + 8, wrId);
                    INT.set(b, cell + 16, word);
                    INT.set(b, cell + 20, length);
                    INT.set(b, cell + 24, inv);
                    INT.set(b, cell + 28, retire);
                    LONG.setRelease(b, cell, pos + 1);
                    return true;
                }
            } else if (seq < pos) {
                return false;
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Reads the published CQE at {@code cell} into {@code wc} (all but the QP number) and returns its opcode word; the
     * owner then reads the retired count at {@code cell + 28} and frees the cell.
     */
    static int readCompletion(ByteBuffer b, int cell, WorkCompletion wc) {
        int word = (int) INT.get(b, cell + 16);
        wc.wrId = (long) LONG.get(b, cell + 8);
        wc.opcode = OPCODES[word & 0xf];
        wc.status = STATUSES[(word >>> 4) & 0xff];
        wc.withInvalidate = (word & 1 << 12) != 0;
        wc.byteLength = (int) INT.get(b, cell + 20);
        wc.invalidatedRkey = (int) INT.get(b, cell + 24);
        return word;
    }
}

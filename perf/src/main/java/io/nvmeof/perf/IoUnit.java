package io.nvmeof.perf;

import io.nvmeof.initiator.NvmeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One of a {@link Job}'s {@code iodepth} I/O units (fio's io_u): a preallocated slice of the job's I/O buffer and the
 * I/O it carries now, with its times. Owned by its job; while its I/O is out, by the queue's thread until the
 * completion has stamped it.
 */
final class IoUnit {
    final int index;
    final ByteBuffer buf;
    /** A little-endian duplicate of {@link #buf} whose position and limit the verify CRC moves. */
    final ByteBuffer view;

    boolean isRead;
    /** A read whose data is to be checked (--verify). */
    boolean check;
    /** The I/O's index in the job's region, in units of --bs. */
    long unit;

    long lba;
    /** Issued, submitted and completed (System.nanoTime). */
    long t0;

    long t1;
    long tc;
    NvmeException error;

    IoUnit(int index, ByteBuffer buf) {
        this.index = index;
        this.buf = buf;
        this.view = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }
}

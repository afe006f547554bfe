package io.nvmeof.target.namespace;

import static io.nvmeof.target.namespace.RamNamespace.CHUNK_MASK;
import static io.nvmeof.target.namespace.RamNamespace.CHUNK_SHIFT;
import static io.nvmeof.target.namespace.RamNamespace.CHUNK_SIZE;

import java.nio.ByteBuffer;

/**
 * How one {@link RamNamespace} makes a byte range read as zeroes ({@link RamNamespace#zero}): Write Zeroes and Dataset
 * Management deallocate (nvmeof-protocol.md §4.4, §4.5). It works on the namespace's {@link ChunkTable} and file, and
 * is owned by the namespace; it holds no state of its own and is called from any queue thread (a file's hole
 * punching from the namespace flusher's worker).
 * <ul>
 *   <li>In RAM, with deallocate, chunks covered whole are dropped from the table (their memory goes back to the
 *       budget) and partly covered ones are zeroed in place; without it, or for a preallocated namespace, existing
 *       chunks are zeroed in place. Unwritten chunks already read as zero, so this never allocates.</li>
 *   <li>In a file, with deallocate where the file can punch holes, the whole file system blocks of the range are
 *       punched out and only the partial blocks at its edges are zeroed through the mapping; otherwise the zeroes are
 *       written through the mapping.</li>
 * </ul>
 */
final class RangeZeroing {
    /** Read-only zeroes to copy from (never handed to a transport: reads use {@link ChunkMemory#zeroBuffer()}). */
    static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(CHUNK_SIZE).asReadOnlyBuffer();

    private final ChunkTable table;
    /** The file behind the namespace, or null in RAM. */
    private final MappedFile file;
    /** Whether whole chunks are kept (zeroed) instead of dropped: the namespace's memory was all allocated at creation. */
    private final boolean keepChunks;

    RangeZeroing(ChunkTable table, MappedFile file, boolean keepChunks) {
        this.table = table;
        this.file = file;
        this.keepChunks = keepChunks;
    }

    /**
     * Makes {@code length} bytes at byte {@code offset} read as zeroes, deallocating where {@code deallocate} allows.
     *
     * @throws java.io.UncheckedIOException if the file system refuses to punch a hole (the range may be partly zeroed)
     */
    void zero(long offset, long length, boolean deallocate) {
        if (deallocate && file != null && file.punchesHoles()) {
            punchHoles(offset, length);
            return;
        }
        zeroInPlace(offset, length, deallocate);
    }

    private void punchHoles(long offset, long length) {
        if (table.closed()) {
            return; // removed while the command waited for the worker: nothing left to deallocate
        }
        long block = file.holeBlockSize();
        long end = offset + length;
        long start = (offset + block - 1) & -block;
        long stop = end & -block;
        if (start >= stop) {
            zeroInPlace(offset, length, false); // no whole file system block inside
            return;
        }
        zeroInPlace(offset, start - offset, false);
        zeroInPlace(stop, end - stop, false);
        try {
            file.punch(start, stop - start);
        } catch (java.io.UncheckedIOException e) {
            if (table.closed()) {
                return; // removed meanwhile (its file closed)
            }
            throw e;
        }
        // The punch took the range's pages out of the page cache; a memory registration (RDMA) pins the pages it was
        // made on, so the chunks over the range are dropped from the table and come back, registered anew on the
        // file's new pages, on their next use. Commands still holding an old chunk were concurrent with this one.
        table.dropChunks((int) (start >>> CHUNK_SHIFT), (int) ((stop - 1) >>> CHUNK_SHIFT));
    }

    private void zeroInPlace(long offset, long length, boolean deallocate) {
        while (length > 0) {
            int index = (int) (offset >>> CHUNK_SHIFT);
            int within = (int) (offset & CHUNK_MASK);
            int n = (int) Math.min(length, CHUNK_SIZE - within);
            if (deallocate && file == null && !keepChunks && within == 0 && n == table.chunkBytes(index)) {
                table.deallocate(index);
            } else {
                Chunk c = table.acquire(index);
                if (c != null) {
                    try {
                        c.buffer.put(within, ZEROES, 0, n);
                    } finally {
                        c.release();
                    }
                }
            }
            offset += n;
            length -= n;
        }
    }
}

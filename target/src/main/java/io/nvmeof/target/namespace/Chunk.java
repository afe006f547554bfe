package io.nvmeof.target.namespace;

import io.nvmeof.core.spi.DataRelease;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One fixed-size piece of namespace RAM, off-heap, reference counted.
 *
 * <p>The chunk table of its {@link RamNamespace} holds one reference. Every reader or writer takes another with
 * {@link #tryRetain()} before it touches the memory, and a read that hands the memory to a transport with
 * {@code TargetRequest.addData} passes the chunk itself as the {@link DataRelease}, so the transport's release drops
 * that reference and no release object is allocated per I/O. Deallocation swaps the table slot to null and drops the
 * table's reference; the native memory is freed, and its bytes returned to the {@link MemoryBudget}, when the last
 * reference goes. A count that reached 0 never rises again ({@link #tryRetain()} refuses), so freed memory is never
 * touched.
 */
final class Chunk implements DataRelease {
    private static final AtomicIntegerFieldUpdater<Chunk> REFS = AtomicIntegerFieldUpdater.newUpdater(Chunk.class, "refs");

    /** The chunk's memory, little-endian (the byte order NVMe data is compared in, §0). Never handed out mutable to a host. */
    final ByteBuffer buffer;
    private final MemoryBudget budget;
    private volatile int refs;

    /** A new chunk with two references: the table's and the caller's. */
    Chunk(ByteBuffer buffer, MemoryBudget budget) {
        this.buffer = buffer.order(ByteOrder.LITTLE_ENDIAN);
        this.budget = budget;
        REFS.lazySet(this, 2);
    }

    /** Takes a reference; false if the chunk is already being freed (the caller then re-reads the table). */
    boolean tryRetain() {
        while (true) {
            int r = refs;
            if (r <= 0) {
                return false;
            }
            if (REFS.compareAndSet(this, r, r + 1)) {
                return true;
            }
        }
    }

    /** Drops a reference; the last one frees the memory. This is the {@link DataRelease} of reads. */
    @Override
    public void release() {
        int r = REFS.decrementAndGet(this);
        if (r == 0) {
            int bytes = buffer.capacity();
            NativeMemory.free(buffer);
            budget.release(bytes);
        } else if (r < 0) {
            // A release too many is a bug in the caller; the memory was freed already, so only say so.
            throw new IllegalStateException("namespace chunk released more often than retained");
        }
    }

    /** The current reference count, for tests and diagnostics. */
    int refCount() {
        return refs;
    }

    int capacity() {
        return buffer.capacity();
    }
}

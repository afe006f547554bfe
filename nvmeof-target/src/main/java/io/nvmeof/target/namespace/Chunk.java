package io.nvmeof.target.namespace;

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
 * reference goes: a chunk of its own frees its direct buffer, a chunk cut from a {@link Slab} gives its pages back to
 * the slab ({@link Slab#giveBack}, exactly once), which unmaps itself with its last chunk. A count that reached 0
 * never rises again ({@link #tryRetain()} refuses), so freed memory is never touched.
 *
 * <p>The chunk is also the {@link io.nvmeof.core.spi.RegisteredMemory} of its memory: {@link ChunkMemory} stores the
 * handle each memory observer (e.g. an RDMA listener's memory region) returned for it.
 */
final class Chunk extends ChunkMemory.Registered {
    private static final AtomicIntegerFieldUpdater<Chunk> REFS =
            AtomicIntegerFieldUpdater.newUpdater(Chunk.class, "refs");

    // The chunk's memory (ChunkMemory.Registered.buffer), little-endian (the byte order NVMe data is compared in,
    // nvmeof-protocol.md §0).
    private final MemoryBudget budget;
    private final ChunkMemory memory;
    /** The slab the memory is cut from, or null for a chunk of its own (or of a file). */
    private final Slab slab;

    private final int slabIndex;
    private volatile int refs;

    /**
     * A new chunk with two references: the table's and the caller's. The memory observers are told about it here,
     * before it can be published, so no transport sees it unregistered.
     *
     * @param budget the budget its bytes were reserved from, or null for a slice of a file mapping ({@link
     *               MappedFile}): that memory is the file's page cache, not freed here and not counted as RAM
     */
    Chunk(ByteBuffer buffer, MemoryBudget budget, ChunkMemory memory) {
        this(buffer, budget, memory, null, 0);
    }

    /**
     * A new chunk over chunk {@code index} of {@code slab}, with two references, announced to the observers. Its
     * budget share was reserved with the slab; the slab gets it back when the last reference goes.
     */
    Chunk(Slab slab, int index, ChunkMemory memory) {
        this(slab.chunk(index), null, memory, slab, index);
    }

    private Chunk(ByteBuffer buffer, MemoryBudget budget, ChunkMemory memory, Slab slab, int slabIndex) {
        super(buffer.order(ByteOrder.LITTLE_ENDIAN));
        this.budget = budget;
        this.memory = memory;
        this.slab = slab;
        this.slabIndex = slabIndex;
        REFS.lazySet(this, 2);
        memory.allocated(this);
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
            memory.freeing(this); // observers let go (e.g. deregister the memory region) before the memory goes
            if (slab != null) {
                slab.giveBack(slabIndex); // its pages and its budget share
            } else if (budget != null) {
                NativeMemory.free(buffer);
                budget.release(bytes);
            }
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

    /** Whether the memory is cut from a {@link Slab} advised for a transparent huge page. */
    boolean inHugePageSlab() {
        return slab != null && slab.hugePageAdvised();
    }
}

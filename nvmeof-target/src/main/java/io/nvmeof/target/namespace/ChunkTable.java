package io.nvmeof.target.namespace;

import static io.nvmeof.target.namespace.RamNamespace.CHUNK_SHIFT;
import static io.nvmeof.target.namespace.RamNamespace.CHUNK_SIZE;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.ToLongFunction;

/**
 * The chunk table of one {@link RamNamespace}: its {@link RamNamespace#CHUNK_SIZE} chunks found through a top array of
 * leaves, each leaf an array of {@link #LEAF_SIZE} chunk slots, both created lazily and published by compare-and-set,
 * and where a missing chunk comes from: the target's {@link ChunkPool}, an allocation within the {@link MemoryBudget},
 * or a slice of the namespace's {@link MappedFile}.
 *
 * <p>Owned by its namespace, which frees it with itself ({@link #free}, closing the file too). The table holds one
 * reference to each chunk in it; every chunk it hands out is retained once more for the caller, who releases it once.
 * Queues on different threads use it without a lock; nothing here allocates except the first use of a chunk or a
 * leaf.
 */
final class ChunkTable {
    /** Chunk slots per leaf: 4096, so a leaf covers 512 MiB. */
    static final int LEAF_SHIFT = 12;

    static final int LEAF_SIZE = 1 << LEAF_SHIFT;
    private static final int LEAF_MASK = LEAF_SIZE - 1;

    private final long sizeBytes;
    /** Chunks the namespace spans (the last one may be shorter). */
    private final int chunkCount;

    private final MemoryBudget budget;
    private final ChunkMemory memory;
    /** Chunks made ahead for first writes, or null (RAM only). */
    private final ChunkPool pool;
    /** The file behind the namespace, or null in RAM. */
    private final MappedFile file;

    private final AtomicReferenceArray<AtomicReferenceArray<Chunk>> leaves;
    private volatile boolean closed;

    ChunkTable(long sizeBytes, MemoryBudget budget, ChunkMemory memory, ChunkPool pool, MappedFile file) {
        this.sizeBytes = sizeBytes;
        this.budget = budget;
        this.memory = memory;
        this.pool = pool;
        this.file = file;
        this.chunkCount = (int) ((sizeBytes + CHUNK_SIZE - 1) >>> CHUNK_SHIFT);
        this.leaves = new AtomicReferenceArray<>((chunkCount + LEAF_MASK) >>> LEAF_SHIFT);
    }

    /** Whether {@link #free} ran: the namespace is gone and gets no new chunk. */
    boolean closed() {
        return closed;
    }

    private Chunk slot(int index) {
        AtomicReferenceArray<Chunk> leaf = leaves.get(index >>> LEAF_SHIFT);
        return leaf == null ? null : leaf.get(index & LEAF_MASK);
    }

    /**
     * The chunk at {@code index}, retained, or null if that range reads as zeroes without one: unwritten in RAM, or a
     * hole of the file (a file's chunk is otherwise created on first use, since a read must see what an earlier run
     * wrote; a hole gets none, because on RDMA a chunk is registered memory and registering a file's pages for writing
     * allocates their blocks).
     */
    Chunk acquire(int index) {
        if (file != null) {
            Chunk c = retained(index);
            if (c != null || !file.hasData((long) index << CHUNK_SHIFT, chunkBytes(index))) {
                return c;
            }
            return acquireForWrite(index);
        }
        return retained(index);
    }

    /** The chunk in the table at {@code index}, retained, or null if there is none. */
    private Chunk retained(int index) {
        while (true) {
            Chunk c = slot(index);
            if (c == null || c.tryRetain()) {
                return c;
            }
            // c is being freed: deallocation cleared the slot before dropping its reference, so re-reading moves on.
        }
    }

    /**
     * The chunk at {@code index}, retained, allocating it within the budget if needed; null if the budget is spent or
     * (a file) the namespace was freed.
     */
    Chunk acquireForWrite(int index) {
        while (true) {
            Chunk c = slot(index);
            if (c != null) {
                if (c.tryRetain()) {
                    return c;
                }
                continue; // c is being freed: deallocation cleared the slot before dropping its reference
            }
            AtomicReferenceArray<Chunk> leaf = leaf(index);
            int bytes = chunkBytes(index);
            Chunk fresh;
            if (file != null) {
                if (closed) {
                    return null; // removed, its file closed: a command racing the removal
                }
                try {
                    fresh = new Chunk(file.slice((long) index << CHUNK_SHIFT, bytes), null, memory);
                } catch (java.io.UncheckedIOException e) {
                    if (closed) {
                        return null; // the file closed while this region was being mapped
                    }
                    throw e;
                }
            } else {
                fresh = pool != null && bytes == CHUNK_SIZE ? pool.take() : null;
                if (fresh == null) {
                    fresh = allocate(bytes);
                    if (fresh == null) {
                        return null;
                    }
                }
            }
            if (leaf.compareAndSet(index & LEAF_MASK, null, fresh)) {
                if (closed && leaf.compareAndSet(index & LEAF_MASK, fresh, null)) {
                    fresh.release(); // the namespace went away meanwhile: drop the table's reference again
                }
                return fresh;
            }
            // Another queue allocated this chunk first: free ours (both references) and use theirs.
            // (A file chunk's release frees nothing but its registrations.)
            fresh.release();
            fresh.release();
        }
    }

    /** The leaf holding slot {@code index}, created and published if there is none yet. */
    private AtomicReferenceArray<Chunk> leaf(int index) {
        int li = index >>> LEAF_SHIFT;
        AtomicReferenceArray<Chunk> leaf = leaves.get(li);
        if (leaf == null) {
            leaf = new AtomicReferenceArray<>(LEAF_SIZE);
            if (!leaves.compareAndSet(li, null, leaf)) {
                leaf = leaves.get(li);
            }
        }
        return leaf;
    }

    /**
     * A new RAM chunk allocated on this thread (the pool was empty, or the chunk is shorter): null if the budget is
     * spent, after freeing chunks the pool holds ahead if that makes room.
     */
    private Chunk allocate(int bytes) {
        boolean reserved = budget.tryReserveQuietly(bytes) || (pool != null && pool.reserveByShedding(bytes));
        if (!reserved && !budget.tryReserve(bytes)) { // counts and logs the refusal
            return null;
        }
        try {
            return new Chunk(ByteBuffer.allocateDirect(bytes), budget, memory);
        } catch (OutOfMemoryError e) {
            // The JVM's direct memory limit (-XX:MaxDirectMemorySize) is below the budget: treat it as the budget.
            budget.release(bytes);
            budget.refused(bytes);
            return null;
        }
    }

    /**
     * Puts a chunk at every index that has none, allocated on this thread (not from the pool, which is for first
     * writes); false as soon as the budget is spent (the chunks made so far stay in the table). Unless {@code mode} is
     * {@link SlabMode#OFF}, each run of {@link Slab#CHUNKS} empty full-size slots gets one {@link Slab} (with a huge
     * page if {@code mode} is {@link SlabMode#HUGE}); the rest, and every run for which the budget has no whole slab
     * left or the system refuses the mapping, get chunks of their own.
     */
    boolean allocateAll(SlabMode mode) {
        int fullChunks = (int) (sizeBytes >>> CHUNK_SHIFT);
        for (int index = 0; index < chunkCount; index++) {
            if (mode != SlabMode.OFF
                    && index % Slab.CHUNKS == 0
                    && index + Slab.CHUNKS <= fullChunks
                    && emptyRun(index)
                    && putSlab(index, mode)) {
                index += Slab.CHUNKS - 1;
                continue;
            }
            if (slot(index) != null) {
                continue;
            }
            Chunk fresh = allocate(chunkBytes(index));
            if (fresh == null) {
                return false;
            }
            leaf(index).set(index & LEAF_MASK, fresh);
            fresh.release(); // the caller's reference: only the table's remains
        }
        return true;
    }

    /** Whether the {@link Slab#CHUNKS} slots from {@code first} on are all empty. */
    private boolean emptyRun(int first) {
        for (int i = first; i < first + Slab.CHUNKS; i++) {
            if (slot(i) != null) {
                return false;
            }
        }
        return true;
    }

    /**
     * Fills the {@link Slab#CHUNKS} empty slots from {@code first} on from one new slab; false (nothing kept) if the
     * budget has no whole slab left or the system refuses the memory.
     */
    private boolean putSlab(int first, SlabMode mode) {
        if (!budget.tryReserveQuietly(Slab.SIZE)) {
            return false;
        }
        Slab slab = Slab.map(budget, mode == SlabMode.HUGE);
        if (slab == null) {
            budget.release(Slab.SIZE);
            return false;
        }
        for (int i = 0; i < Slab.CHUNKS; i++) {
            Chunk c = new Chunk(slab, i, memory); // tells the observers, before the table publishes it
            leaf(first + i).set((first + i) & LEAF_MASK, c);
            c.release(); // the caller's reference: only the table's remains
        }
        return true;
    }

    /** Drops the chunk at {@code index} from the table and releases the table's reference (Deallocate). */
    void deallocate(int index) {
        AtomicReferenceArray<Chunk> leaf = leaves.get(index >>> LEAF_SHIFT);
        if (leaf == null) {
            return;
        }
        Chunk c = leaf.get(index & LEAF_MASK);
        if (c != null && leaf.compareAndSet(index & LEAF_MASK, c, null)) {
            c.release();
        }
    }

    /** The length of chunk {@code index}: {@link RamNamespace#CHUNK_SIZE}, or less for the namespace's last one. */
    int chunkBytes(int index) {
        return (int) Math.min(CHUNK_SIZE, sizeBytes - ((long) index << CHUNK_SHIFT));
    }

    /** Drops the table's chunks {@code first..last} (inclusive), skipping leaves never created. */
    void dropChunks(int first, int last) {
        int index = first;
        while (index <= last) {
            if (leaves.get(index >>> LEAF_SHIFT) == null) {
                index = ((index >>> LEAF_SHIFT) + 1) << LEAF_SHIFT;
                continue;
            }
            deallocate(index);
            index++;
        }
    }

    /**
     * Closes the table and releases its reference to every chunk (namespace removed or target closed), closing the
     * file first; reads still held by transports keep their chunks alive.
     */
    void free() {
        closed = true;
        if (file != null) {
            file.close(); // forces everything written, then closes; chunks keep their mappings while held
        }
        for (int l = 0; l < leaves.length(); l++) {
            AtomicReferenceArray<Chunk> leaf = leaves.get(l);
            if (leaf == null) {
                continue;
            }
            for (int i = 0; i < LEAF_SIZE; i++) {
                Chunk c = leaf.getAndSet(i, null);
                if (c != null) {
                    c.release();
                }
            }
        }
    }

    /** The bytes of the chunks in the table now (written and not deallocated). */
    long chunkBytesHeld() {
        return sum(Chunk::capacity);
    }

    /** The bytes of the chunks in the table now whose slab was advised for a transparent huge page. */
    long hugePageBytes() {
        return sum(c -> c.inHugePageSlab() ? c.capacity() : 0);
    }

    /** {@code bytes} summed over the chunks in the table now (cold path: it visits every slot). */
    private long sum(ToLongFunction<Chunk> bytes) {
        long total = 0;
        for (int l = 0; l < leaves.length(); l++) {
            AtomicReferenceArray<Chunk> leaf = leaves.get(l);
            if (leaf == null) {
                continue;
            }
            for (int i = 0; i < LEAF_SIZE; i++) {
                Chunk c = leaf.get(i);
                if (c != null) {
                    total += bytes.applyAsLong(c);
                }
            }
        }
        return total;
    }
}

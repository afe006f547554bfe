package io.nvmeof.target.namespace;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One 2 MiB region of namespace RAM ({@link #SIZE}, aligned to its size), cut into {@link #CHUNKS} chunks of {@link
 * RamNamespace#CHUNK_SIZE}. Made by the {@link ChunkPool}'s refill thread: mapped, advised for a transparent huge page
 * ({@link SlabMode#HUGE}) and backed in one call, so the kernel zeroes it in one pass and no write into it faults.
 *
 * <p>Budget: {@link #map} is called with {@link #SIZE} bytes already reserved by the caller: one {@link
 * RamNamespace#CHUNK_SIZE} share per chunk. Each chunk's {@link Chunk} gives its share back exactly once, through
 * {@link #giveBack} when its last reference goes: the chunk's pages go back to the system ({@code MADV_DONTNEED}) and
 * its bytes to the budget at once, so a deallocated chunk shrinks both the memory in use and the budget's count, as
 * a chunk of its own does. A given-back chunk is not reused. The last {@link #giveBack} unmaps the slab. So the budget
 * counts exactly the chunks that are not given back, all of which are backed.
 *
 * <p>{@link #giveBack} is one {@code madvise} (and for the last chunk a {@code munmap}) on the thread that drops the
 * chunk's last reference, the same place a chunk of its own is freed.
 */
final class Slab {
    private static final Logger LOG = System.getLogger("io.nvmeof.target.memory");
    /** Bytes per slab: one x86-64 transparent huge page. */
    static final int SIZE = 2 << 20;
    /** Chunks per slab. */
    static final int CHUNKS = SIZE / RamNamespace.CHUNK_SIZE;

    private final long address;
    private final ByteBuffer memory;
    private final MemoryBudget budget;
    /** Chunks not given back yet; the slab is unmapped when this reaches 0. */
    private final AtomicInteger held = new AtomicInteger(CHUNKS);

    private final boolean huge;

    private Slab(long address, ByteBuffer memory, MemoryBudget budget, boolean huge) {
        this.address = address;
        this.memory = memory;
        this.budget = budget;
        this.huge = huge;
    }

    /**
     * Maps and backs a slab whose {@link #SIZE} bytes the caller reserved from {@code budget}; null if the system
     * refuses the memory (the reservation then stays the caller's to give back). With {@code hugePages} the slab is
     * advised for a transparent huge page; a kernel without them refuses the advice and the slab is made of small
     * pages ({@link #hugePageAdvised()} false).
     */
    static Slab map(MemoryBudget budget, boolean hugePages) {
        long a = SlabMemory.map0(SIZE);
        if (a < 0) {
            LOG.log(Level.WARNING, "cannot map a namespace memory slab (errno " + -a + ")");
            return null;
        }
        boolean huge = hugePages && SlabMemory.adviseHuge0(a, SIZE) == 0;
        int p = SlabMemory.populate0(a, SIZE);
        ByteBuffer b = p >= 0 ? SlabMemory.wrap0(a, SIZE) : null;
        if (b == null) {
            SlabMemory.unmap0(a, SIZE);
            LOG.log(Level.WARNING, "cannot back a namespace memory slab (errno " + -p + ")");
            return null;
        }
        return new Slab(a, b, budget, huge);
    }

    /** Chunk {@code index}'s memory: a view of the slab (it does not own the memory). */
    ByteBuffer chunk(int index) {
        return memory.slice(index * RamNamespace.CHUNK_SIZE, RamNamespace.CHUNK_SIZE);
    }

    /**
     * Chunk {@code index} is no longer used (its last reference went, its observers let go): its pages go back to the
     * system and its bytes to the budget; the last chunk unmaps the slab. Exactly once per chunk.
     */
    void giveBack(int index) {
        if (held.get() <= 0) {
            // A bug in the caller: the range is unmapped and may belong to another mapping by now; touch nothing.
            throw new IllegalStateException("a chunk of an unmapped slab was given back");
        }
        // Pages first, then the count: once the count reaches 0 another thread may unmap the slab, and the address
        // range may then belong to another mapping.
        int r = SlabMemory.discard0(address + (long) index * RamNamespace.CHUNK_SIZE, RamNamespace.CHUNK_SIZE);
        if (r != 0) {
            LOG.log(Level.WARNING, "cannot give back a namespace chunk's pages (errno " + -r + ")");
        }
        budget.release(RamNamespace.CHUNK_SIZE);
        int left = held.decrementAndGet();
        if (left == 0) {
            r = SlabMemory.unmap0(address, SIZE);
            if (r != 0) {
                LOG.log(Level.WARNING, "cannot unmap a namespace memory slab (errno " + -r + ")");
            }
        } else if (left < 0) {
            throw new IllegalStateException("a slab chunk was given back more often than the slab has chunks");
        }
    }

    /** Chunks not given back yet (0: the slab is unmapped). */
    int held() {
        return held.get();
    }

    /** Whether the kernel accepted the transparent huge page advice for this slab. */
    boolean hugePageAdvised() {
        return huge;
    }

    /** The slab's start address (for tests and diagnostics: /proc/self/smaps). */
    long address() {
        return address;
    }
}

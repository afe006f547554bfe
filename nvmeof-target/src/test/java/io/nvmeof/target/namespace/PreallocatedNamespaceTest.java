package io.nvmeof.target.namespace;

import static io.nvmeof.target.namespace.NamespaceBytes.filled;
import static io.nvmeof.target.namespace.NamespaceBytes.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@link RamNamespace#preallocated}: all the memory at creation, kept through deallocation, given back when freed. */
class PreallocatedNamespaceTest {
    private static final int CHUNK = RamNamespace.CHUNK_SIZE;
    /** Ten chunks and a shorter last one, so the last chunk's length is covered too. */
    private static final long SIZE = 10L * CHUNK + 8192;

    private static RamNamespace preallocated(long size, MemoryBudget budget) {
        return RamNamespace.preallocated(1, size, 4096, UUID.randomUUID(), false, budget, new ChunkMemory());
    }

    @Test
    void everyByteIsAllocatedAndCountedInTheBudgetAtCreation() {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        RamNamespace ns = preallocated(SIZE, budget);
        assertTrue(ns.preallocated());
        assertEquals(SIZE, ns.allocatedBytes());
        assertEquals(SIZE, budget.used());
        assertArrayEquals(new byte[CHUNK], read(ns, 3L * CHUNK, CHUNK), "unwritten blocks read as zeroes");
        ns.free();
        assertEquals(0, budget.used());
    }

    @Test
    void aFirstWriteTakesNoMoreMemory() {
        MemoryBudget budget = new MemoryBudget(SIZE); // exactly the namespace: a write that allocated would be refused
        RamNamespace ns = preallocated(SIZE, budget);
        assertEquals(Status.SUCCESS, ns.write(filled(CHUNK, 5), 0, 4L * CHUNK, CHUNK));
        assertEquals(Status.SUCCESS, ns.write(filled(8192, 6), 0, 10L * CHUNK, 8192));
        assertEquals(SIZE, budget.used());
        assertEquals(0, budget.refusals());
        assertArrayEquals(filled(CHUNK, 5).array(), read(ns, 4L * CHUNK, CHUNK));
        ns.free();
    }

    @Test
    void deallocationZeroesInPlaceAndKeepsTheMemory() {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        RamNamespace ns = preallocated(SIZE, budget);
        assertEquals(Status.SUCCESS, ns.write(filled(2 * CHUNK, 9), 0, 2L * CHUNK, 2 * CHUNK));
        ns.zero(2L * CHUNK, 2L * CHUNK, true);
        assertArrayEquals(new byte[2 * CHUNK], read(ns, 2L * CHUNK, 2 * CHUNK));
        assertEquals(SIZE, ns.allocatedBytes(), "whole chunks deallocated are kept, zeroed");
        assertEquals(SIZE, budget.used());
        ns.free();
        assertEquals(0, budget.used());
    }

    @Test
    void aBudgetTooSmallIsRefusedWithTheFiguresAndKeepsNothing() {
        MemoryBudget budget = new MemoryBudget(4L * CHUNK);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> preallocated(SIZE, budget));
        assertEquals(
                "cannot preallocate namespace 1: it needs " + SIZE + " bytes and the memory budget has " + (4L * CHUNK)
                        + " of " + (4L * CHUNK) + " left",
                e.getMessage());
        assertEquals(0, budget.used());
    }

    @Test
    void aLazyNamespaceIsNotPreallocated() {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        RamNamespace ns = new RamNamespace(1, SIZE, 4096, UUID.randomUUID(), false, budget);
        assertFalse(ns.preallocated());
        assertEquals(0, ns.allocatedBytes());
        ns.free();
    }
}

package io.nvmeof.target.namespace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.DirectPlacementRequest;
import io.nvmeof.target.FakeRequest;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** First writes take chunks made ahead by the pool's thread: registered, within the budget, and without allocating. */
@Timeout(60)
class ChunkPoolTest {
    private static final int CHUNK = RamNamespace.CHUNK_SIZE;

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting: " + what);
            }
            Thread.sleep(2);
        }
    }

    private static ByteBuffer bytes(int length, long seed) {
        byte[] b = new byte[length];
        new java.util.Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    @Test
    void firstWritesTakeRegisteredChunksCountedInTheBudget() throws Exception {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        ChunkMemory memory = new ChunkMemory();
        ChunkMemoryTest.Recorder obs = new ChunkMemoryTest.Recorder();
        memory.attach(obs);
        try (ChunkPool pool = new ChunkPool(budget, memory, 8)) {
            RamNamespace ns = new RamNamespace(1, 1L << 30, 4096, UUID.randomUUID(), false, budget, memory, pool);
            await(() -> pool.available() == 8, "pool filled");
            assertEquals(8L * CHUNK, budget.used(), "the pool's chunks count against the budget");
            assertEquals(0, pool.namespaceBytes(), "but are not namespace memory");
            synchronized (memory) {
                assertEquals(9, obs.allocated, "the zero buffer and every pooled chunk registered before use");
            }

            // a direct placement (RDMA) into fresh memory names a pooled chunk, which the observer knows already
            DirectPlacementRequest w = new DirectPlacementRequest(bytes(8192, 1).array());
            assertEquals(Status.SUCCESS, ns.placeWrite(w, CHUNK, 8192));
            Chunk c = assertInstanceOf(Chunk.class, w.destinations.get(0).release());
            synchronized (memory) {
                assertSame(obs.live.get(c.buffer), c.registration(obs.slot), "registered by the pool's thread");
            }
            w.receiveData((r, status) -> ns.wrote(r.dataLength()));
            assertEquals(1, pool.taken());
            assertEquals(0, pool.missed());

            // the rest of a pooled chunk reads as zeroes
            FakeRequest read = new FakeRequest().expect(CHUNK);
            ns.read(read, CHUNK, CHUNK);
            read.complete();
            byte[] expect = new byte[CHUNK];
            System.arraycopy(bytes(8192, 1).array(), 0, expect, 0, 8192);
            assertArrayEquals(expect, read.received());

            assertEquals(7, pool.available(), "refilled only once down to half");
            assertEquals(8L * CHUNK, budget.used());
            assertEquals(CHUNK, pool.namespaceBytes());
            ns.free();
            assertEquals(0, pool.namespaceBytes());
        }
        assertEquals(0, budget.used(), "closing the pool gave its chunks back");
        assertEquals(1, memory.liveCount(), "and let the observers go of them: only the zero buffer is left");
        synchronized (memory) {
            assertEquals(obs.allocated - 1, obs.freed);
        }
    }

    @Test
    void theBudgetStopsThePoolAndItsChunksStillServeWrites() throws Exception {
        MemoryBudget budget = new MemoryBudget(32L * CHUNK); // the pool may hold 32/16 = 2 chunks
        ChunkMemory memory = new ChunkMemory();
        try (ChunkPool pool = new ChunkPool(budget, memory, 64)) {
            assertEquals(2, pool.capacity(), "a sixteenth of the budget at most");
            // the last chunk is 4 KiB: it never comes from the pool
            RamNamespace ns =
                    new RamNamespace(1, 40L * CHUNK + 4096, 4096, UUID.randomUUID(), false, budget, memory, pool);
            await(() -> pool.available() == 2, "pool filled");
            ByteBuffer data = bytes(CHUNK, 2);
            for (int i = 0; i < 31; i++) {
                assertEquals(Status.SUCCESS, ns.write(data, 0, (long) i * CHUNK, CHUNK), "chunk " + i);
            }
            await(
                    () -> pool.available() == 1 && budget.used() == 32L * CHUNK,
                    "budget spent (31 chunks written, 1 pooled)");
            assertEquals(31L * CHUNK, pool.namespaceBytes());
            long refusals = budget.refusals();

            // the namespace's last, shorter chunk: the pool gives its chunk back to make room
            assertEquals(Status.SUCCESS, ns.write(data, 0, 40L * CHUNK, 4096));
            assertEquals(0, pool.available());
            assertEquals(refusals, budget.refusals(), "no refusal: the pool made room");
            assertEquals(31L * CHUNK + 4096, pool.namespaceBytes());

            assertEquals(Status.CAPACITY_EXCEEDED, ns.write(data, 0, 31L * CHUNK, CHUNK));
            assertTrue(budget.refusals() > refusals, "the refusal is counted");
            assertTrue(budget.used() <= budget.limit());

            // memory freed by a deallocate goes back to the pool (within a retry interval)
            ns.zero(0, 4L * CHUNK, true);
            await(() -> pool.available() == 2, "pool refilled after memory was freed");
            long taken = pool.taken();
            assertEquals(Status.SUCCESS, ns.write(data, 0, 0, CHUNK));
            assertEquals(taken + 1, pool.taken());
            ns.free();
        }
        assertEquals(0, budget.used());
    }

    @Test
    void anEmptyPoolFallsBackToAllocatingOnTheWritingThread() {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        ChunkMemory memory = new ChunkMemory();
        ChunkPool pool = new ChunkPool(budget, memory, 8);
        pool.close(); // closed before it ever started: always empty
        RamNamespace ns = new RamNamespace(1, 1L << 24, 4096, UUID.randomUUID(), false, budget, memory, pool);
        ByteBuffer data = bytes(4096, 3);
        assertEquals(Status.SUCCESS, ns.write(data, 0, 0, 4096));
        assertEquals(1, pool.missed());
        assertEquals(CHUNK, budget.used());
        assertEquals(CHUNK, pool.namespaceBytes());
        ns.free();
        assertEquals(0, budget.used());
    }

    /** Chunks from slabs (the default where the native library is built) and chunk by chunk ({@code off}). */
    @ParameterizedTest
    @EnumSource(
            value = SlabMode.class,
            names = {"AUTO", "OFF"})
    void aFirstWriteFromThePoolAllocatesNothingOnTheWritingThread(SlabMode mode) throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        MemoryBudget budget = new MemoryBudget(1L << 30);
        ChunkMemory memory = new ChunkMemory();
        try (ChunkPool pool = new ChunkPool(budget, memory, 64, mode)) {
            RamNamespace ns = new RamNamespace(1, 1L << 29, 4096, UUID.randomUUID(), false, budget, memory, pool);
            ByteBuffer data = ByteBuffer.allocateDirect(CHUNK);
            int next = 0;
            // warm up (JIT, the leaf array), then measure rounds of 16 first writes each, 16 chunks ready at the start
            long perWrite = Long.MAX_VALUE;
            for (int round = 0; round < 40; round++) {
                await(() -> pool.available() >= 16, "16 chunks ready");
                long missed = pool.missed();
                long before = mx.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 16; i++) {
                    assertEquals(Status.SUCCESS, ns.write(data, 0, (long) next++ * CHUNK, CHUNK));
                }
                long after = mx.getCurrentThreadAllocatedBytes();
                assertEquals(missed, pool.missed(), "every write found a chunk ready");
                if (round >= 20) {
                    perWrite = Math.min(perWrite, (after - before) / 16);
                }
            }
            assertNotNull(ns);
            assertEquals(0, perWrite, "heap bytes per first write taken from the pool");
            ns.free();
        }
        assertEquals(0, budget.used());
    }
}

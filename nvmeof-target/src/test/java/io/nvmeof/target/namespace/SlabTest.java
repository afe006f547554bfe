package io.nvmeof.target.namespace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nvmeof.core.command.Status;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Namespace RAM in 2 MiB slabs: one budget reservation shared by 16 chunks, each chunk's pages and budget share given
 * back exactly once, the slab unmapped with its last chunk; the huge page advice and its fallbacks; the memory
 * observers (RDMA registration) see every slab chunk before use and let go of each once.
 */
@Timeout(60)
class SlabTest {
    private static final int CHUNK = RamNamespace.CHUNK_SIZE;

    /** Where the native helper is in the build (gcc at build time), it must load: a broken build must not pass. */
    private static void assumeNative() {
        boolean built = NativeLibrary.class.getClassLoader().getResource(NativeLibrary.NATIVE_RESOURCE) != null;
        assumeTrue(built, "libnvmeoffile.so not built (no gcc at build time): slabs not tested");
        assertNull(NativeLibrary.unavailableReason(), "the native helper is built but does not load");
    }

    /** The /proc/self/smaps fields (kB) of the mapping that starts at {@code address}; empty if there is none. */
    private static Map<String, String> smaps(long address) throws Exception {
        Map<String, String> fields = new TreeMap<>();
        boolean in = false;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                long start = Long.parseUnsignedLong(line.substring(0, line.indexOf('-')), 16);
                in = start == address;
            } else if (in) {
                int colon = line.indexOf(':');
                fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }

    private static long kb(Map<String, String> smaps, String field) {
        return Long.parseLong(smaps.get(field).replace(" kB", ""));
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting: " + what);
            }
            Thread.sleep(2);
        }
    }

    @Test
    void modesParseAndUnknownOnesAreRefused() {
        assertEquals(SlabMode.AUTO, SlabMode.parse(null));
        assertEquals(SlabMode.AUTO, SlabMode.parse("auto"));
        assertEquals(SlabMode.HUGE, SlabMode.parse(" Huge "));
        assertEquals(SlabMode.SMALL, SlabMode.parse("small"));
        assertEquals(SlabMode.OFF, SlabMode.parse("OFF"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SlabMode.parse("giant"));
        assertTrue(e.getMessage().contains("io.nvmeof.chunkSlabs"), e.getMessage());
    }

    @Test
    void theSystemPropertyChoosesTheModeOfAPool() {
        String old = System.getProperty(SlabMode.PROPERTY);
        try {
            System.setProperty(SlabMode.PROPERTY, "off");
            assertEquals(SlabMode.OFF, new ChunkPool(new MemoryBudget(1L << 30), new ChunkMemory(), 64).mode());
            System.setProperty(SlabMode.PROPERTY, "small");
            assertEquals(
                    SlabMemory.effective(SlabMode.SMALL),
                    new ChunkPool(new MemoryBudget(1L << 30), new ChunkMemory(), 64).mode());
            System.setProperty(SlabMode.PROPERTY, "giant");
            assertThrows(
                    IllegalArgumentException.class,
                    () -> new ChunkPool(new MemoryBudget(1L << 30), new ChunkMemory(), 64),
                    "a bad value stops the target at start, not silently");
        } finally {
            if (old == null) {
                System.clearProperty(SlabMode.PROPERTY);
            } else {
                System.setProperty(SlabMode.PROPERTY, old);
            }
        }
    }

    @Test
    void autoChoosesSmallPagesWhereTheBalloonReportsFreePagesAndHugeOnesElsewhere() {
        assumeNative();
        SlabMode auto = SlabMemory.effective(SlabMode.AUTO);
        assertEquals(SlabMemory.freePageReporting() ? SlabMode.SMALL : SlabMode.HUGE, auto);
        assertEquals(SlabMode.HUGE, SlabMemory.effective(SlabMode.HUGE), "an explicit mode is kept");
        assertEquals(SlabMode.OFF, SlabMemory.effective(SlabMode.OFF));
        assertEquals(auto, new ChunkPool(new MemoryBudget(1L << 30), new ChunkMemory(), 64, SlabMode.AUTO).mode());
    }

    @Test
    void aSlabIsBackedAtOnceAndGivesEachChunkBackOnceThenUnmaps() throws Exception {
        assumeNative();
        MemoryBudget budget = new MemoryBudget(64L << 20);
        assertTrue(budget.tryReserve(Slab.SIZE));
        Slab slab = Slab.map(budget, false);
        assertNotNull(slab);
        assertEquals(0, slab.address() % Slab.SIZE, "aligned to its size");
        Map<String, String> before = smaps(slab.address());
        assertEquals(Slab.SIZE / 1024, kb(before, "Size"));
        assertEquals(Slab.SIZE / 1024, kb(before, "Rss"), "backed before any write");

        List<ByteBuffer> chunks = new ArrayList<>();
        for (int i = 0; i < Slab.CHUNKS; i++) {
            ByteBuffer b = slab.chunk(i);
            assertTrue(b.isDirect());
            assertEquals(CHUNK, b.capacity());
            for (int at = 0; at < CHUNK; at += 4096) {
                assertEquals(0, b.get(at), "zeroed");
            }
            b.putInt(0, i + 1);
            chunks.add(b);
        }
        for (int i = 0; i < Slab.CHUNKS; i++) {
            assertEquals(i + 1, chunks.get(i).getInt(0), "chunks do not overlap");
        }

        slab.giveBack(3);
        assertEquals(Slab.SIZE - CHUNK, budget.used(), "a given-back chunk leaves the budget at once");
        assertEquals((Slab.SIZE - CHUNK) / 1024, kb(smaps(slab.address()), "Rss"), "and its pages the process");
        for (int i = 0; i < Slab.CHUNKS - 1; i++) {
            if (i != 3) {
                slab.giveBack(i);
            }
        }
        assertEquals(1, slab.held());
        assertEquals(CHUNK, budget.used());
        assertEquals(Slab.CHUNKS, chunks.get(Slab.CHUNKS - 1).getInt(0), "the last chunk kept its data");
        assertFalse(smaps(slab.address()).isEmpty(), "still mapped while a chunk is held");

        slab.giveBack(Slab.CHUNKS - 1);
        assertEquals(0, slab.held());
        assertEquals(0, budget.used());
        assertTrue(smaps(slab.address()).isEmpty(), "unmapped with its last chunk");
        assertThrows(IllegalStateException.class, () -> slab.giveBack(0), "a chunk given back too often is a bug");
    }

    @Test
    void theHugePageAdviceMakesTheSlabEligibleAndSmallSlabsAreNot() throws Exception {
        assumeNative();
        String thp = SlabMemory.thpSetting();
        assumeTrue(thp.contains("[madvise]"), "THP is not 'madvise' here (" + thp + "): eligibility not tested");
        MemoryBudget budget = new MemoryBudget(64L << 20);
        assertTrue(budget.tryReserve(2L * Slab.SIZE));
        Slab huge = Slab.map(budget, true);
        Slab small = Slab.map(budget, false);
        assertTrue(huge.hugePageAdvised());
        assertFalse(small.hugePageAdvised());
        assertEquals("1", smaps(huge.address()).get("THPeligible"), "advised for a huge page");
        assertEquals("0", smaps(small.address()).get("THPeligible"), "left to small pages");
        assertEquals(Slab.SIZE / 1024, kb(smaps(huge.address()), "Rss"));
        for (int i = 0; i < Slab.CHUNKS; i++) {
            huge.giveBack(i);
            small.giveBack(i);
        }
        assertEquals(0, budget.used());
    }

    @Test
    void aSlabPoolRegistersEveryChunkBeforeUseAndCountsAndReturnsItsMemory() throws Exception {
        assumeNative();
        for (SlabMode mode : new SlabMode[] {SlabMode.HUGE, SlabMode.SMALL}) {
            MemoryBudget budget = new MemoryBudget(1L << 30);
            ChunkMemory memory = new ChunkMemory();
            ChunkMemoryTest.Recorder rdma = new ChunkMemoryTest.Recorder();
            memory.attach(rdma);
            RamNamespace ns;
            try (ChunkPool pool = new ChunkPool(budget, memory, 40, mode)) {
                assertEquals(mode, pool.mode());
                assertEquals(32, pool.capacity(), "whole slabs: 40 chunks round down to 2 slabs");
                ns = new RamNamespace(1, 1L << 28, 4096, UUID.randomUUID(), false, budget, memory, pool);
                await(() -> pool.available() == 32, "two slabs ready");
                assertEquals(2L * Slab.SIZE, budget.used(), mode + ": the slabs count against the budget");
                assertEquals(0, pool.namespaceBytes());
                synchronized (memory) {
                    assertEquals(33, rdma.allocated, "the zero buffer and every slab chunk registered before use");
                }

                // a first write takes a slab chunk the observer knows, and the data reads back
                ByteBuffer data = ByteBuffer.allocate(8192);
                data.putLong(0, 0x1122334455667788L);
                assertEquals(Status.SUCCESS, ns.write(data, 0, 5L * CHUNK, 8192));
                assertEquals(1, pool.taken());
                ByteBuffer back = ByteBuffer.allocate(8);
                ns.readInto(back, 0, 5L * CHUNK, 8);
                assertEquals(0x1122334455667788L, back.getLong(0));
                assertEquals(CHUNK, pool.namespaceBytes());

                // 16 more first writes: the pool is a slab short and makes one; the budget counts 3 slabs
                for (int i = 0; i < 16; i++) {
                    assertEquals(Status.SUCCESS, ns.write(data, 0, (100L + i) * CHUNK, 8192));
                }
                await(() -> pool.available() == 31, "refilled with one slab");
                assertEquals(3L * Slab.SIZE, budget.used());
                assertEquals(17L * CHUNK, pool.namespaceBytes());

                // deallocate: the chunk's memory and budget share go back, and its registration
                int freedBefore;
                synchronized (memory) {
                    freedBefore = rdma.freed;
                }
                ns.zero(5L * CHUNK, CHUNK, true);
                assertEquals(3L * Slab.SIZE - CHUNK, budget.used(), mode + ": deallocate shrinks the budget");
                synchronized (memory) {
                    assertEquals(freedBefore + 1, rdma.freed, "the observer let go of the deallocated chunk");
                }
                ns.readInto(back, 0, 5L * CHUNK, 8);
                assertEquals(0, back.getLong(0), "deallocated blocks read as zeroes");
            }
            assertEquals(16L * CHUNK, budget.used(), "closing the pool frees only the chunks it still held");
            ns.free();
            assertEquals(0, budget.used(), mode + ": every slab given back");
            assertEquals(1, memory.liveCount(), "only the zero buffer is left registered");
            synchronized (memory) {
                assertEquals(rdma.allocated - 1, rdma.freed, "each chunk let go of exactly once");
                assertEquals(1, rdma.live.size());
            }
        }
    }

    @Test
    void withoutSlabsThePoolMakesChunksOneByOne() throws Exception {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        ChunkMemory memory = new ChunkMemory();
        try (ChunkPool off = new ChunkPool(budget, memory, 40, SlabMode.OFF);
                ChunkPool tiny = new ChunkPool(budget, memory, 8, SlabMode.HUGE)) {
            assertEquals(SlabMode.OFF, off.mode());
            assertEquals(40, off.capacity(), "no rounding to slabs");
            assertEquals(SlabMode.OFF, tiny.mode(), "a pool smaller than a slab makes chunks one by one");
            off.start();
            await(() -> off.available() == 40, "filled chunk by chunk");
            assertEquals(40L * CHUNK, budget.used());
            RamNamespace ns = new RamNamespace(1, 1L << 28, 4096, UUID.randomUUID(), false, budget, memory, off);
            assertEquals(Status.SUCCESS, ns.write(ByteBuffer.allocate(4096), 0, 0, 4096));
            assertEquals(1, off.taken());
            assertEquals(39, off.available(), "one at a time, refilled only once down to half");
            ns.zero(0, CHUNK, true);
            assertEquals(39L * CHUNK, budget.used(), "the deallocated chunk went back to the budget");
            ns.free();
        }
        assertEquals(0, budget.used());
    }

    @Test
    void autoMeansHugePagesForAPreallocatedNamespaceWhereverTheHelperLoads() {
        assumeNative();
        assertEquals(SlabMode.HUGE, SlabMemory.forPreallocation(SlabMode.AUTO), "even where the balloon reports");
        assertEquals(SlabMode.HUGE, SlabMemory.forPreallocation(SlabMode.HUGE));
        assertEquals(SlabMode.SMALL, SlabMemory.forPreallocation(SlabMode.SMALL));
        assertEquals(SlabMode.OFF, SlabMemory.forPreallocation(SlabMode.OFF));
    }

    @Test
    void aPreallocatedNamespaceIsSlabsWhere2MiBFitAndChunksOfItsOwnForTheTail() throws Exception {
        assumeNative();
        assumeTrue(!SlabMemory.thpSetting().contains("[never]"), "no transparent huge pages here");
        // two slabs, three chunks more and a shorter last chunk
        long size = 2L * Slab.SIZE + 3L * CHUNK + 8192;
        String old = System.getProperty(SlabMode.PROPERTY);
        try {
            for (SlabMode mode : new SlabMode[] {SlabMode.AUTO, SlabMode.SMALL, SlabMode.OFF}) {
                System.setProperty(SlabMode.PROPERTY, mode.name().toLowerCase(Locale.ROOT));
                preallocateAndCheck(size, mode == SlabMode.AUTO ? 2L * Slab.SIZE : 0, mode);
            }
        } finally {
            if (old == null) {
                System.clearProperty(SlabMode.PROPERTY);
            } else {
                System.setProperty(SlabMode.PROPERTY, old);
            }
        }
    }

    /** Preallocates a namespace of {@code size} as -Dio.nvmeof.chunkSlabs says ({@code mode}) and checks it. */
    private static void preallocateAndCheck(long size, long hugePageBytes, SlabMode mode) {
        MemoryBudget budget = new MemoryBudget(size); // exactly the namespace: a slab too many would be refused
        ChunkMemory memory = new ChunkMemory();
        ChunkMemoryTest.Recorder rdma = new ChunkMemoryTest.Recorder();
        memory.attach(rdma);
        RamNamespace ns = RamNamespace.preallocated(1, size, 4096, UUID.randomUUID(), false, budget, memory);
        assertEquals(size, budget.used(), mode + ": every byte counted once");
        assertEquals(size, ns.allocatedBytes());
        assertEquals(hugePageBytes, ns.hugePageBytes(), mode + ": huge page bytes");
        synchronized (memory) {
            assertEquals(1 + 36, rdma.allocated, mode + ": the zero buffer and all 36 chunks registered");
        }
        // data across the end of each slab (the second one into a chunk of its own) reads back
        for (long at : new long[] {Slab.SIZE - CHUNK, 2L * Slab.SIZE - CHUNK}) {
            ByteBuffer data = NamespaceBytes.filled(2 * CHUNK, (int) (at / CHUNK));
            assertEquals(Status.SUCCESS, ns.write(data, 0, at, 2 * CHUNK));
            assertArrayEquals(data.array(), NamespaceBytes.read(ns, at, 2 * CHUNK), mode + " at " + at);
        }
        assertEquals(0, budget.refusals(), mode + ": writes into preallocated memory take no more");
        ns.free();
        assertEquals(0, budget.used(), mode + ": every slab and chunk given back");
        synchronized (memory) {
            assertEquals(rdma.allocated - 1, rdma.freed, mode + ": each chunk let go of exactly once");
        }
    }
}

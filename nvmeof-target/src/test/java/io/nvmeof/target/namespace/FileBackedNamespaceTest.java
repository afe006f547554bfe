package io.nvmeof.target.namespace;

import static io.nvmeof.target.namespace.NamespaceBytes.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nvmeof.core.command.Status;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A namespace in a memory-mapped file: sparse creation, data across close and reopen, zeroing, holes, size checks. */
class FileBackedNamespaceTest {
    private static final int BS = 4096;
    private static final int CHUNK = RamNamespace.CHUNK_SIZE;

    @TempDir
    Path dir;

    private final MemoryBudget budget = new MemoryBudget(1L << 20);
    private final ChunkMemory memory = new ChunkMemory();

    private RamNamespace open(Path file, long size) {
        return RamNamespace.fileBacked(1, size, BS, UUID.randomUUID(), false, budget, memory, file);
    }

    private static ByteBuffer random(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    @Test
    void writesSurviveCloseAndReopenAndUseNoBudget() throws Exception {
        Path file = dir.resolve("ns1.img");
        long size = 8L * CHUNK * 1024; // 1 GiB: more chunks than the 1 MiB budget could hold
        RamNamespace ns = open(file, size);
        assertTrue(Files.exists(file));
        assertEquals(size, Files.size(file));
        // across a chunk boundary, at the far end and in the second half of the file
        ByteBuffer a = random(3 * BS, 1);
        ByteBuffer b = random(BS, 2);
        ByteBuffer c = random(2 * CHUNK, 3);
        assertEquals(Status.SUCCESS, ns.write(a, 0, CHUNK - BS, 3 * BS));
        assertEquals(Status.SUCCESS, ns.write(b, 0, size - BS, BS));
        assertEquals(Status.SUCCESS, ns.write(c, 0, size / 2, 2 * CHUNK));
        assertEquals(0, budget.used(), "file pages are not counted as RAM");
        assertEquals(0, ns.allocatedBytes());
        ns.free();

        RamNamespace again = open(file, size);
        assertArrayEquals(a.array(), read(again, CHUNK - BS, 3 * BS));
        assertArrayEquals(b.array(), read(again, size - BS, BS));
        assertArrayEquals(c.array(), read(again, size / 2, 2 * CHUNK));
        assertArrayEquals(new byte[BS], read(again, 5L * CHUNK, BS), "never written: zeroes");
        assertEquals(Status.SUCCESS, again.compare(ByteBuffer.wrap(b.array()), 0, size - BS, BS));
        again.free();
        assertEquals(0, budget.used());
    }

    @Test
    void aNewFileIsSparseAndOpensAtOnceAtOneTebibyte() throws Exception {
        Path file = dir.resolve("big.img");
        long size = 1L << 40;
        long start = System.nanoTime();
        RamNamespace ns = open(file, size);
        ns.free();
        RamNamespace again = open(file, size); // reopening an existing 1 TiB file
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(size, Files.size(file));
        // stat(1): the JDK does not expose st_blocks
        Process stat = new ProcessBuilder("stat", "-c", "%b", file.toString()).start();
        long allocated = Long.parseLong(new String(stat.getInputStream().readAllBytes()).trim());
        assertEquals(0, stat.waitFor());
        assertTrue(allocated * 512 < (1L << 20), "sparse: " + allocated + " 512-byte blocks allocated");
        assertEquals(Status.SUCCESS, again.write(random(BS, 4), 0, size - BS, BS));
        again.free();
        // Not a speed assertion (the machine is shared): a generous bound that only a pre-touching open would miss.
        assertTrue(millis < 10_000, "opening took " + millis + " ms");
    }

    /** The bytes {@code file} occupies on its device, as {@code du} counts them (stat(1): the JDK has no st_blocks). */
    static long diskBytes(Path file) throws Exception {
        Process stat = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).start();
        String[] out = new String(stat.getInputStream().readAllBytes()).trim().split(" ");
        assertEquals(0, stat.waitFor());
        return Long.parseLong(out[0]) * Long.parseLong(out[1]);
    }

    /** Where the native helper is in the build (gcc at build time), it must load: a broken build must not pass. */
    static void assumeHolePunching() {
        boolean built = FileHoles.class.getClassLoader().getResource(FileHoles.NATIVE_RESOURCE) != null;
        assumeTrue(built, "libnvmeoffile.so not built (no gcc at build time): hole punching not tested");
        assertNull(FileHoles.unavailableReason(), "the native helper is built but does not load");
    }

    @Test
    void deallocatePunchesHolesSoTheFileShrinksAndReadsZero() throws Exception {
        assumeHolePunching();
        Path file = dir.resolve("holes.img");
        long size = 8L * CHUNK;
        RamNamespace ns = open(file, size);
        assertTrue(ns.deallocates(), "holes can be punched on this file system");
        assertTrue(ns.persistent());
        ns.write(random(8 * CHUNK, 5), 0, 0, 8 * CHUNK);
        ns.force(0, -1); // allocated on the device, not just reserved
        long before = diskBytes(file);
        assertTrue(before >= size, "fully written: " + before);
        assertEquals(before, ns.fileAllocatedBytes(), "the helper's st_blocks is stat's");

        // Unaligned on both ends: the partial file system blocks are zeroed through the mapping, the rest punched.
        long from = CHUNK + 1000;
        long length = 5L * CHUNK - 3000;
        ns.zero(from, length, true);
        long after = diskBytes(file);
        assertTrue(after <= before - (length - 2L * 4096), "du shrank: " + before + " -> " + after);
        byte[] expected = random(8 * CHUNK, 5).array();
        java.util.Arrays.fill(expected, (int) from, (int) (from + length), (byte) 0);
        assertArrayEquals(expected, read(ns, 0, 8 * CHUNK), "the range reads as zeroes, its neighbours as written");

        // A range inside one file system block only zeroes; Write Zeroes without DEAC writes zeroes.
        ns.zero(7L * CHUNK + 100, 200, true);
        ns.zero(7L * CHUNK + BS, BS, false);
        java.util.Arrays.fill(expected, 7 * CHUNK + 100, 7 * CHUNK + 300, (byte) 0);
        java.util.Arrays.fill(expected, 7 * CHUNK + BS, 7 * CHUNK + 2 * BS, (byte) 0);
        // Written again where punched: the blocks come back.
        ByteBuffer again = random(BS, 6);
        assertEquals(Status.SUCCESS, ns.write(again, 0, 3L * CHUNK, BS));
        System.arraycopy(again.array(), 0, expected, 3 * CHUNK, BS);
        ns.free();

        RamNamespace reopened = open(file, size);
        assertArrayEquals(expected, read(reopened, 0, 8 * CHUNK), "and so after a restart");
        reopened.free();
        assertEquals(0, budget.used());
    }

    @Test
    void punchedChunksAreRegisteredAnewAndNothingLeaks() throws Exception {
        assumeHolePunching();
        ChunkMemoryTest.Recorder rdma = new ChunkMemoryTest.Recorder();
        memory.attach(rdma);
        int zeroBuffer = rdma.allocated; // the shared zero buffer is registered too
        RamNamespace ns = open(dir.resolve("reg.img"), 4L * CHUNK);
        ns.write(random(4 * CHUNK, 7), 0, 0, 4 * CHUNK);
        assertEquals(zeroBuffer + 4, rdma.allocated);
        // A read in flight holds chunk 1 (as a transport sending it would) while the hole is punched.
        FakeHeld held = new FakeHeld(ns, CHUNK);
        ns.zero(CHUNK, 2L * CHUNK, true);
        assertEquals(1, rdma.freed, "chunk 2 let go at once; chunk 1 stays registered while held");
        held.release();
        assertEquals(2, rdma.freed, "the pinned pages' registrations are gone");
        assertArrayEquals(new byte[2 * CHUNK], read(ns, CHUNK, 2 * CHUNK), "the holes read as zeroes");
        assertEquals(zeroBuffer + 4, rdma.allocated, "from the zero buffer: registering a hole would allocate it");
        assertEquals(Status.SUCCESS, ns.write(random(BS, 9), 0, CHUNK, BS));
        assertEquals(zeroBuffer + 5, rdma.allocated, "a write gets a new chunk, registered on the file's new pages");
        ns.free();
        memory.detach(rdma);
        assertEquals(rdma.allocated, rdma.freed, "every registration let go exactly once");
        assertTrue(rdma.live.isEmpty());
    }

    /** A chunk reference held the way a transport holds a read's data ({@code RamNamespace#acquire}). */
    private static final class FakeHeld {
        private final Chunk chunk;

        FakeHeld(RamNamespace ns, long offset) {
            this.chunk = ns.acquire((int) (offset / CHUNK));
        }

        void release() {
            chunk.release();
        }
    }

    @Test
    void commandsRacingTheRemovalOfAFileNamespaceFailCleanly() {
        RamNamespace ns = open(dir.resolve("gone.img"), 4L << 30); // four 1 GiB regions, none mapped yet
        assertEquals(Status.SUCCESS, ns.write(random(BS, 8), 0, 0, BS));
        ns.free(); // removed: the file is closed
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                ns.write(random(BS, 9), 0, 3L << 30, BS),
                "a region never mapped cannot be mapped any more");
        assertArrayEquals(new byte[BS], read(ns, 2L << 30, BS), "a read racing the removal reads zeroes");
        ns.zero(1L << 30, BS, false); // nothing to zero, no failure
        ns.zero(0, 1L << 20, true); // a deallocate that waited for the worker: no punch on a closed descriptor
        assertEquals(-1, ns.fileAllocatedBytes());
    }

    @Test
    void readsOfHolesCreateNoChunkAndAllocateNothing() throws Exception {
        assumeHolePunching();
        ChunkMemoryTest.Recorder rdma = new ChunkMemoryTest.Recorder();
        memory.attach(rdma);
        int zeroBuffer = rdma.allocated;
        Path file = dir.resolve("sparse.img");
        RamNamespace ns = open(file, 64L * CHUNK);
        assertArrayEquals(new byte[4 * CHUNK], read(ns, 10L * CHUNK, 4 * CHUNK));
        ns.zero(20L * CHUNK, CHUNK, false); // Write Zeroes of a hole: nothing to do
        assertEquals(zeroBuffer, rdma.allocated, "no chunk for a hole");
        ns.write(random(BS, 10), 0, 30L * CHUNK + BS, BS);
        ns.free();
        RamNamespace again = open(file, 64L * CHUNK);
        byte[] chunk = read(again, 30L * CHUNK, CHUNK); // data in the file from the last run: a chunk
        assertArrayEquals(random(BS, 10).array(), java.util.Arrays.copyOfRange(chunk, BS, 2 * BS));
        assertEquals(zeroBuffer + 2, rdma.allocated, "one chunk per run, for the range with data");
        again.force(0, -1);
        assertTrue(diskBytes(file) <= CHUNK, "only the written range takes blocks: " + diskBytes(file));
        again.free();
        memory.detach(rdma);
    }

    @Test
    void writeZeroesWithoutDeallocateZeroesInTheFile() {
        Path file = dir.resolve("z.img");
        RamNamespace ns = open(file, 4L * CHUNK);
        ns.write(random(4 * CHUNK, 5), 0, 0, 4 * CHUNK);
        ns.zero(CHUNK, CHUNK, false);
        ns.zero(3L * CHUNK + BS, BS, false);
        ns.free();
        RamNamespace again = open(file, 4L * CHUNK);
        byte[] all = read(again, 0, 4 * CHUNK);
        byte[] expected = random(4 * CHUNK, 5).array();
        java.util.Arrays.fill(expected, CHUNK, 2 * CHUNK, (byte) 0);
        java.util.Arrays.fill(expected, 3 * CHUNK + BS, 3 * CHUNK + 2 * BS, (byte) 0);
        assertArrayEquals(expected, all);
        again.force(0, -1);
        again.force(BS, BS);
        again.free();
    }

    @Test
    void aSizeMismatchIsAClearErrorAndChangesNothing() throws Exception {
        Path file = dir.resolve("m.img");
        open(file, 2L * CHUNK).free();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open(file, 4L * CHUNK));
        assertTrue(e.getMessage().contains("has " + 2L * CHUNK + " bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("size=" + 2L * CHUNK), e.getMessage());
        assertEquals(2L * CHUNK, Files.size(file), "not resized");
        Path notAFile = Files.createDirectory(dir.resolve("d"));
        IllegalArgumentException d = assertThrows(IllegalArgumentException.class, () -> open(notAFile, CHUNK));
        assertTrue(d.getMessage().contains(notAFile.toString()), d.getMessage());
        IllegalArgumentException missingDir =
                assertThrows(IllegalArgumentException.class, () -> open(dir.resolve("no/such/dir.img"), CHUNK));
        assertTrue(missingDir.getMessage().contains("cannot open"), missingDir.getMessage());
    }

    @Test
    void readsOfAFileNamespaceHandOutMappedChunksWithoutCopy() {
        Path file = dir.resolve("r.img");
        RamNamespace ns = open(file, 2L * CHUNK);
        ns.write(random(BS, 6), 0, BS, BS);
        Chunk c = ns.acquire(0);
        assertTrue(c.buffer.isDirect());
        assertEquals(CHUNK, c.capacity());
        assertEquals(2, memory.liveCount(), "the chunk and the zero buffer are known to the memory observers");
        c.release();
        ns.free();
        assertEquals(1, memory.liveCount(), "freeing the namespace lets observers go of its chunks");
    }
}

package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.target.namespace.ChunkPool;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * First writes into unwritten namespace RAM allocate nothing on the target's I/O threads (NVMe/TCP event loops): each
 * 4 KiB write goes to a 128 KiB chunk never written before, which the target's {@link ChunkPool} made ahead. Writes go
 * in batches no larger than the chunks ready, so every one is served by the pool (asserted), and the heap bytes the
 * {@code nvme-tcp-io-*} threads allocated over the measured writes are divided by their number (the least of three
 * passes).
 */
@Timeout(180)
class TargetFirstWriteAllocationTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("1G").build();

    /** Loose, as in TargetAllocationWithMetricsTest: a per-I/O object (16 B or more) fails it. */
    private static final long MAX_BYTES_PER_IO = 8;

    private static final int BLOCKS_PER_CHUNK = 32; // 128 KiB chunks of 4 KiB blocks
    private static final int BATCH = 16;

    private static long targetThreadBytes() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("nvme-tcp-io-")) {
                sum += mx.getThreadAllocatedBytes(t.getId());
            }
        }
        return sum;
    }

    private static void awaitReady(ChunkPool pool) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (pool.available() < BATCH) {
            assertTrue(System.nanoTime() < deadline, "the chunk pool did not refill");
            Thread.sleep(1);
        }
    }

    /** Writes {@code batches × BATCH} first writes from chunk {@code firstChunk} on; returns target bytes allocated. */
    private static long firstWrites(Namespace ns, ByteBuffer w, ChunkPool pool, int firstChunk, int batches)
            throws Exception {
        long bytes = 0;
        int chunk = firstChunk;
        for (int b = 0; b < batches; b++) {
            awaitReady(pool); // outside the measured bytes: the pool's thread allocates, not the I/O threads
            long before = targetThreadBytes();
            for (int i = 0; i < BATCH; i++) {
                ns.write((long) chunk++ * BLOCKS_PER_CHUNK, 1, w);
            }
            bytes += targetThreadBytes() - before;
        }
        return bytes;
    }

    @Test
    void firstWritesFromThePoolAllocateNothingOnTheIoThreads() throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        ChunkPool pool = target.target().chunkPool();
        try (Controller c = Nvme.connect(target.uri("queues=1&depth=8"))) {
            Namespace ns = c.namespace(1);
            ByteBuffer w = ByteBuffer.allocateDirect(4096);
            ByteBuffer r = ByteBuffer.allocateDirect(4096);
            for (int i = 0; i < 20_000; i++) { // warm up the write and read paths (JIT, buffers) on one chunk
                ns.write(i % BLOCKS_PER_CHUNK, 1, w);
                ns.read(i % BLOCKS_PER_CHUNK, 1, r);
            }
            firstWrites(ns, w, pool, 1, 60); // and first writes (chunks 1..960, all in the first leaf)
            // Three passes of 640 first writes (chunks 1024.., 1700.., 2400.., all in the first leaf); the least per
            // I/O counts, so a one-off allocation on the event loop (a keep-alive, a timer) does not decide it.
            long missed = pool.missed();
            int batches = 40;
            long perIo = Long.MAX_VALUE;
            for (int start : new int[] {1024, 1700, 2400}) {
                long bytes = firstWrites(ns, w, pool, start, batches);
                perIo = Math.min(perIo, bytes / ((long) batches * BATCH));
            }
            assertEquals(missed, pool.missed(), "every measured write took a chunk from the pool");
            System.out.println(
                    "target I/O threads, first writes from the chunk pool: ~" + perIo + " heap bytes per I/O");
            assertTrue(perIo <= MAX_BYTES_PER_IO, perIo + " B per first write on the target's I/O threads");
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }
}

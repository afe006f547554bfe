package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.target.stats.LatencyStats;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The per-queue counters the I/O path updates on every completion: what they count, and that counting allocates
 * nothing per I/O (measured with {@code com.sun.management.ThreadMXBean} on this thread, the way the transport's
 * allocation tests measure the I/O threads), while another thread reads them as a scrape does.
 */
class QueueCountersTest {
    private static final int READ = NvmOpcode.READ.code();
    private static final int WRITE = NvmOpcode.WRITE.code();

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    private static void io(QueueCounters q, int n) {
        for (int i = 0; i < n; i++) {
            q.arrived();
            q.completed(READ, 1, Status.SUCCESS, 4096, System.nanoTime() - 30_000);
            q.arrived();
            q.completed(WRITE, 2, Status.SUCCESS, 8192, System.nanoTime() - 200_000);
            q.arrived();
            q.completed(READ, 1, Status.dnr(Status.LBA_OUT_OF_RANGE), 4096, System.nanoTime());
        }
    }

    @Test
    void countsWhatCompleted() {
        QueueCounters q = new QueueCounters(null, null, 1);
        io(q, 10);
        q.arrived(); // still in flight
        assertEquals(10, q.count(QueueCounters.READS));
        assertEquals(10, q.count(QueueCounters.WRITES));
        assertEquals(40960, q.count(QueueCounters.BYTES_READ));
        assertEquals(81920, q.count(QueueCounters.BYTES_WRITTEN));
        assertEquals(1, q.inFlight());
        assertEquals(Map.of(Status.LBA_OUT_OF_RANGE, 10L), q.errorsByStatus());
        assertEquals(20, q.latency(QueueCounters.LATENCY_READ).count(), "failed reads have a latency too");
        LatencyStats w = q.latency(QueueCounters.LATENCY_WRITE);
        assertEquals(10, w.count());
        long[] b = w.bucketCounts();
        for (int i = 0; i < LatencyStats.bucketOf(200_000); i++) {
            assertEquals(0, b[i], "no write faster than 200 us, bucket " + i);
        }
        assertTrue(w.sumNanos() >= 10 * 200_000L);
        assertEquals(10, q.namespace(1)[QueueCounters.READS]);
        assertEquals(81920, q.namespace(2)[QueueCounters.BYTES_WRITTEN]);
        assertNull(q.namespace(3));
    }

    @Test
    void anIdleQueueHoldsNoPerStatusOrPerNamespaceTables() {
        new QueueCounters(null, null, 1); // warm up (class loading)
        long before = allocated();
        QueueCounters q = new QueueCounters(null, null, 1);
        long bytes = allocated() - before;
        // the error table (2048 longs) and a 1025-entry namespace table used to be allocated here: ~20 KiB per queue
        assertTrue(bytes < 2048, "a new queue's counters took " + bytes + " bytes");
        assertEquals(0, q.maxNsid());
        assertEquals(Map.of(), q.errorsByStatus());
        q.arrived();
        q.completed(READ, 3, Status.SUCCESS, 4096, System.nanoTime());
        assertEquals(3, q.maxNsid(), "the table grows to the highest NSID touched");
        assertNull(q.namespace(1));
        assertEquals(1, q.namespace(3)[QueueCounters.READS]);
        q.arrived();
        q.completed(READ, 1, Status.SUCCESS, 4096, System.nanoTime());
        assertEquals(1, q.namespace(1)[QueueCounters.READS]);
        assertEquals(1, q.namespace(3)[QueueCounters.READS], "entries carry over when the table grows");
    }

    @Test
    void countingAllocatesNothingPerIoWhileScraped() throws Exception {
        QueueCounters q = new QueueCounters(null, null, 1);
        io(q, 50_000); // warm up: JIT, and the per-namespace arrays (once per namespace)
        Thread scraper = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                q.errorsByStatus();
                q.latency(QueueCounters.LATENCY_READ);
                q.namespace(1);
            }
        });
        scraper.start();
        try {
            int n = 200_000;
            long before = allocated();
            io(q, n);
            long perIo = (allocated() - before) / (3L * n);
            System.out.println("queue counters: ~" + perIo + " heap bytes per I/O");
            assertEquals(0, perIo);
            assertTrue(q.count(QueueCounters.READS) >= n);
        } finally {
            scraper.interrupt();
            scraper.join();
        }
    }
}

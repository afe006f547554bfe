package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.target.stats.QueueStats;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --controllers N --nr_io_queues M}: N controllers of M I/O queues each to one target, one job per queue, and
 * the idle phase. Checked against the target's own per-queue counters: every one of the N x M queues gets I/O.
 * Functional, not a speed test.
 */
class ScaleTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("256M").blockSize(4096).build();

    /** The (CNTLID, QID) of every I/O queue of the target that has done I/O so far, until {@code run} ends. */
    private static Set<String> busyQueuesWhile(CompletableFuture<Cli> run) throws Exception {
        Set<String> seen = new HashSet<>();
        while (!run.isDone()) {
            for (QueueStats q : target.target().stats().queues()) {
                if (q.qid() > 0 && q.io().reads() + q.io().writes() > 0) {
                    seen.add(q.cntlid() + "/" + q.qid());
                }
            }
            Thread.sleep(20);
        }
        return seen;
    }

    @Test
    void everyQueueOfEveryControllerRunsIoAndTheCountsAddUp() throws Exception {
        CompletableFuture<Cli> run = CompletableFuture.supplyAsync(() -> Cli.run(
                "--target",
                target.uri(),
                "--controllers=8",
                "--nr_io_queues=4",
                "--idle_seconds=300ms",
                "--rw=randread",
                "--bs=4k",
                "--iodepth=2",
                "--runtime=1500ms",
                "--ramp_time=200ms",
                "--size=32m",
                "--output-format=json"));
        Set<String> busy = busyQueuesWhile(run);
        Cli r = run.get(120, TimeUnit.SECONDS);
        assertEquals(0, r.exit(), r.toString());
        assertEquals(32, busy.size(), "I/O queues of the target with I/O: " + busy);
        JsonNode root = new ObjectMapper().readTree(r.out());
        JsonNode jobs = root.get("jobs");
        assertEquals(32, jobs.size(), "one entry per queue (job)");
        long sum = 0;
        for (JsonNode job : jobs) {
            long ios = job.get("read").get("total_ios").asLong();
            assertTrue(ios > 0, "every queue completed I/O in the window: " + job.get("jobname"));
            sum += ios;
        }
        JsonNode nv = root.get("nvmeof");
        assertEquals(8, nv.get("queues").get("controllers").asInt());
        assertEquals(4, nv.get("queues").get("io_queues_per_controller").asInt());
        assertEquals(32, nv.get("queues").get("io_queues_with_io").asInt());
        assertEquals(32, root.get("global options").get("numjobs").asInt());
        JsonNode idle = nv.get("idle");
        assertTrue(idle.get("window_ns").asLong() >= 300_000_000L, idle.toString());
        assertTrue(idle.get("initiator").get("total_ns").asLong() >= 0, idle.toString());
        assertTrue(idle.get("target").isObject(), "our target's CPU is read over the fabric: " + idle);
        assertTrue(idle.get("target_pct_of_core").isNumber(), idle.toString());
        assertTrue(r.err().isEmpty() || !r.err().contains("Exception"), r.err());
        // the group total is the sum of the jobs
        Cli g = Cli.run(
                "--target",
                target.uri(),
                "--controllers=2",
                "--nr_io_queues=3",
                "--rw=randread",
                "--iodepth=1",
                "--runtime=300ms",
                "--ramp_time=100ms",
                "--size=16m");
        assertEquals(0, g.exit(), g.toString());
        assertTrue(g.out().contains("queues       : 2 controller(s) x 3 I/O queue(s) = 6, 6 completed I/O"), g.out());
        assertTrue(sum > 0);
    }

    @Test
    void verifyPassesOverEveryQueue() throws Exception {
        CompletableFuture<Cli> run = CompletableFuture.supplyAsync(() -> Cli.run(
                "--target",
                target.uri(),
                "--controllers=8",
                "--nr_io_queues=4",
                "--rw=randwrite",
                "--bs=4k",
                "--iodepth=4",
                "--size=16m",
                "--verify=crc32c",
                "--output-format=json"));
        Set<String> busy = busyQueuesWhile(run);
        Cli r = run.get(120, TimeUnit.SECONDS);
        assertEquals(0, r.exit(), r.toString());
        JsonNode root = new ObjectMapper().readTree(r.out());
        long written = 0;
        long read = 0;
        for (JsonNode job : root.get("jobs")) {
            long w = job.get("write").get("total_ios").asLong();
            long rd = job.get("read").get("total_ios").asLong();
            assertTrue(w > 0, "every queue wrote its part");
            assertEquals(w, rd, "every queue read back what it wrote");
            written += w;
            read += rd;
        }
        assertEquals(16L * 1024 * 1024 / 4096, written, "the 32 jobs split the region: every block written once");
        assertEquals(written, read);
        assertTrue(busy.size() > 0, "the target saw I/O queues with I/O: " + busy);
    }

    @Test
    void badTopologiesAreExit2() {
        Cli both = Cli.run("--target", target.uri(), "--numjobs=2", "--controllers=2", "--runtime=200ms");
        assertEquals(2, both.exit(), both.toString());
        assertTrue(both.err().contains("--numjobs and --controllers"), both.err());
        Cli zero = Cli.run("--target", target.uri(), "--nr_io_queues=0");
        assertEquals(2, zero.exit(), zero.toString());
        assertTrue(zero.err().contains("nr_io_queues"), zero.err());
        Cli tooMany = Cli.run("--target", target.uri(), "--controllers=256", "--nr_io_queues=8");
        assertEquals(2, tooMany.exit(), tooMany.toString());
        assertTrue(tooMany.err().contains("at most 1024"), tooMany.err());
    }
}

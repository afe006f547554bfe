package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;

/**
 * A timed job records the I/Os of its ramp through the same code as those of its window, into statistics of their
 * own that are never reported (one set per half of the ramp): the window counts only I/Os issued after it opened,
 * and its IOPS samples start there.
 */
class JobRampTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").blockSize(4096).build();

    private static Workload workload(String... args) {
        PerfCli cli = new PerfCli();
        new CommandLine(cli).parseArgs(args);
        return cli.common.workload(cli.rw, cli.bs, cli.iodepth, "10", "2", false);
    }

    /**
     * Runs one job as the runner does: the ramp, then the window opened from this thread; returns it finished. The
     * controller has one I/O queue, as each job's has in a run: a completion-driven job's state belongs to its queue's
     * thread.
     */
    private static Job run(Workload w, Controller c) throws Exception {
        Job job = new Job(0, w, c.namespace(), 0, 16L << 20, 42);
        long rampEnd = System.nanoTime() + w.rampNanos();
        job.rampEnd = rampEnd;
        job.end = Runner.UNTIL_TOLD;
        Thread t = new Thread(job, "nvmeof-perf-job-0");
        t.start();
        while (System.nanoTime() - rampEnd < 0) {
            Thread.sleep(5);
        }
        long start = System.nanoTime();
        job.openWindow(start, start + w.runtimeNanos());
        t.join(30_000);
        assertNull(job.failure);
        return job;
    }

    @Test
    void completionDrivenRampIsRecordedApartFromTheWindow() throws Exception {
        Workload w = workload("--rw=randread", "--bs=4k", "--iodepth=4", "--runtime=1200ms", "--ramp_time=300ms");
        try (Controller c = Nvme.connect(target.uri("queues=1&depth=8"))) {
            Job job = run(w, c);
            assertRampApart(job, 2);
        }
    }

    @Test
    void jobThreadDrivenRampIsRecordedApartFromTheWindow() throws Exception {
        // --rate_iops: the job thread issues and records (no completion-driven mode)
        Workload w = workload(
                "--rw=randread", "--bs=4k", "--iodepth=4", "--runtime=1200ms", "--ramp_time=300ms", "--rate_iops=2000");
        try (Controller c = Nvme.connect(target.uri("queues=1&depth=8"))) {
            Job job = run(w, c);
            assertRampApart(job, 2);
        }
    }

    private static void assertRampApart(Job job, int samples) {
        JobStats s = job.stats;
        assertTrue(s.earlyRampRead.ios > 0, "the first half of the ramp went through the recording code");
        assertTrue(s.rampRead.ios > 0, "the second half of the ramp went through the recording code");
        assertTrue(job.read.ios > 0, "the window counted I/Os");
        assertEquals(0, s.earlyRampWrite.ios + s.rampWrite.ios + job.write.ios, "a read-only job records no writes");
        assertTrue(
                job.read.ios + s.rampRead.ios + s.earlyRampRead.ios <= job.progressIos.get(),
                "no I/O is counted twice: " + job.read.ios + " + " + s.rampRead.ios + " + " + s.earlyRampRead.ios
                        + " of " + job.progressIos.get());
        // the window's IOPS samples run from its own start: 1.2 s holds two whole 500 ms intervals
        assertEquals(samples, job.read.sampleCount, "IOPS samples of the window");
        assertEquals(1_200_000_000L, job.read.runtimeNanos, "the window is the runtime");
    }
}

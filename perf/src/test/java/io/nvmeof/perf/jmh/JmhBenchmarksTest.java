package io.nvmeof.perf.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import java.util.Collection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs every JMH benchmark class briefly through the Runner API (in this JVM, one short iteration) so that they
 * cannot rot, and checks that the flyweight and codec benchmarks allocate (almost) nothing per operation.
 */
@Timeout(300)
class JmhBenchmarksTest {
    /** Per-op allocation accepted for the "zero allocation" benchmarks: noise from JMH's own bookkeeping. */
    static final double MAX_BYTES_PER_OP = 16;

    private static ResourceLeakDetector.Level leakLevel;

    /** The build runs tests with paranoid leak detection, which records every buffer access: not what we measure. */
    @BeforeAll
    static void noLeakTracking() {
        leakLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    }

    @AfterAll
    static void restoreLeakTracking() {
        ResourceLeakDetector.setLevel(leakLevel);
    }

    private static Collection<RunResult> run(Class<?> benchmark, String... params) throws RunnerException {
        return run(benchmark, 0, params);
    }

    private static Collection<RunResult> run(Class<?> benchmark, int forks, String... params) throws RunnerException {
        return run(benchmark, forks, 1, params);
    }

    private static Collection<RunResult> run(Class<?> benchmark, int forks, int warmups, String... params)
            throws RunnerException {
        ChainedOptionsBuilder b = new OptionsBuilder()
                .include(benchmark.getName() + "\\.")
                .forks(forks)
                .warmupIterations(warmups)
                .warmupTime(TimeValue.milliseconds(300))
                .measurementIterations(1)
                .measurementTime(TimeValue.milliseconds(500))
                .addProfiler(GCProfiler.class)
                .shouldFailOnError(true);
        for (int i = 0; i + 1 < params.length; i += 2) {
            b.param(params[i], params[i + 1].split(","));
        }
        Collection<RunResult> results = new Runner(b.build()).run();
        assertFalse(results.isEmpty(), "no results for " + benchmark.getSimpleName());
        return results;
    }

    private static double allocNorm(RunResult r) {
        Result<?> norm = r.getSecondaryResults().get("gc.alloc.rate.norm");
        assertNotNull(norm, "gc.alloc.rate.norm missing for " + r.getParams().getBenchmark());
        return norm.getScore();
    }

    private static void assertAllocationFree(Collection<RunResult> results) {
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark() + " " + r.getParams();
            assertTrue(r.getPrimaryResult().getScore() > 0, name);
            double norm = allocNorm(r);
            assertTrue(norm < MAX_BYTES_PER_OP, name + " allocates " + norm + " B/op");
        }
    }

    @Test
    void flyweightsAllocateNothing() throws RunnerException {
        Collection<RunResult> results = run(FlyweightBenchmark.class);
        assertEquals(3, results.size());
        assertAllocationFree(results);
    }

    @Test
    void pduCodingAllocatesNothing() throws RunnerException {
        // Forked: the fork sets the recycler property its @Fork names (see PduCodecBenchmark).
        Collection<RunResult> results = run(PduCodecBenchmark.class, 1);
        assertEquals(4, results.size());
        assertAllocationFree(results);
    }

    @Test
    void crc32cRuns() throws RunnerException {
        Collection<RunResult> results = run(Crc32cBenchmark.class, "size", "4096");
        assertEquals(4, results.size());
        assertAllocationFree(results);
    }

    @Test
    void headerDigestAllocatesNothing() throws RunnerException {
        Collection<RunResult> results = run(Crc32cHeaderBenchmark.class);
        assertEquals(4, results.size());
        assertAllocationFree(results);
    }

    @Test
    void hostCommandPathAllocatesNothing() throws RunnerException {
        Collection<RunResult> results = run(HostCommandPathBenchmark.class);
        assertEquals(6, results.size());
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark() + " " + r.getParams().getParam("impl");
            assertTrue(r.getPrimaryResult().getScore() > 0, name);
            if (!name.contains("tcpSubmitComplete")) { // EmbeddedChannel's own queues are not ours to assert
                assertTrue(allocNorm(r) < MAX_BYTES_PER_OP, name + " allocates " + allocNorm(r) + " B/op");
            }
            System.out.println(name + ": " + r.getPrimaryResult().getScore() + " ns/op, " + allocNorm(r) + " B/op");
        }
    }

    /** QD32 in-capsule writes through the real host queue: nothing allocated per write on its (recycling) thread. */
    @Test
    void hostWriteBurstAllocatesNothing() throws RunnerException {
        Collection<RunResult> results = run(HostWriteBurstBenchmark.class);
        assertEquals(1, results.size());
        assertAllocationFree(results);
        RunResult r = results.iterator().next();
        System.out.println(
                "host write burst: " + r.getPrimaryResult().getScore() + " ns/write, " + allocNorm(r) + " B/write");
    }

    /**
     * QD32 reads and in-capsule writes through the real controller pipeline and target: nothing allocated per command
     * on its (recycling) thread, and every command executed (the benchmark's tear-down checks the namespace's count).
     */
    @Test
    void targetCommandBurstAllocatesNothing() throws RunnerException {
        // Forked, with the recycler chunk size its @Fork names (as the target's launchers set it); four warm-ups: a
        // new target's read path allocated 12-14 B per read in its first 300 ms on this machine (the interpreter,
        // pools filling), 0.1 B once compiled.
        Collection<RunResult> results = run(TargetCommandBurstBenchmark.class, 1, 4);
        assertEquals(2, results.size(), "read and write");
        assertAllocationFree(results);
        for (RunResult r : results) {
            System.out.println("target command burst " + r.getParams().getParam("op") + ": "
                    + r.getPrimaryResult().getScore() + " ns/command, " + allocNorm(r) + " B/command");
        }
    }

    @Test
    void firstWriteRuns() throws RunnerException {
        // Runs only: whether the pool keeps up in a 500 ms run depends on the machine; ChunkPoolTest asserts 0 B per
        // first write taken from a pool that has chunks ready.
        Collection<RunResult> results = run(FirstWriteBenchmark.class);
        assertEquals(6, results.size());
        for (RunResult r : results) {
            String name =
                    r.getParams().getBenchmark() + " pool=" + r.getParams().getParam("pool");
            assertTrue(r.getPrimaryResult().getScore() > 0, name);
            System.out.println(name + ": " + r.getPrimaryResult().getScore() + " us/op, " + allocNorm(r) + " B/op");
        }
    }

    @Test
    void loopbackReadRuns() throws RunnerException {
        Collection<RunResult> results = run(LoopbackReadBenchmark.class, "engine", "epoll");
        assertEquals(1, results.size());
        RunResult r = results.iterator().next();
        assertTrue(r.getPrimaryResult().getScore() > 0);
        // End to end allocation is reported, not asserted here: a short in-JVM run on a busy machine includes
        // warm-up noise (JIT, connection set-up). The measured figure is in the perf README.
        System.out.println(
                "loopback 4k read: " + r.getPrimaryResult().getScore() + " us/op, " + allocNorm(r) + " B/op");
    }
}

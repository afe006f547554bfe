package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nvmeof-perf} through a target that dies: our daemon in its own process ({@link EmbeddedTarget}) on a
 * file-backed namespace is killed with SIGKILL a few seconds into a {@code --verify crc32c} run with
 * {@code ctrl_loss_tmo} set, and started again on the same port and file: the run completes (exit 0), every block
 * verifies, and the report counts the reconnect. Killed for good, a timed run ends with the controller-lost error
 * soon after ctrl_loss_tmo instead of at the end of its runtime.
 */
class PerfReconnectTest {
    private static final long SIZE = 32L << 20;

    @TempDir
    Path dir;

    private static EmbeddedTarget start(Path file, int port) throws Exception {
        return EmbeddedTarget.start(
                "tcp", 16L << 20, List.of("--namespace", "size=" + SIZE + ",bs=4096,file=" + file), port);
    }

    private static int port(EmbeddedTarget t) {
        return URI.create(t.uri().replace("nvme+tcp", "http")).getPort();
    }

    /** Waits until the run's I/O queue is connected (the daemon logs it), then lets the I/O run {@code millis}. */
    private static void awaitIo(EmbeddedTarget t, long millis) throws Exception {
        long end = System.currentTimeMillis() + 60_000;
        while (!t.recentOutput().contains(", QID 1,")) {
            if (System.currentTimeMillis() > end) {
                throw new AssertionError("the run never connected: " + t.recentOutput());
            }
            Thread.sleep(20);
        }
        Thread.sleep(millis);
    }

    private static void kill9(EmbeddedTarget t) throws Exception {
        ProcessHandle p = ProcessHandle.of(t.pid()).orElseThrow();
        p.destroyForcibly();
        p.onExit().get(30, TimeUnit.SECONDS);
    }

    @Test
    void verifyRunSurvivesKillNineAndRestartOfTheTarget() throws Exception {
        Path file = dir.resolve("ns2.img");
        EmbeddedTarget first = start(file, 0);
        int port = port(first);
        String uri = first.uri() + "?nsid=2&reconnect_delay=1&ctrl_loss_tmo=60&timeout=5s";
        EmbeddedTarget[] second = new EmbeddedTarget[1];
        CompletableFuture<Cli> run = CompletableFuture.supplyAsync(() -> Cli.run(
                "--target",
                uri,
                "--rw=randwrite",
                "--bs=4k",
                "--iodepth=8",
                "--size=" + SIZE,
                "--rate_iops=1500",
                "--verify=crc32c"));
        try {
            awaitIo(first, 2000); // mid-write phase: 8192 blocks at 1500/s
            kill9(first);
            Thread.sleep(1000);
            second[0] = start(file, port); // same port, same file
            Cli r = run.get(120, TimeUnit.SECONDS);
            assertEquals(0, r.exit(), r.toString());
            Matcher m = Pattern.compile("reconnects=(\\d+), failovers=0").matcher(r.out());
            assertTrue(m.find(), r.out());
            assertTrue(Integer.parseInt(m.group(1)) >= 1, "the reconnect is counted: " + r.out());
            assertTrue(r.out().contains("io=" + (SIZE >> 20) + "MiB"), "every block written and read back: " + r.out());
        } finally {
            first.close();
            if (second[0] != null) {
                second[0].close();
            }
        }
    }

    @Test
    void runWhoseControllerIsLostForGoodEndsPromptly() throws Exception {
        EmbeddedTarget t = start(dir.resolve("ns2.img"), 0);
        String uri = t.uri() + "?nsid=2&reconnect_delay=1&ctrl_loss_tmo=3";
        try {
            long start = System.nanoTime();
            CompletableFuture<Cli> run = CompletableFuture.supplyAsync(
                    () -> Cli.run("--target", uri, "--rw=randwrite", "--bs=4k", "--iodepth=4", "--runtime=60"));
            awaitIo(t, 2000);
            kill9(t);
            long killed = System.nanoTime();
            Cli r = run.get(60, TimeUnit.SECONDS);
            long afterKill = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            assertEquals(1, r.exit(), r.toString());
            assertTrue(r.err().contains("lost"), r.toString());
            assertTrue(r.err().contains("ctrl_loss_tmo"), r.toString());
            // ctrl_loss_tmo 3 s (+ keep-alive detection), far from the 60 s runtime
            assertTrue(afterKill < 20_000, "ended " + afterKill + " ms after the kill");
            assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) < 40);
        } finally {
            t.close();
        }
    }
}

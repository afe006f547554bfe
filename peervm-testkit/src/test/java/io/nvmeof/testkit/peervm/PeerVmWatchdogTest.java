package io.nvmeof.testkit.peervm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The boot watchdog and the launcher without a VM: a stand-in run.sh ({@code fake-peer-vm/run.sh}) that boots at
 * once, stalls (never writes {@code boot done}) or dies, as the test tells it per attempt. No QEMU, a few seconds.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PeerVmWatchdogTest {
    /** Short enough for a fast test, long enough for bash to start on a busy 2-core machine. */
    static final Duration BOOT = Duration.ofSeconds(2);

    @TempDir
    Path tmp;

    Path fake;
    Path cache;
    PeerVm vm;

    @BeforeEach
    void fakePeerVm() throws IOException {
        fake = Files.createDirectories(tmp.resolve("peer-vm"));
        for (String f : List.of("run.sh", "build.sh")) {
            PeerVm.copyResource(PeerVmWatchdogTest.class, "/fake-peer-vm/" + f, fake)
                    .toFile()
                    .setExecutable(true);
        }
        cache = Files.createDirectories(tmp.resolve("cache"));
        Files.writeString(cache.resolve("rootfs.ext4"), "fake image");
        // withOtherVmWait(ZERO): this test starts no VM, so it must not wait for someone else's.
        vm = PeerVm.at(fake).withCache(cache).withBootTimeout(BOOT).withOtherVmWait(Duration.ZERO);
    }

    private void boots(String... perAttempt) throws IOException {
        Files.write(fake.resolve("boots"), List.of(perAttempt));
    }

    private List<String> attempts() throws IOException {
        Path log = fake.resolve("attempts.log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    private Path script(String name, String text) throws IOException {
        return Files.writeString(tmp.resolve(name), text);
    }

    private static void assertGone(Path pidFile) throws IOException {
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        assertFalse(
                ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "fake QEMU " + pid + " still runs");
    }

    @Test
    void bootsAtOnceAndRunsTheScript() throws Exception {
        Path job = tmp.resolve("job");
        PeerVm.Result r = vm.run(
                script("hello.sh", "echo \"job args: $*\"\n"),
                List.of("a", "b c"),
                Duration.ofMinutes(1),
                job,
                List.of("--share", tmp.toString()));
        assertEquals(0, r.rc(), r.output());
        assertTrue(r.output().contains("job args: a b c"), r.output());
        assertTrue(r.output().contains("run.sh: rc=0"), "run.sh's own lines are in the output: " + r.output());
        assertEquals(List.of(), r.boot().failures());
        assertEquals("0.42", r.boot().guestUptime());
        assertEquals(
                List.of("attempt 1 guest=linux-6.1 PEERVM_APPEND= PEERVM_CACHE=" + cache),
                attempts(),
                "one attempt, the default guest, no PEERVM_APPEND, our cache passed on");
        assertTrue(r.console().contains("boot done"));
        assertTrue(Files.exists(job.resolveSibling("job-run.log")));
    }

    @Test
    void stalledBootIsKilledAndRetriedOnceWithLoglevel7() throws Exception {
        boots("stall", "ok");
        Path job = tmp.resolve("job");
        long t0 = System.nanoTime();
        PeerVm.Result r =
                vm.run(script("hello.sh", "echo retried job ran\n"), List.of(), Duration.ofMinutes(1), job, List.of());
        assertEquals(0, r.rc(), r.output());
        assertTrue(r.output().contains("retried job ran"), r.output());
        assertTrue(System.nanoTime() - t0 >= BOOT.toNanos(), "waited out the boot deadline");
        List<String> a = attempts();
        assertEquals(2, a.size(), a.toString());
        assertTrue(a.get(0).contains("PEERVM_APPEND= "), a.get(0));
        assertTrue(
                a.get(1).contains("PEERVM_APPEND=loglevel=7 "), "the retry shows the kernel's messages: " + a.get(1));
        assertGone(fake.resolve("qemu-1.pid"));

        assertEquals(1, r.boot().failures().size());
        String d = r.boot().failures().get(0);
        assertTrue(d.contains("PEER VM DID NOT BOOT (attempt 1 of 2)"), d);
        assertTrue(d.contains("no 'peer-init[..]: boot done' in console.log within 2 s"), d);
        assertTrue(d.contains("fake kernel of attempt 1: stalled here"), "console.log tail: " + d);
        assertTrue(d.contains("fake QEMU of attempt 1"), "qemu.log: " + d);
        assertTrue(d.contains("run.sh: TIMEOUT"), "run.sh's output after the kill: " + d);
        // the failed attempt is kept next to the job dir; the job dir is the retry's
        Path kept = tmp.resolve("job.boot-failure-1");
        assertTrue(PeerVm.read(kept.resolve("console.log")).contains("stalled here"));
        assertTrue(PeerVm.read(kept.resolve("run.log")).contains("run.sh: TIMEOUT"));
        assertTrue(r.console().contains("boot done"));
    }

    @Test
    void twoFailedBootsFailWithBothAttemptsDiagnostics() throws Exception {
        boots("stall", "stall");
        PeerVm.BootFailure f = assertThrows(
                PeerVm.BootFailure.class,
                () -> vm.run(
                        script("never.sh", "echo must not run\n"),
                        List.of(),
                        Duration.ofMinutes(1),
                        tmp.resolve("job"),
                        List.of()));
        String m = f.getMessage();
        assertTrue(
                m.startsWith("the peer VM did not boot in 2 attempts (the second with PEERVM_APPEND=loglevel=7)"), m);
        assertEquals(2, f.attempts().size());
        for (int n = 1; n <= 2; n++) {
            assertTrue(m.contains("PEER VM DID NOT BOOT (attempt " + n + " of 2)"), m);
            assertTrue(m.contains("fake kernel of attempt " + n + ": stalled here"), m);
            assertTrue(m.contains("fake QEMU of attempt " + n), m);
            assertGone(fake.resolve("qemu-" + n + ".pid"));
        }
        assertTrue(m.contains("PEERVM_APPEND=loglevel=7"), m);
        assertFalse(m.contains("must not run"), m);
        assertEquals(2, attempts().size(), "exactly one retry");
    }

    @Test
    void vmThatEndsBeforeBootingIsRetriedToo() throws Exception {
        boots("die", "ok");
        long t0 = System.nanoTime();
        PeerVm.Result r = vm.run(
                script("hello.sh", "echo ok\n"), List.of(), Duration.ofMinutes(1), tmp.resolve("job"), List.of());
        assertEquals(0, r.rc(), r.output());
        assertTrue(
                System.nanoTime() - t0 < BOOT.toNanos() + TimeUnit.SECONDS.toNanos(20),
                "no need to wait out the deadline");
        assertEquals(1, r.boot().failures().size());
        assertTrue(
                r.boot().failures().get(0).contains("run.sh ended (rc 125)"),
                r.boot().failures().get(0));
        assertTrue(
                r.boot().failures().get(0).contains("VM ended without a result"),
                r.boot().failures().get(0));
    }

    @Test
    void aScriptFailingAfterTheBootIsNotRetried() throws Exception {
        PeerVm.Result r = vm.run(
                script("fails.sh", "echo FAIL: something\nexit 3\n"),
                List.of(),
                Duration.ofMinutes(1),
                tmp.resolve("job"),
                List.of());
        assertEquals(3, r.rc());
        assertTrue(r.output().contains("FAIL: something"), r.output());
        assertEquals(1, attempts().size());
    }

    @Test
    void servingVmRetriesAStalledBootThenServesUntilStopped() throws Exception {
        boots("stall", "ok");
        Path serve = script(
                "serve.sh",
                "echo setting up\necho \"PEERVM READY (fake) args $*\"\n"
                        + "while [ ! -e stop ]; do sleep 0.1; done\necho stopping\n");
        try (RunningVm r = vm.start(serve, List.of("x"), 12345, 4420, Duration.ofMinutes(1), tmp.resolve("job"))) {
            assertEquals(1, r.boot().failures().size());
            assertTrue(r.await("^PEERVM READY \\(fake\\) args (\\S+)$", Duration.ofSeconds(30))
                    .group(1)
                    .equals("x"));
            assertTrue(r.isAlive());
            assertEquals(0, r.stop(Duration.ofSeconds(30)));
            assertTrue(r.output().contains("stopping"), r.output());
            assertTrue(r.runLog().contains("run.sh: rc=0"), r.runLog());
        }
        assertEquals(2, attempts().size());
        assertGone(fake.resolve("qemu-1.pid"));
    }

    @Test
    void servingVmThatNeverGetsReadyIsATestFailureNotARetry() throws Exception {
        Path serve = script("broken.sh", "echo modprobe: FATAL: module nvmet not found\nexit 1\n");
        try (RunningVm r = vm.start(serve, List.of(), 12345, 4420, Duration.ofMinutes(1), tmp.resolve("job"))) {
            IllegalStateException e =
                    assertThrows(IllegalStateException.class, () -> r.await("^PEERVM READY", Duration.ofSeconds(30)));
            assertTrue(
                    e.getMessage().contains("the peer VM ended (rc 1) before printing /^PEERVM READY/"),
                    e.getMessage());
            assertTrue(e.getMessage().contains("module nvmet not found"), e.getMessage());
        }
        assertEquals(1, attempts().size());
    }

    @Test
    void ensureImageRunsBuildShOnlyWhenTheImageIsMissing() throws Exception {
        vm.ensureImage(Duration.ofSeconds(30)); // present: nothing to do
        Path empty = tmp.resolve("empty-cache");
        PeerVm other = vm.withCache(empty);
        other.ensureImage(Duration.ofSeconds(30));
        assertEquals("fake image\n", Files.readString(empty.resolve("rootfs.ext4")), "build.sh got PEERVM_CACHE");
        assertEquals(
                List.of("--guest linux-6.1 --check", "--guest linux-6.1 --check", "--guest linux-6.1"),
                Files.readAllLines(fake.resolve("builds.log")),
                "asked first, built only the missing image");
    }

    @Test
    void theGuestGoesToBuildShAndRunSh() throws Exception {
        PeerVm g = vm.withCache(tmp.resolve("cache-612")).guest(PeerVm.Guest.LINUX_6_12);
        assertEquals("linux-6.12", g.guestName());
        assertEquals("linux-6.1", vm.guestName(), "the default guest, unchanged");
        g.ensureImage(Duration.ofSeconds(30));
        assertEquals(
                List.of("--guest linux-6.12 --check", "--guest linux-6.12"),
                Files.readAllLines(fake.resolve("builds.log")));
        PeerVm.Result r = g.withBootTimeout(BOOT)
                .run(script("hello.sh", "echo hi\n"), List.of(), Duration.ofMinutes(1), tmp.resolve("job"), List.of());
        assertEquals(0, r.rc(), r.output());
        assertTrue(
                attempts().get(0).startsWith("attempt 1 guest=linux-6.12 "),
                attempts().toString());
        assertThrows(IllegalArgumentException.class, () -> vm.guest("../etc"));
    }

    @Test
    void locateFindsTheHarnessInTheRepositoryAboveTheWorkingDirectory() {
        // Maven runs the tests in the module's directory: the repository root (with interop/peer-vm) is above it.
        // PEERVM_DIR, when set, wins; it must name a directory with run.sh.
        PeerVm found = PeerVm.locate();
        assertTrue(
                Files.isExecutable(found.dir().resolve("run.sh")), found.dir().toString());
        if (System.getenv("PEERVM_DIR") == null) {
            assertTrue(
                    found.dir().endsWith(Path.of("interop", "peer-vm")),
                    found.dir().toString());
            assertTrue(
                    Files.isDirectory(found.dir().resolve("guests/linux-6.12")),
                    found.dir().toString());
        }
        assertEquals(PeerVm.DEFAULT_GUEST, found.guestName());
    }

    @Test
    void configuration() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> PeerVm.at(tmp));
        assertEquals(fake.toAbsolutePath(), vm.dir());
        String old = System.getProperty(PeerVm.BOOT_TIMEOUT_PROPERTY); // e.g. mvn -Dpeervm.bootTimeoutSec=200
        try {
            System.clearProperty(PeerVm.BOOT_TIMEOUT_PROPERTY);
            assertEquals(PeerVm.DEFAULT_BOOT_TIMEOUT, PeerVm.at(fake).bootTimeout());
            System.setProperty(PeerVm.BOOT_TIMEOUT_PROPERTY, "42");
            assertEquals(Duration.ofSeconds(42), PeerVm.at(fake).bootTimeout());
            System.setProperty(PeerVm.BOOT_TIMEOUT_PROPERTY, "soon");
            assertThrows(IllegalArgumentException.class, () -> PeerVm.at(fake));
        } finally {
            if (old == null) {
                System.clearProperty(PeerVm.BOOT_TIMEOUT_PROPERTY);
            } else {
                System.setProperty(PeerVm.BOOT_TIMEOUT_PROPERTY, old);
            }
        }
        assertTrue(BootWatchdog.BOOT_DONE
                .matcher("\r\nLoading...\npeer-init[5.73s]: boot done\r\n")
                .find());
        assertTrue(PeerVm.freePort() > 0);
        assertEquals("b\nc", PeerVm.tail("a\nb\nc", 2));
    }

    @Test
    void kernelLogAndItsComplaints() {
        String out = "PEERVM READY\nstopping\n----- kernel log (since READY)\n[ 1.0] nvmet: creating nvm controller 1\n"
                + "[ 2.0] nvmet_tcp: queue 3: failed to map data\n[ 3.0] nvmet: ctrl 1 keep-alive timer (5 seconds) expired!\n"
                + "----- end of kernel log\nrun.sh: rc=0\n";
        String k = PeerVm.kernelLog(out);
        assertTrue(k.startsWith("[ 1.0] nvmet: creating") && k.endsWith("expired!\n"), k);
        assertEquals(
                List.of(
                        "[ 2.0] nvmet_tcp: queue 3: failed to map data",
                        "[ 3.0] nvmet: ctrl 1 keep-alive timer (5 seconds) expired!"),
                PeerVm.complaints(k, line -> false));
        assertEquals(
                List.of("[ 3.0] nvmet: ctrl 1 keep-alive timer (5 seconds) expired!"),
                PeerVm.complaints(k, line -> line.endsWith("failed to map data")));
        assertEquals("(no kernel log in the guest output)", PeerVm.kernelLog("PEERVM READY\n"));
    }
}

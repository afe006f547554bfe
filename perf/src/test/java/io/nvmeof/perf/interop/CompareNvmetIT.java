package io.nvmeof.perf.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.testkit.peervm.RunningVm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * {@code bin/nvmeof-perf compare} against the Linux kernel's NVMe/TCP target, nvmet-tcp of Debian's 6.1 kernel in the
 * peer VM ({@code interop/serve-nvmet-perf.sh}: one namespace on a tmpfs loop device, reached through a hostfwd port).
 * Correctness only: the VM is emulated (QEMU/TCG), so its numbers are slow and nothing here looks at them beyond
 * "I/O was done". Checked: every TCP setup (tcp, tcp-digest, tcp-io_uring where this host has io_uring, tcp-hipri)
 * completes I/O without errors, the target's CPU is reported unknown (nvmet is not our target) with the reason, the
 * rdma setup is reported unavailable for an nvme+tcp:// target while the rest still run, exit code 0, the JSON and
 * the human table; then {@code --verify crc32c} runs (compare has no verify) over tcp and tcp-digest; last, the guest
 * kernel logged no nvmet error.
 *
 * <p>The tool runs as {@code bin/nvmeof-perf} runs it (its jar and build/lib, its main class and JVM options), without
 * the launcher's build-on-demand step. One VM boot. Run with {@code mvn -B -o -pl perf verify -Dit.test=CompareNvmetIT
 * -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false}; {@code -Dpeervm.keep=true} keeps the job dir.
 */
@Tag("vm")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CompareNvmetIT {
    static final String NQN = "nqn.2014-08.org.nvmexpress:peervm-perf";
    static final String NS_SIZE = "128M";
    /** The setups compare runs against nvmet: every NVMe/TCP one (one busy-polling variant) and rdma. */
    static final List<String> TCP_SETUPS = List.of("tcp", "tcp-digest", "tcp-io_uring", "tcp-hipri");

    private final boolean keep = Boolean.getBoolean("peervm.keep");
    private final ObjectMapper json = new ObjectMapper();
    private Path work;
    private RunningVm vm;
    private String target;
    private List<String> perf;
    private int runs;

    /** Longer than the class's 10 minutes: the start may wait for another VM on this host and retry a stalled boot. */
    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void bootVm() throws Exception {
        perf = perfCommand();
        PeerVm peer = PeerVm.locate();
        peer.ensureImage(Duration.ofMinutes(10));
        work = Files.createTempDirectory("compare-nvmet-it");
        Path script = PeerVm.copyResource(CompareNvmetIT.class, "/interop/serve-nvmet-perf.sh", work);
        int port = PeerVm.freePort();
        target = "nvme+tcp://127.0.0.1:" + port + "/" + NQN + "?nsid=1";
        vm = peer.startServing(
                script,
                List.of(NS_SIZE, "1500"),
                port,
                4420,
                Duration.ofMinutes(30),
                work.resolve("job"),
                "^PEERVM READY",
                Duration.ofMinutes(4));
    }

    @AfterAll
    void stopVm() throws Exception {
        try {
            if (vm != null) {
                vm.close();
                System.out.println("--- run.sh ---\n" + PeerVm.tail(vm.runLog(), 5));
            }
        } finally {
            if (keep) {
                System.out.println("kept " + work);
            } else {
                PeerVm.deleteRecursively(work);
            }
        }
    }

    @Test
    @Order(1)
    void compareJsonEveryTcpSetupDidIoRdmaUnavailable() throws Exception {
        Proc p = perf(
                "compare",
                "--target",
                target,
                "--setups",
                String.join(",", TCP_SETUPS) + ",rdma",
                "--rw",
                "randread,randwrite",
                "--bs",
                "4k",
                "--iodepth",
                "4",
                "--runtime",
                "2",
                "--ramp_time",
                "0",
                "--size",
                "16m",
                "--output-format",
                "json");
        assertEquals(0, p.rc, "compare exit code\n" + p);
        JsonNode root = json.readTree(p.out);
        JsonNode cmp = root.get("nvmeof");
        assertEquals("compare", cmp.get("command").asText());
        assertEquals(target, cmp.get("target").asText());
        assertFalse(cmp.get("target_embedded").asBoolean());

        boolean ioUring = ioUringAvailable();
        System.out.println("io_uring on this host: " + ioUring);
        Map<String, JsonNode> setups = new LinkedHashMap<>();
        cmp.get("setups").forEach(s -> setups.put(s.get("name").asText(), s));
        List<String> expected = new ArrayList<>(TCP_SETUPS);
        expected.add("rdma");
        assertEquals(expected, List.copyOf(setups.keySet()), "setups in the JSON");

        String rdmaWhy = "it uses rdma and the target is nvme+tcp://";
        assertEquals(rdmaWhy, setups.get("rdma").path("unavailable").asText(), "rdma against a tcp target: " + setups);
        List<String> measured = new ArrayList<>();
        for (String name : TCP_SETUPS) {
            JsonNode s = setups.get(name);
            assertEquals("tcp", s.get("transport").asText(), name);
            if (name.equals("tcp-io_uring") && !ioUring) {
                assertFalse(s.path("unavailable").asText().isBlank(), "tcp-io_uring without io_uring: " + s);
                System.out.println("tcp-io_uring unavailable here, as expected: "
                        + s.get("unavailable").asText());
                continue;
            }
            assertTrue(s.path("unavailable").isMissingNode(), name + " ran against nvmet: " + s);
            measured.add(name);
        }

        JsonNode points = cmp.get("points");
        assertEquals(2, points.size(), "randread and randwrite");
        for (JsonNode point : points) {
            String rw = point.get("rw").asText();
            String dir = rw.equals("randread") ? "read" : "write";
            assertEquals(
                    rdmaWhy,
                    point.get("results").get("rdma").path("unavailable").asText(),
                    "rdma, " + rw);
            for (String name : measured) {
                JsonNode r = point.get("results").get(name);
                String where = name + " " + point.get("workload").asText() + ": " + r;
                assertNotNull(r, where);
                assertTrue(r.path("unavailable").isMissingNode(), where);
                assertTrue(r.path("failure").isMissingNode(), where);
                assertTrue(r.get("iops").asDouble() > 0, where);
                assertTrue(r.get("clat_p99_ns").asLong() >= r.get("clat_p50_ns").asLong(), where);
                assertTrue(r.get("cpu_us_per_io").get("target").isNull(), "target CPU unknown, " + where);
                JsonNode fio = r.get("fio");
                JsonNode job = fio.get("jobs").get(0);
                assertEquals(0, job.get("error").asInt(), where);
                assertTrue(job.get(dir).get("total_ios").asLong() > 0, where);
                assertEquals(
                        0,
                        job.get(rw.equals("randread") ? "write" : "read")
                                .get("total_ios")
                                .asLong(),
                        where);
                JsonNode n = fio.get("nvmeof");
                assertEquals(name, n.get("setup").asText(), where);
                assertTrue(
                        n.get("target").asText().startsWith(target + "&"),
                        "the URI used, with the setup's options, " + where);
                assertEquals(4096, n.get("block_size").asInt(), where);
                assertTrue(n.get("cpu").get("target").isNull(), where);
                assertTrue(
                        n.get("target_cpu_unknown").asText().contains("target model 'Linux' is not nvmeof-java"),
                        "the reason the target CPU is unknown, " + where);
                System.out.printf(
                        "%-14s %-18s %8.0f IOPS, p50 %.0f us (emulated VM: not a measurement)%n",
                        name,
                        point.get("workload").asText(),
                        r.get("iops").asDouble(),
                        r.get("clat_p50_ns").asLong() / 1e3);
            }
        }
        assertFalse(p.err.contains("LEAK:"), "Netty leak reports\n" + p.err);
    }

    @Test
    @Order(2)
    void compareHumanTable() throws Exception {
        Proc p = perf(
                "compare",
                "--target",
                target,
                "--setups",
                "tcp,rdma",
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--iodepth",
                "1",
                "--runtime",
                "2",
                "--ramp_time",
                "0",
                "--size",
                "16m");
        assertEquals(0, p.rc, "compare exit code\n" + p);
        String t = p.out; // printed by perf()
        assertTrue(t.startsWith("nvmeof-perf compare: 1 workload point(s) x 2 setup(s)"), t);
        assertTrue(t.contains("target: " + target), t);
        assertTrue(t.contains("| tcp "), t);
        assertTrue(t.contains("| rdma"), t);
        Matcher row = Pattern.compile("(?m)^randread 4k qd1 +\\| +(\\S+) .*\\| unavailable: it uses rdma")
                .matcher(t);
        assertTrue(row.find(), "a row with tcp's figures and rdma unavailable:\n" + t);
        assertFalse(row.group(1).equals("0") || row.group(1).startsWith("failed"), "tcp IOPS " + row.group(1));
        assertTrue(t.contains("rdma: unavailable: it uses rdma and the target is nvme+tcp://"), t);
        assertTrue(t.contains("target CPU unknown: target model 'Linux' is not nvmeof-java"), t);
        assertFalse(p.err.contains("LEAK:"), "Netty leak reports\n" + p.err);
    }

    @Test
    @Order(3)
    void verifiedWriteAndReadBackOverTcpAndDigests() throws Exception {
        long size = 8L << 20;
        for (String setup : List.of("tcp", "tcp-digest")) {
            Proc p = perf(
                    "--target",
                    target,
                    "--setup",
                    setup,
                    "--rw",
                    "randwrite",
                    "--bs",
                    "4k",
                    "--iodepth",
                    "8",
                    "--offset",
                    "64m",
                    "--size",
                    "8m",
                    "--verify",
                    "crc32c",
                    "--output-format",
                    "json");
            assertEquals(0, p.rc, setup + " --verify crc32c exit code\n" + p);
            JsonNode root = json.readTree(p.out);
            JsonNode job = root.get("jobs").get(0);
            String where = setup + ": " + job;
            assertEquals(0, job.get("error").asInt(), where);
            assertEquals("crc32c", job.get("job options").get("verify").asText(), where);
            assertEquals(size / 4096, job.get("write").get("total_ios").asLong(), "every block written once, " + where);
            assertEquals(size / 4096, job.get("read").get("total_ios").asLong(), "every block read back, " + where);
            assertTrue(root.get("nvmeof").path("failure").isMissingNode(), where);
            assertEquals(setup, root.get("nvmeof").get("setup").asText());
            assertFalse(p.err.contains("LEAK:"), "Netty leak reports\n" + p.err);
        }
    }

    @Test
    @Order(4)
    void guestKernelLoggedNoNvmetErrors() throws Exception {
        int rc = vm.stop(Duration.ofMinutes(3));
        String kernel = PeerVm.kernelLog(vm.output());
        System.out.println("--- guest kernel log while the host worked ---\n" + kernel);
        assertEquals(0, rc, "run.sh / guest script status\n" + PeerVm.tail(vm.runLog(), 40));
        assertEquals(List.of(), PeerVm.complaints(kernel, line -> false), "the guest kernel complained");
        assertTrue(kernel.contains("creating nvm controller"), "nvmet logged no I/O controller:\n" + kernel);
    }

    // ================================================================= helpers

    record Proc(int rc, String out, String err) {
        @Override
        public String toString() {
            return "exit " + rc + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
        }
    }

    /** Runs nvmeof-perf as a separate process; prints what it printed. */
    private Proc perf(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(perf);
        cmd.addAll(List.of(args));
        int n = ++runs;
        Path out = work.resolve("perf-" + n + ".out");
        Path err = work.resolve("perf-" + n + ".err");
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        int rc;
        if (p.waitFor(5, TimeUnit.MINUTES)) {
            rc = p.exitValue();
        } else {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
            rc = 124;
        }
        Proc r = new Proc(rc, PeerVm.read(out), PeerVm.read(err));
        boolean json = rc == 0 && r.out.startsWith("{");
        System.out.printf(
                "--- nvmeof-perf %s (rc %d, %.1f s) ---%n%s%n--- stderr ---%n%s%n",
                String.join(" ", args),
                rc,
                (System.nanoTime() - t0) / 1e9,
                json ? "(" + r.out.length() + " chars of JSON)" : r.out,
                r.err);
        return r;
    }

    /**
     * What {@code bin/nvmeof-perf} execs: this module's jar and build/lib, the launcher's main class and JVM options
     * (Netty's leak detector paranoid instead of off, as in every test JVM), without its build-on-demand step, which
     * would rebuild the module under test in the middle of the run if a source were newer than the jar.
     */
    static List<String> perfCommand() throws IOException {
        Path launcher = null;
        for (Path d = Path.of("").toAbsolutePath(); d != null && launcher == null; d = d.getParent()) {
            if (Files.isExecutable(d.resolve("bin/nvmeof-perf"))) {
                launcher = d.resolve("bin/nvmeof-perf");
            }
        }
        assertNotNull(launcher, "bin/nvmeof-perf not found above " + Path.of("").toAbsolutePath());
        Matcher main = Pattern.compile("io\\.nvmeof\\.[\\w.]+Cli\\b").matcher(Files.readString(launcher));
        assertTrue(main.find(), launcher + " names no CLI class");
        Path build = launcher.getParent().getParent().resolve("perf/build");
        Path jar;
        try (var files = Files.list(build)) {
            jar = files.filter(f -> f.getFileName().toString().matches("nvmeof-perf-.*(?<!-tests)\\.jar"))
                    .findFirst()
                    .orElse(null);
        }
        assertTrue(
                jar != null && Files.isDirectory(build.resolve("lib")),
                "perf not packaged (no jar or build/lib in " + build + "): run mvn verify, not only mvn test");
        return List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms256m",
                "-Xmx1g",
                "-XX:+UseG1GC",
                "--add-exports",
                "java.base/sun.nio.ch=ALL-UNNAMED",
                "-Dio.netty.leakDetection.level=paranoid",
                "-Dio.netty.recycler.chunkSize=256",
                "-Dio.netty.allocator.maxCachedBufferCapacity=65536",
                "-cp",
                jar + ":" + build.resolve("lib") + "/*",
                main.group());
    }

    static boolean ioUringAvailable() {
        try {
            return io.netty.channel.uring.IoUring.isAvailable();
        } catch (LinkageError e) {
            return false;
        }
    }
}

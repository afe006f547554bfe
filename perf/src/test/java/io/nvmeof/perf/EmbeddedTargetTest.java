package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** With no --target, a target of ours runs in a separate process for the run and is gone afterwards. */
class EmbeddedTargetTest {
    static List<ProcessHandle> targetProcesses() {
        return ProcessHandle.current()
                .descendants()
                .filter(p -> p.isAlive() && p.info().commandLine().orElse("").contains(EmbeddedTarget.MARKER))
                .collect(Collectors.toList());
    }

    @Test
    void separateProcessStartsAndStops() throws Exception {
        try (EmbeddedTarget t = EmbeddedTarget.start("tcp", 1L << 30, List.of())) {
            assertTrue(t.isAlive());
            assertNotEquals(ProcessHandle.current().pid(), t.pid(), "its own process");
            assertTrue(t.uri().matches("nvme\\+tcp://127\\.0\\.0\\.1:\\d+/" + EmbeddedTarget.NQN), t.uri());
            assertEquals(1, targetProcesses().size());
            t.close();
            assertFalse(t.isAlive());
        }
        assertEquals(List.of(), targetProcesses());
    }

    @Test
    void tlsSetupsRunAgainstTheirOwnTlsTarget() throws Exception {
        Cli r = Cli.run(
                "compare",
                "--setups",
                "tcp-tls,tcp-tls-digest",
                "--iodepth",
                "4",
                "--bs",
                "4k,128k",
                "--runtime",
                "300ms",
                "--ramp_time",
                "100ms",
                "--size",
                "16m");
        assertEquals(0, r.exit(), r.toString());
        String out = r.out();
        assertTrue(out.contains("| tcp-tls "), out);
        assertTrue(out.contains("| tcp-tls-digest"), out);
        assertFalse(out.contains("unavailable") || out.contains("did not start"), out);
        assertEquals(List.of(), targetProcesses());
    }

    @Test
    void targetJvmGetsLeakDetectionAndExtraOptions() {
        List<String> o = EmbeddedTarget.jvmOptions(" -Xlog:gc:file=/tmp/x.log  -Dfoo=1 ");
        assertEquals(
                List.of(
                        "-Dio.netty.leakDetection.level=disabled",
                        "-Dio.netty.recycler.chunkSize=256",
                        "-Dio.netty.allocator.maxCachedBufferCapacity=65536",
                        "-Xlog:gc:file=/tmp/x.log",
                        "-Dfoo=1"),
                o);
        assertEquals(
                List.of(
                        "-Dio.netty.leakDetection.level=disabled",
                        "-Dio.netty.recycler.chunkSize=256",
                        "-Dio.netty.allocator.maxCachedBufferCapacity=65536"),
                EmbeddedTarget.jvmOptions(null));
    }

    /**
     * The launchers (bin/lib.sh's {@code nvmeof_netty_opts}), the container image's entry point and the perf tool's
     * own target each spell out Netty's tuning options; this fails when one of them changes and another does not.
     */
    @Test
    void launchersImageAndPerfTargetSetTheSameNettyOptions() throws Exception {
        Path root = Path.of("..").toAbsolutePath().normalize();
        String lib = Files.readString(root.resolve("bin/lib.sh"));
        Matcher m = Pattern.compile("nvmeof_netty_opts\\(\\) \\{\\s*echo \"([^\"]+)\"")
                .matcher(lib);
        assertTrue(m.find(), "bin/lib.sh defines nvmeof_netty_opts with one echo");
        List<String> launchers = Arrays.asList(m.group(1).trim().split("\\s+"));
        assertEquals(EmbeddedTarget.jvmOptions(null), launchers, "bin/lib.sh against EmbeddedTarget.jvmOptions");
        String entryPoint = Files.readAllLines(root.resolve("Dockerfile")).stream()
                .filter(l -> l.startsWith("ENTRYPOINT"))
                .findFirst()
                .orElseThrow();
        for (String option : launchers) {
            assertTrue(entryPoint.contains(" " + option + " "), "the Dockerfile's entry point lacks " + option);
        }
    }

    @Test
    void defaultRunUsesItAndLeavesNoProcess() throws Exception {
        assertEquals(List.of(), targetProcesses());
        Cli r = Cli.run(
                "--rw=randread",
                "--bs=4k",
                "--iodepth=4",
                "--runtime=500ms",
                "--ramp_time=200ms",
                "--output-format=json");
        assertEquals(0, r.exit(), r.toString());
        JsonNode n = new ObjectMapper().readTree(r.out()).get("nvmeof");
        assertTrue(n.get("target_embedded").asBoolean());
        assertTrue(n.get("target").asText().startsWith("nvme+tcp://127.0.0.1:"), n.toString());
        assertTrue(n.get("cpu_us_per_io").get("target").isNumber(), "target CPU read over the fabric: " + n);
        assertTrue(n.get("cpu").get("target").get("total_ns").asLong() > 0, n.toString());
        assertEquals(List.of(), targetProcesses(), "the target process is gone");
    }

    @Test
    void unavailableSetupIsAClearErrorAndNoProcessIsLeft() {
        Cli r = Cli.run("--target", "nvme+tcp://127.0.0.1:1/nqn.x:y", "--runtime=200ms", "--setup=tcp");
        assertEquals(1, r.exit(), r.toString());
        assertEquals(List.of(), targetProcesses());
    }
}

package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Runs bin/nvmeof-target as a user would: a real process, a real port, then SIGTERM. */
class TargetDaemonProcessIT {
    private static Path repoRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.isRegularFile(p.resolve("bin/nvmeof-target"))) {
            p = p.getParent();
        }
        if (p == null) {
            fail("bin/nvmeof-target not found above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    @Test
    void startsOnAPortAndStopsCleanlyOnSigterm() throws Exception {
        Path root = repoRoot();
        Process p = new ProcessBuilder(
                        root.resolve("bin/nvmeof-target").toString(),
                        "--listen",
                        "tcp://127.0.0.1:0",
                        "--namespace",
                        "size=1T",
                        "--namespace",
                        "size=16M,bs=512")
                .redirectErrorStream(true)
                .start();
        StringBuilder seen = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            int port = -1;
            String line;
            Pattern listening = Pattern.compile("listening on tcp://127\\.0\\.0\\.1:(\\d+)");
            while ((line = r.readLine()) != null) {
                seen.append(line).append('\n');
                Matcher m = listening.matcher(line);
                if (m.find()) {
                    port = Integer.parseInt(m.group(1));
                }
                if (line.startsWith("ready")) {
                    break;
                }
            }
            assertNotEquals(-1, port, "daemon output:\n" + seen);
            try (Socket s = new Socket("127.0.0.1", port)) {
                assertTrue(s.isConnected());
            }
            // SIGTERM through kill(1): Process.destroy() would also close our end of the daemon's output.
            new ProcessBuilder("kill", "-TERM", Long.toString(p.pid()))
                    .inheritIO()
                    .start()
                    .waitFor();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "daemon did not stop on SIGTERM:\n" + seen);
            while ((line = r.readLine()) != null) {
                seen.append(line).append('\n');
            }
        } finally {
            p.destroyForcibly();
        }
        assertTrue(seen.toString().contains("stopped"), seen.toString());
        // 143 = 128 + SIGTERM: the JVM's exit status after its shutdown hooks ran.
        assertEquals(143, p.exitValue(), seen.toString());
    }

    @Test
    void portInUseIsAClearErrorAndNonZeroExit() throws Exception {
        Path root = repoRoot();
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Process p = new ProcessBuilder(
                            root.resolve("bin/nvmeof-target").toString(),
                            "--listen",
                            "tcp://127.0.0.1:" + taken.getLocalPort(),
                            "--namespace",
                            "size=1G")
                    .redirectErrorStream(true)
                    .start();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(1, p.exitValue(), output);
            assertTrue(output.contains("in use"), output);
        }
    }
}

package io.nvmeof.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Asking whether the software RNIC is available must not start it (no shared-memory files for a mere probe). */
class SoftProbeTest {
    /** Run in a fresh JVM: prints the probe's answer. */
    public static final class ProbeMain {
        public static void main(String[] args) {
            SoftRdmaProvider p = new SoftRdmaProvider();
            System.out.println(p.isAvailable() + " " + p.unavailableReason());
        }
    }

    @Test
    void probingCreatesNoFiles(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("softrnic");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(
                        java,
                        "-Xmx64m",
                        "-D" + SoftDevice.DIR_PROPERTY + "=" + dir,
                        "-cp",
                        System.getProperty("java.class.path"),
                        ProbeMain.class.getName())
                .redirectErrorStream(true)
                .start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertEquals(0, p.exitValue(), out);
        assertEquals("true null", out);
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(0, files.count(), "a probe left files in " + dir);
        }
    }

    @Test
    void anUnusableDirectoryIsAReasonNotACrash(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("not-a-dir");
        Files.writeString(file, "x");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(
                        java,
                        "-Xmx64m",
                        "-D" + SoftDevice.DIR_PROPERTY + "=" + file.resolve("sub"),
                        "-cp",
                        System.getProperty("java.class.path"),
                        ProbeMain.class.getName())
                .redirectErrorStream(true)
                .start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.startsWith("false the software RNIC"), out);
        assertTrue(out.contains(file.toString()), out);
    }
}

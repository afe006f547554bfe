package io.nvmeof.transport.rdma.disni;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real verbs: boots the peer VM once (../shared/peer-vm/run.sh), creates Soft-RoCE rxe0 in it and runs
 * {@link DisniVerbsCheck} there over the DiSNI provider (jars compiled here, shared into the guest with --share).
 */
@Tag("vm")
class DisniVerbsIT {
    @Test
    void verbsOverSoftRoceInThePeerVm() throws Exception {
        Path peerVm = findPeerVm();
        Assumptions.assumeTrue(peerVm != null, "../shared/peer-vm not found");
        Path share = Files.createTempDirectory("disni-it");
        Path cp = Files.createDirectories(share.resolve("cp"));
        // the module jar (with the native library), its dependencies and the test classes
        Path moduleJar;
        try (var s = Files.list(Path.of("build"))) {
            moduleJar = s.filter(p -> p.getFileName().toString().matches("transport-rdma-.*\\.jar")
                            && !p.getFileName().toString().contains("tests"))
                    .findFirst().orElseThrow(() -> new IllegalStateException("no transport-rdma jar in build/"));
        }
        Assumptions.assumeTrue(jarHasNative(moduleJar), "libnvmeofrdma.so was not built (no rdma-core headers)");
        Files.copy(moduleJar, cp.resolve(moduleJar.getFileName()));
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(e);
            String n = p.getFileName().toString();
            if (n.endsWith(".jar") && (n.startsWith("disni-") || n.startsWith("slf4j-") || n.startsWith("nvmeof-core"))) {
                Files.copy(p, cp.resolve(n), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        copyTree(Path.of("build/test-classes"), share.resolve("test-classes"));
        Path script = share.resolve("disni-verbs.sh");
        Files.copy(Path.of("src/test/resources/vm/disni-verbs.sh"), script);
        Path out = share.resolve("out");

        waitForOtherVms();
        ProcessBuilder pb = new ProcessBuilder(peerVm.resolve("run.sh").toString(), "--share", share.toString(),
                "--out", out.toString(), "--no-fwd", "--timeout", "900", script.toString());
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean done = p.waitFor(1000, TimeUnit.SECONDS);
        System.out.println("---- peer VM output ----\n" + output);
        assertTrue(done, "run.sh finished");
        assertEquals(0, p.exitValue(), "guest script exit status (see output above)");
        assertTrue(output.contains("ALL OK"), "DisniVerbsCheck passed");
    }

    private static boolean jarHasNative(Path jar) throws IOException {
        try (var z = new java.util.zip.ZipFile(jar.toFile())) {
            return z.getEntry(DisniProvider.NATIVE_RESOURCE) != null;
        }
    }

    private static Path findPeerVm() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path p = dir.resolve("shared/peer-vm/run.sh");
            if (Files.isExecutable(p)) {
                return p.getParent();
            }
            p = dir.resolve("../shared/peer-vm/run.sh").normalize();
            if (Files.isExecutable(p)) {
                return p.getParent();
            }
        }
        Path fixed = Path.of("/work/shared/peer-vm");
        return Files.isExecutable(fixed.resolve("run.sh")) ? fixed : null;
    }

    /** One VM at a time on this host: wait (up to 20 min) while another qemu-system runs. */
    private static void waitForOtherVms() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(20);
        while (System.nanoTime() < deadline) {
            Process pg = new ProcessBuilder("pgrep", "-f", "qemu-system").redirectErrorStream(true).start();
            pg.getInputStream().readAllBytes();
            if (pg.waitFor() != 0) {
                return;
            }
            System.out.println("waiting for another peer VM to finish");
            Thread.sleep(5000);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var s = Files.walk(from)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    @SuppressWarnings("unused")
    private static List<String> lines(String s) {
        return s.lines().toList();
    }
}

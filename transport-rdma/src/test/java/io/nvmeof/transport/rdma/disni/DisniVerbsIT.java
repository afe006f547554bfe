package io.nvmeof.transport.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.testkit.peervm.PeerVm;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Real verbs: boots the peer VM once (interop/peer-vm/run.sh, guest linux-6.1), creates Soft-RoCE rxe0 in it and runs
 * {@link DisniVerbsCheck} there over the DiSNI provider (jars compiled here, shared into the guest with --share).
 */
@Tag("vm")
class DisniVerbsIT {
    @Test
    void verbsOverSoftRoceInThePeerVm() throws Exception {
        PeerVm peerVm = PeerVm.find().orElse(null);
        Assumptions.assumeTrue(peerVm != null, "interop/peer-vm not found above the working directory (or PEERVM_DIR)");
        Path share = Files.createTempDirectory("disni-it");
        Path cp = Files.createDirectories(share.resolve("cp"));
        // the module jar (with the native library), its dependencies and the test classes
        Path moduleJar;
        try (var s = Files.list(Path.of("build"))) {
            moduleJar = s.filter(p -> p.getFileName().toString().matches("transport-rdma-.*\\.jar")
                            && !p.getFileName().toString().contains("tests"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no transport-rdma jar in build/"));
        }
        Assumptions.assumeTrue(jarHasNative(moduleJar), "libnvmeofrdma.so was not built (no rdma-core headers)");
        Files.copy(moduleJar, cp.resolve(moduleJar.getFileName()));
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(e);
            String n = p.getFileName().toString();
            if (n.endsWith(".jar")
                    && (n.startsWith("disni-") || n.startsWith("slf4j-") || n.startsWith("nvmeof-core"))) {
                Files.copy(p, cp.resolve(n), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        PeerVm.copyTree(Path.of("build/test-classes"), share.resolve("test-classes"));
        Path script = share.resolve("disni-verbs.sh");
        Files.copy(Path.of("src/test/resources/vm/disni-verbs.sh"), script);
        Path out = share.resolve("out");

        peerVm.ensureImage(Duration.ofMinutes(10));
        PeerVm.Result r =
                peerVm.run(script, List.of(), Duration.ofSeconds(900), out, List.of("--share", share.toString()));
        String output = r.output();
        System.out.println("---- peer VM output ----\n" + output);
        assertEquals(
                0, r.rc(), () -> "guest script exit status; its checks and any JVM error report:\n" + summary(output));
        assertTrue(output.contains("ALL OK"), "DisniVerbsCheck passed");
    }

    private static boolean jarHasNative(Path jar) throws IOException {
        try (var z = new java.util.zip.ZipFile(jar.toFile())) {
            return z.getEntry(DisniProvider.NATIVE_RESOURCE) != null;
        }
    }

    /** The guest's own lines (checks, section heads, a JVM error report), without the libraries' log lines. */
    private static String summary(String output) {
        List<String> kept = output.lines()
                .filter(l -> l.startsWith("OK")
                        || l.startsWith("FAIL")
                        || l.startsWith("==")
                        || l.startsWith("#")
                        || l.matches("^[CJjVv]  .*")
                        || l.contains("Exception"))
                .toList();
        return String.join("\n", kept.subList(Math.max(0, kept.size() - 40), kept.size()));
    }
}

package io.nvmeof.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.testkit.peervm.RunningVm;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Differential conformance: the same seeded command sequences go to the Linux kernel's nvmet-tcp (guest linux-6.1 in
 * the peer VM, a loop device on tmpfs) and to our target (in this JVM, same geometry and NQNs); every difference in
 * status, DW0/DW1, data (after {@link Masks}) or connection fate must be allow-listed (allow-list.txt) or the test
 * fails. The corpus: {@code -Dconformance.seed} (default in the pom) and {@code -Dconformance.count} sequences.
 *
 * <p>{@code mvn -B -pl conformance -am verify -Dit.test=NvmetDifferentialIT -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dconformance.seed=N -Dconformance.count=M}
 */
@Tag("vm")
@Timeout(value = 40, unit = TimeUnit.MINUTES)
class NvmetDifferentialIT {

    @Test
    void oursAnswersLikeNvmet() throws Exception {
        long seed = Long.getLong("conformance.seed", 20260101L);
        int count = Integer.getInteger("conformance.count", 700);
        Path allowFile = Path.of(System.getProperty("conformance.allowList", "allow-list.txt"));
        AllowList allow = AllowList.read(allowFile);
        Geometry g = Geometry.DEFAULT;

        PeerVm peer = PeerVm.locate();
        peer.ensureImage(Duration.ofMinutes(10));
        Path work = Files.createTempDirectory("nvmet-differential-it");
        Path script = PeerVm.copyResource(NvmetDifferentialIT.class, "/conformance/serve-nvmet-conformance.sh", work);
        int port = PeerVm.freePort();
        long t0 = System.nanoTime();
        try (RunningVm vm = peer.startServing(
                        script,
                        List.of(g.subNqn(), (g.bytes() >> 20) + "M", "3000"),
                        port,
                        4420,
                        Duration.ofMinutes(60),
                        work.resolve("job"),
                        "^PEERVM READY",
                        Duration.ofMinutes(4));
                OurTarget ours = new OurTarget(g)) {
            Matcher m = vm.await("(?m)^INFO ns1 bytes=(\\d+) lbs=(\\d+) kernel=(\\S+)", Duration.ofSeconds(5));
            assertEquals(g.bytes(), Long.parseLong(m.group(1)), "nvmet namespace size");
            assertEquals(g.blockSize(), Integer.parseInt(m.group(2)), "nvmet logical block size");
            System.out.printf(
                    "nvmet on kernel %s at 127.0.0.1:%d; ours at %s; VM up in %d s%n",
                    m.group(3), port, ours.address, (System.nanoTime() - t0) / 1_000_000_000L);

            Generator gen = new Generator(seed, g);
            String only = System.getProperty("conformance.only", "");
            List<Sequence> corpus = only.isBlank()
                    ? gen.generate(count)
                    : Arrays.stream(only.split(","))
                            .map(s -> gen.sequence(Integer.parseInt(s.trim())))
                            .toList();
            Harness h = new Harness(ours.address, new InetSocketAddress("127.0.0.1", port), g, allow);
            h.verbose = !only.isBlank();
            Harness.Result r = h.run(corpus, System.out);
            h.report(r, System.out);
            System.out.printf("seed %d, count %d; allow-list %s%n", seed, count, allowFile);
            vm.stop(Duration.ofMinutes(2));
            System.out.println("--- guest (tail) ---\n" + PeerVm.tail(vm.output(), 30));
            assertTrue(r.fresh().isEmpty(), r.fresh().size() + " differences not in the allow-list (see above)");
        } finally {
            PeerVm.deleteRecursively(work);
        }
    }
}

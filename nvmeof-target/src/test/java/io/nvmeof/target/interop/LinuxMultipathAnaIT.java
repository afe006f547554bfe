package io.nvmeof.target.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.target.Controller;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.AnaStateConfig;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.testkit.peervm.RunningVm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Linux kernel's native NVMe multipath (nvme_core.multipath=Y, peer VM) against ONE subsystem of the Java target
 * on TWO TCP listeners (PORTID 1 and 2, both on 127.0.0.1 = 10.0.2.2 in the guest): one block device with two paths,
 * ANA optimized / non-optimized, and I/O that follows the ANA states the test flips through the Java API while fio
 * writes and verifies (crc32c) on the multipath device; without and with header and data digests. The guest side is
 * {@code interop/linux-multipath-ana.sh}; the flip protocol is described there.
 *
 * <p>Here the target counts the NVM commands each path carries ({@link Controller#ioCommands()}) between the guest's
 * PHASE START and END lines: with port 1 inaccessible it must carry none and port 2 some; with port 1 optimized and
 * port 2 non-optimized, port 1 must carry the I/O (the host's default NUMA policy uses optimized paths only).
 *
 * <p>Run with {@code mvn -B -o -pl nvmeof-target -am verify -Dit.test=LinuxMultipathAnaIT -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false}. One VM boot; about 1.5 minutes
 * (88–92 s measured with the linux-6.1 guest).
 */
@Tag("vm")
@Timeout(value = 25, unit = java.util.concurrent.TimeUnit.MINUTES)
class LinuxMultipathAnaIT {
    static final String NQN = "nqn.2026-01.io.nvmeof:multipath";
    static final long NS_BYTES = 128L << 20;
    static final int GROUP = 1;
    static final int PORT_ID_1 = 1;
    static final int PORT_ID_2 = 2;
    static final List<String> ROUNDS = List.of("plain", "digests");
    static final int PHASES = 4;
    static final Duration STEP_MAX = Duration.ofMinutes(4);

    @Test
    void kernelMultipathFollowsAnaStates() throws Exception {
        // -Dana.guest=linux-6.12 runs it on the other guest (default: the kit's default guest, linux-6.1).
        PeerVm vm = PeerVm.locate().guest(System.getProperty("ana.guest", PeerVm.DEFAULT_GUEST));
        vm.ensureImage(Duration.ofMinutes(10));

        TargetLogCapture log = new TargetLogCapture();
        Path work = Files.createTempDirectory("linux-multipath-ana-it");
        Path job = work.resolve("job");
        long t0 = System.nanoTime();
        try (NvmeTarget target = NvmeTarget.start(config())) {
            int port1 = target.boundAddresses().get(0).getPort();
            int port2 = target.boundAddresses().get(1).getPort();
            assertEquals(PORT_ID_1, target.listeners().get(0).portInfo().portId());
            assertEquals(PORT_ID_2, target.listeners().get(1).portInfo().portId());
            Path script = PeerVm.copyResource(LinuxMultipathAnaIT.class, "/interop/linux-multipath-ana.sh", work);
            List<String> args = List.of("10.0.2.2", Integer.toString(port1), Integer.toString(port2), NQN, "8M");
            System.out.println("peer VM: " + vm.dir() + " run.sh --no-fwd " + script + " " + args);
            List<String> phases = new ArrayList<>();
            try (RunningVm guest = vm.start(script, args, List.of("--no-fwd"), Duration.ofMinutes(20), job)) {
                for (String round : ROUNDS) {
                    for (int k = 1; k <= PHASES; k++) {
                        awaitLine(guest, "FLIP " + round + " " + k);
                        boolean odd = k % 2 == 1;
                        // Odd: port 1 inaccessible, port 2 optimized. Even: back to the configured states.
                        target.setAnaState(NQN, PORT_ID_1, GROUP, odd ? AnaState.INACCESSIBLE : AnaState.OPTIMIZED);
                        target.setAnaState(NQN, PORT_ID_2, GROUP, odd ? AnaState.OPTIMIZED : AnaState.NON_OPTIMIZED);
                        awaitLine(guest, "PHASE " + round + " " + k + " START");
                        long[] start = perPath(target);
                        awaitLine(guest, "PHASE " + round + " " + k + " END");
                        long[] end = perPath(target);
                        long d1 = end[0] - start[0];
                        long d2 = end[1] - start[1];
                        String what = round + " phase " + k + " (port 1 " + (odd ? "inaccessible" : "optimized")
                                + ", port 2 " + (odd ? "optimized" : "non-optimized") + "): commands on port 1 "
                                + d1 + ", port 2 " + d2;
                        phases.add(what);
                        System.out.println(what);
                        if (odd) {
                            assertEquals(0, d1, "no I/O on the inaccessible path: " + what);
                            assertTrue(d2 > 0, "I/O on the optimized path: " + what);
                        } else {
                            assertTrue(d1 > 0, "I/O on the optimized path: " + what);
                            assertTrue(
                                    d2 <= Math.max(16, d1 / 50),
                                    "the non-optimized path carries (almost) nothing while an optimized one is up: "
                                            + what);
                        }
                    }
                }
                awaitLine(guest, "ALL PASS");
                int rc = guest.stop(Duration.ofMinutes(2));
                System.out.println("===== guest output (rc " + rc + ")\n" + guest.output());
                assertEquals(0, rc, "guest script exit status");
            } catch (IllegalStateException e) {
                fail("the kernel multipath host failed: " + e.getMessage());
            }
            Matcher passes = Pattern.compile("(?m)^PASS: .*$").matcher(Files.readString(job.resolve("output.log")));
            int n = 0;
            while (passes.find()) {
                n++;
            }
            assertEquals(7, n, "PASS lines: multipath on, per round connect/fio/disconnect");
            System.out.println("phases: " + phases);
            System.out.printf("LinuxMultipathAnaIT: %.1f s%n", (System.nanoTime() - t0) / 1e9);

            List<String> errors = log.errors();
            assertEquals(List.of(), errors, "the target logged errors while the kernel host used it");
        } finally {
            log.close();
            if (!Boolean.getBoolean("peervm.keep")) {
                PeerVm.deleteRecursively(work);
            } else {
                System.out.println("kept " + work);
            }
        }
    }

    private static void awaitLine(RunningVm guest, String line) throws InterruptedException {
        guest.await("^" + Pattern.quote(line) + "$", STEP_MAX);
    }

    /** NVM commands carried so far by the I/O controllers of NQN, by listener: [port 1, port 2]. */
    private static long[] perPath(NvmeTarget target) {
        long[] n = new long[2];
        for (Controller c : target.subsystem(NQN).controllers()) {
            int portId = c.port().portId();
            if (portId == PORT_ID_1 || portId == PORT_ID_2) {
                n[portId - 1] += c.ioCommands();
            }
        }
        return n;
    }

    static TargetConfig config() {
        SubsystemConfig subsystem = new SubsystemConfig(
                NQN,
                true,
                List.of(),
                List.of(new NamespaceConfig(1, NS_BYTES, 4096, null, false)),
                null,
                null,
                List.of(new AnaStateConfig(PORT_ID_2, GROUP, AnaState.NON_OPTIMIZED)));
        return new TargetConfig(
                List.of(
                        new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384),
                        new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)),
                List.of(subsystem),
                1L << 30,
                0);
    }
}

package io.nvmeof.target.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.target.Controller;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.testkit.peervm.PeerVm;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * NVMe reservations from the Linux kernel host (Debian 6.1 in the peer VM: nvme-tcp, nvme-cli 2.3) against the Java
 * target in this JVM on 127.0.0.1: the guest connects as two hosts (two host NQNs and Host IDs, native multipath off,
 * so two block devices of one namespace) and runs nvme resv-register / resv-acquire / resv-report / resv-release,
 * with dd showing Reservation Conflict on I/O from the host the reservation excludes; plain and with digests. The
 * guest side is {@code interop/linux-kernel-reservations.sh}.
 *
 * <p>Our initiator against nvmet is not tested: the 6.1 guest's nvmet has no reservations (they came in 6.13).
 *
 * <p>Run with {@code mvn -B -o -pl nvmeof-target verify -Dit.test=LinuxKernelReservationsIT}. One VM boot.
 */
@Tag("vm")
@Timeout(value = 15, unit = java.util.concurrent.TimeUnit.MINUTES)
class LinuxKernelReservationsIT {
    static final String NQN = "nqn.2026-01.io.nvmeof:reservations";
    static final String HOST_A = "nqn.2014-08.org.nvmexpress:uuid:5eed0000-0000-4000-8000-0000000000a1";
    static final String HOST_B = "nqn.2014-08.org.nvmexpress:uuid:5eed0000-0000-4000-8000-0000000000b2";

    static final List<String> EXPECTED_STEPS = List.of(
            "modprobe nvme-core multipath=N",
            "two hosts connected",
            "ONCS bit 5, RESCAP 0xfe",
            "nvme resv-register (both hosts)",
            "nvme resv-acquire Write Exclusive by A",
            "write from B refused while A holds Write Exclusive",
            "acquire by B refused",
            "nvme resv-release; B writes again",
            "read from B refused while A holds Exclusive Access",
            "nvme resv-acquire preempt by B; A unregistered",
            "nvme resv-release clear",
            "disconnect");

    @Test
    void linuxKernelHostReservations() throws Exception {
        PeerVm vm = PeerVm.locate();
        vm.ensureImage(Duration.ofMinutes(10));
        TargetLogCapture log = new TargetLogCapture();
        Path work = Files.createTempDirectory("linux-kernel-reservations-it");
        Set<String> hostsSeen = Collections.synchronizedSet(new TreeSet<>());
        try (NvmeTarget target = NvmeTarget.start(config())) {
            InetSocketAddress addr = target.boundAddresses().get(0);
            Thread sampler = new Thread(
                    () -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            for (Controller c : target.controllers()) {
                                if (!c.isDiscovery()) {
                                    hostsSeen.add(c.hostNqn() + " " + c.hostId());
                                }
                            }
                            try {
                                Thread.sleep(20);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    },
                    "controller-sampler");
            sampler.setDaemon(true);
            sampler.start();
            Path script =
                    PeerVm.copyResource(LinuxKernelReservationsIT.class, "/interop/linux-kernel-reservations.sh", work);
            List<String> args = List.of("10.0.2.2", Integer.toString(addr.getPort()), NQN);
            PeerVm.Result r = vm.run(script, args, Duration.ofMinutes(12), work.resolve("job"), List.of());
            sampler.interrupt();
            sampler.join(5_000);
            System.out.println(
                    "===== guest output (rc " + r.rc() + ", wall " + r.wall().toMillis() + " ms)\n" + r.output());
            if (r.rc() == 124 || r.rc() == 125) {
                System.out.println("===== console tail\n" + PeerVm.tail(r.console(), 40));
            }
            List<String> failed = new ArrayList<>();
            for (String label : List.of("plain", "digests")) {
                for (String step : EXPECTED_STEPS) {
                    String line = step.startsWith("modprobe") ? step : label + ": " + step;
                    if (!Pattern.compile("(?m)^PASS: " + Pattern.quote(line))
                            .matcher(r.output())
                            .find()) {
                        failed.add(line);
                    }
                }
            }
            Matcher failLine = Pattern.compile("(?m)^FAIL: .*$").matcher(r.output());
            String firstFail = failLine.find() ? failLine.group() : "(no FAIL line)";
            if (r.rc() != 0 || !r.output().contains("ALL PASS") || !failed.isEmpty()) {
                fail("reservations from the Linux kernel host failed: rc " + r.rc() + ", " + firstFail
                        + ", steps without PASS: " + failed + "\n--- guest output tail ---\n"
                        + PeerVm.tail(r.output(), 120));
            }
            System.out.println("hosts the target saw: " + hostsSeen);
            assertEquals(
                    Set.of(
                            HOST_A + " 5eed0000-0000-4000-8000-0000000000a1",
                            HOST_B + " 5eed0000-0000-4000-8000-0000000000b2"),
                    hostsSeen,
                    "two hosts, each with its own Host ID");
            List<String> errors = log.errors();
            assertEquals(List.of(), errors, "the target logged errors while the kernel host used it");
        } finally {
            log.close();
            if (!Boolean.getBoolean("peervm.keep")) {
                PeerVm.deleteRecursively(work);
            }
        }
    }

    static TargetConfig config() {
        SubsystemConfig open = new SubsystemConfig(
                NQN, true, List.of(), List.of(new NamespaceConfig(1, 64L << 20, 4096, null, false)), null, null);
        return new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)), List.of(open), 1L << 30, 0);
    }
}

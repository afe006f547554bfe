package io.nvmeof.target.interop;

import static io.nvmeof.target.e2e.RawTcpHost.expectOk;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.target.Controller;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.e2e.RawTcpHost;
import io.nvmeof.testkit.peervm.PeerVm;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Linux kernel NVMe/TCP host (Debian 6.1 in the peer VM: nvme-tcp, nvme-cli 2.3, fio) against the Java target
 * running in this JVM on 127.0.0.1 (10.0.2.2 in the guest). The guest side is {@code interop/linux-kernel-host.sh};
 * {@code interop/nvmet-self-check.sh} proves that script passes against the kernel's own nvmet.
 *
 * <p>Run with {@code mvn -B -o -pl target verify -Dit.test=LinuxKernelHostIT}. One VM boot; about 1–2 minutes.
 */
@Tag("vm")
@Timeout(value = 15, unit = java.util.concurrent.TimeUnit.MINUTES)
class LinuxKernelHostIT {
    static final String NQN = "nqn.2026-01.io.nvmeof:interop";
    static final String RESTRICTED_NQN = "nqn.2026-01.io.nvmeof:interop-restricted";
    /** The fixed host NQN of the peer VM (peer-vm/README.md). */
    static final String VM_HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:5eed0000-0000-4000-8000-000000000001";

    static final String OTHER_HOST = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000ff";
    static final long NS1_BYTES = 256L << 20;
    static final long NS2_BYTES = 64L << 20;
    static final String JAVA_MARKER = "NVMEOF-JAVA-WROTE-THIS";
    static final String GUEST_MARKER = "NVMEOF-JAVA-INTEROP-GUEST";
    /** Where linux-kernel-host.sh writes GUEST_MARKER: beyond every range its fio, discard and zeroing runs touch. */
    static final long GUEST_MARKER_LBA = 50000;

    static final List<String> EXPECTED_STEPS = List.of(
            "modprobe nvme-tcp",
            "nvme discover",
            "nvme connect -i 2",
            "nvme id-ctrl",
            "nvme id-ns",
            "read back the block the Java host wrote",
            "fio randrw verify bs=4k",
            "fio randrw verify bs=16k",
            "fio randrw verify bs=128k",
            "fio randrw verify bs 512/4k",
            "blkdiscard",
            "nvme write-zeroes",
            "marker block written",
            "nvme disconnect (",
            "nvme connect --hdr-digest --data-digest",
            "fio randrw verify bs 4k/128k with digests",
            "nvme disconnect (digests)",
            "connect to " + RESTRICTED_NQN + " refused");

    @Test
    void linuxKernelHostAgainstJavaTarget() throws Exception {
        PeerVm vm = PeerVm.locate();
        vm.ensureImage(Duration.ofMinutes(10));

        TargetLogCapture log = new TargetLogCapture();
        Path work = Files.createTempDirectory("linux-kernel-host-it");
        Path job = work.resolve("job");
        AtomicBoolean sampling = new AtomicBoolean(true);
        Map<Controller, Integer> seen = Collections.synchronizedMap(new IdentityHashMap<>());
        try (NvmeTarget target = NvmeTarget.start(config())) {
            InetSocketAddress addr = target.boundAddresses().get(0);
            writeJavaMarker(addr);
            target.controllers()
                    .forEach(c -> assertTrue(c.isClosed() || c.hostNqn().equals(RawTcpHost.DEFAULT_HOST_NQN)));
            awaitNoControllers(target);

            // Watch the target's side while the kernel host works: which controllers appear, how many I/O queues.
            Thread sampler = new Thread(
                    () -> {
                        while (sampling.get()) {
                            for (Controller c : target.controllers()) {
                                seen.merge(c, c.ioQueueCount(), Math::max);
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

            Path script = PeerVm.copyResource(LinuxKernelHostIT.class, "/interop/linux-kernel-host.sh", work);
            List<String> args = List.of(
                    "10.0.2.2",
                    Integer.toString(addr.getPort()),
                    NQN,
                    RESTRICTED_NQN,
                    Long.toString(NS1_BYTES),
                    "4096",
                    Long.toString(NS2_BYTES),
                    "512",
                    "16M",
                    JAVA_MARKER);
            System.out.println("peer VM: " + vm.dir() + " run.sh " + script + " " + args);
            PeerVm.Result r = vm.run(script, args, Duration.ofMinutes(12), job, List.of());
            sampling.set(false);
            sampler.join(5_000);

            System.out.println(
                    "===== guest output (rc " + r.rc() + ", wall " + r.wall().toMillis() + " ms)\n" + r.output());
            if (r.rc() == 124 || r.rc() == 125) {
                System.out.println("===== console tail\n" + PeerVm.tail(r.console(), 40));
            }
            List<String> failed = new ArrayList<>();
            for (String step : EXPECTED_STEPS) {
                if (!Pattern.compile("(?m)^PASS: " + Pattern.quote(step))
                        .matcher(r.output())
                        .find()) {
                    failed.add(step);
                }
            }
            Matcher failLine = Pattern.compile("(?m)^FAIL: .*$").matcher(r.output());
            String firstFail = failLine.find() ? failLine.group() : "(no FAIL line)";
            if (r.rc() != 0 || !r.output().contains("ALL PASS") || !failed.isEmpty()) {
                fail("the Linux kernel host failed against the Java target: rc " + r.rc() + ", " + firstFail
                        + ", steps without PASS: " + failed + "\n--- guest output tail ---\n"
                        + PeerVm.tail(r.output(), 120));
            }

            // Target side: the VM's host NQN got I/O controllers for NQN with at least 2 I/O queues (one plain and
            // one digest connect), discovery controllers came and went, nothing ever reached the restricted one.
            List<String> summary = new ArrayList<>();
            int ioControllers = 0;
            int maxQueues = 0;
            int discoveryControllers = 0;
            synchronized (seen) {
                for (Map.Entry<Controller, Integer> e : seen.entrySet()) {
                    Controller c = e.getKey();
                    summary.add(c.subsystem().nqn() + " cntlid " + c.cntlid() + " host " + c.hostNqn() + " ioq "
                            + e.getValue());
                    assertEquals(VM_HOST_NQN, c.hostNqn(), "a controller of an unexpected host: " + c);
                    assertTrue(
                            !RESTRICTED_NQN.equals(c.subsystem().nqn()),
                            "a controller of the restricted subsystem: " + c);
                    if (c.isDiscovery()) {
                        discoveryControllers++;
                    } else if (NQN.equals(c.subsystem().nqn())) {
                        ioControllers++;
                        maxQueues = Math.max(maxQueues, e.getValue());
                    }
                }
            }
            System.out.println("controllers the target saw: " + summary);
            assertTrue(ioControllers >= 2, "expected 2 I/O controllers (plain, digests), saw " + summary);
            assertTrue(maxQueues >= 2, "expected 2 I/O queues on a controller, saw " + summary);
            assertTrue(discoveryControllers >= 1, "nvme discover left no trace on the target: " + summary);
            awaitNoControllers(target);

            // The block the kernel host wrote is where the Java host expects it.
            try (RawTcpHost admin = RawTcpHost.connect(addr, false, false)) {
                expectOk(admin.connectAdmin(NQN), "admin Connect after the VM");
                admin.enable();
                try (RawTcpHost io = RawTcpHost.connect(addr, false, false)) {
                    expectOk(io.connectIo(1, admin.cntlid(), NQN), "I/O Connect after the VM");
                    byte[] block = new byte[4096];
                    expectOk(io.read(1, GUEST_MARKER_LBA, 4096, block), "read the guest marker block");
                    String text = new String(block, 0, GUEST_MARKER.length(), StandardCharsets.US_ASCII);
                    assertEquals(
                            GUEST_MARKER,
                            text,
                            "the guest's marker block at LBA " + GUEST_MARKER_LBA + " of namespace 1");
                }
                admin.shutdown();
            }
            awaitNoControllers(target);

            List<String> errors = log.errors();
            assertEquals(List.of(), errors, "the target logged errors while the kernel host used it");
        } finally {
            sampling.set(false);
            log.close();
            if (!Boolean.getBoolean("peervm.keep")) {
                PeerVm.deleteRecursively(work);
            } else {
                System.out.println("kept " + work);
            }
        }
    }

    static TargetConfig config() {
        SubsystemConfig open = new SubsystemConfig(
                NQN,
                true,
                List.of(),
                List.of(
                        new NamespaceConfig(1, NS1_BYTES, 4096, null, false),
                        new NamespaceConfig(2, NS2_BYTES, 512, null, false)),
                null,
                null);
        SubsystemConfig restricted = new SubsystemConfig(
                RESTRICTED_NQN, false, List.of(OTHER_HOST), List.of(NamespaceConfig.of(1, 16L << 20)), null, null);
        return new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)), List.of(open, restricted), 1L << 30, 0);
    }

    /** Namespace 2 LBA 200 gets JAVA_MARKER (NUL padded); the guest reads it with dd before its own I/O. */
    private static void writeJavaMarker(InetSocketAddress addr) throws IOException {
        try (RawTcpHost admin = RawTcpHost.connect(addr, false, false)) {
            expectOk(admin.connectAdmin(NQN), "admin Connect");
            admin.enable();
            try (RawTcpHost io = RawTcpHost.connect(addr, false, false)) {
                expectOk(io.connectIo(1, admin.cntlid(), NQN), "I/O Connect");
                byte[] block = new byte[512];
                byte[] text = JAVA_MARKER.getBytes(StandardCharsets.US_ASCII);
                System.arraycopy(text, 0, block, 0, text.length);
                expectOk(io.write(2, 200, 512, block), "write the Java marker");
            }
            admin.shutdown();
        }
    }

    private static void awaitNoControllers(NvmeTarget target) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!target.controllers().isEmpty()) {
            if (System.nanoTime() > deadline) {
                fail("controllers still live on the target: " + target.controllers());
            }
            Thread.sleep(50);
        }
    }
}

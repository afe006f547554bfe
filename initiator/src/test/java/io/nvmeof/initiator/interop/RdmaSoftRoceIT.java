package io.nvmeof.initiator.interop;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.transport.rdma.disni.DisniProvider;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * NVMe/RDMA over <b>real verbs</b>: Soft-RoCE (rdma_rxe on the guest's eth0) in the peer VM (Debian's 6.1 kernel with
 * nvmet-rdma and nvme-rdma), every JVM running <em>inside</em> the guest over the DiSNI provider (the host has no
 * RDMA).
 * One VM boot runs {@code interop/rdma-softroce.sh}:
 * <ol type="a">
 *   <li>our target daemon ({@code --listen rdma://10.0.2.15:4420}, 256 MiB / 4 KiB and 64 MiB / 512 B namespaces)
 *       with the kernel host: {@code nvme discover -t rdma}, {@code nvme connect -t rdma -i 2}, {@code nvme list},
 *       {@code id-ctrl}, fio randrw {@code verify=crc32c} at 4k, 16k, 128k (and 512/4k), disconnect, clean stop;</li>
 *   <li>our initiator ({@link RdmaGuestCheck}) against the kernel's nvmet-rdma (loop devices on tmpfs, 512 B and
 *       4 KiB blocks, port 4421): discovery, 2 I/O queues, a pattern written from 2 threads with in-capsule and keyed
 *       transfers up to 1 MiB, read back and compared byte for byte, the kernel's backing files hashed against the
 *       pattern, unaligned {@code BlockDevice} I/O;</li>
 *   <li>our initiator (JVM 2) against our target daemon (JVM 1), both on rxe0: the same checks;</li>
 *   <li>the kernel host against a file-backed namespace of our target daemon: 16 MiB written, 8 MiB discarded (the
 *       file shrinks on disk, zeros read back), 8 MiB written into the holes and read back, and after a clean stop the
 *       file holds exactly that: chunks registered as memory regions before the discard (pinned pages the punch took
 *       out of the file) are registered anew, so no write lands in a stale page.</li>
 * </ol>
 * Every JVM runs with {@code -Dnvmeof.rdma.provider=disni} (no fallback to the software RNIC); the script checks that
 * the daemon maps libnvmeofrdma.so and librxe and no software RNIC memory region, and that rxe0's packet counters
 * moved. Each part also requires a clean kernel log (no timeout, reset, reconnect or error from nvme-rdma, nvmet-rdma
 * or rxe), since fio's verify would pass across a silent error recovery, and a target daemon that logged no WARNING.
 *
 * <p>Run: {@code mvn -B -o -pl initiator verify -Dit.test=RdmaSoftRoceIT -Dtest=NoSuchTest
 * -Dsurefire.failIfNoSpecifiedTests=false}; {@code -Drdma.parts=d} runs a subset, {@code -Dpeervm.keep=true} keeps
 * the shared dir and job dir (console log). The VM is emulated (TCG): no speed is asserted; a run takes 3–6 minutes.
 */
@Tag("vm")
@Timeout(value = 25, unit = TimeUnit.MINUTES)
class RdmaSoftRoceIT {
    static final Duration VM_TIMEOUT = Duration.ofSeconds(600);

    /** Every step that must print {@code PASS: <step>} (as a prefix), per part. */
    static final List<String> A_STEPS = List.of(
            "our target daemon ready on rdma://10.0.2.15:4420 over DiSNI",
            "a: modprobe nvme-rdma",
            "a: nvme discover -t rdma",
            "a: nvme connect -t rdma -i 2",
            "a: the queues receive commands from their poll group's shared receive queue",
            "a: nvme list / id-ctrl",
            "a: namespace sizes and block sizes",
            "a: fio randrw verify=crc32c bs=4k",
            "a: fio randrw verify=crc32c bs=16k",
            "a: fio randrw verify=crc32c bs=128k",
            "a: fio randrw verify=crc32c bs 512/4k",
            "a: nvme disconnect",
            "a: kernel log clean");

    static final List<String> B_STEPS = List.of(
            "b: nvmet-rdma on 10.0.2.15:4421",
            "b provider disni",
            "b discover",
            "b connect -i 2",
            "b verified I/O ns1",
            "b BlockDevice unaligned I/O ns1",
            "b verified I/O ns2",
            "b BlockDevice unaligned I/O ns2",
            "b disconnect",
            "b: the nvmet backing files hold exactly the pattern",
            "b: nvmet cleared",
            "b: kernel log clean");
    static final List<String> C_STEPS = List.of(
            "c provider disni",
            "c discover",
            "c connect -i 2",
            "c verified I/O ns1",
            "c BlockDevice unaligned I/O ns1",
            "c verified I/O ns2",
            "c BlockDevice unaligned I/O ns2",
            "c disconnect",
            "c: traffic went through rxe0",
            "c: kernel log clean");
    static final List<String> D_STEPS = List.of(
            "our target daemon ready on rdma://10.0.2.15:4420 over DiSNI",
            "d: nvme connect -t rdma",
            "d: 16 MiB written over RDMA",
            "d: blkdiscard 8 MiB reads zeros",
            "d: 8 MiB written into the holes over RDMA read back",
            "our target daemon stopped cleanly",
            "d: the file holds what was written after the discard",
            "d: kernel log clean");

    @Test
    void nvmeRdmaOverSoftRoceInThePeerVm() throws Exception {
        String parts = System.getProperty("rdma.parts", "abcd");
        boolean keep = Boolean.getBoolean("peervm.keep");
        assertNotNull(
                RdmaSoftRoceIT.class.getClassLoader().getResource(DisniProvider.NATIVE_RESOURCE),
                "libnvmeofrdma.so is not in the transport-rdma jar: install libibverbs-dev and librdmacm-dev, rebuild");
        PeerVm peer = PeerVm.locate();
        peer.ensureImage(Duration.ofMinutes(10));

        Path work = Files.createTempDirectory("rdma-softroce-it");
        Path share = Files.createDirectories(work.resolve("share"));
        Path job = work.resolve("job");
        try {
            String guestCp = shareClassPath(share);
            Path script = PeerVm.copyResource(RdmaSoftRoceIT.class, "/interop/rdma-softroce.sh", share);

            System.out.println("peer VM: " + peer.dir() + " run.sh --share " + share + " " + script + " " + parts
                    + "\nguest class path: " + guestCp);
            PeerVm.Result r = peer.run(script, List.of(parts), VM_TIMEOUT, job, List.of("--share", share.toString()));
            String out = r.output();
            int rc = r.rc();
            System.out.printf(
                    "===== peer VM output (run.sh rc %d, %.1f s)%n%s%n",
                    rc, r.wall().toMillis() / 1e3, out);
            if (rc == 124 || rc == 125) {
                System.out.println("===== console tail\n" + PeerVm.tail(r.console(), 40));
            }

            List<String> missing = new ArrayList<>();
            for (char part : parts.toCharArray()) {
                List<String> steps = switch (part) {
                    case 'a' -> A_STEPS;
                    case 'b' -> B_STEPS;
                    case 'c' -> C_STEPS;
                    case 'd' -> D_STEPS;
                    default -> throw new IllegalArgumentException("rdma.parts: only a, b, c, d: " + parts);
                };
                for (String step : steps) {
                    if (!Pattern.compile("(?m)^PASS: " + Pattern.quote(step))
                            .matcher(out)
                            .find()) {
                        missing.add(step);
                    }
                }
                if (!Pattern.compile("(?m)^PART " + part + " OK").matcher(out).find()) {
                    missing.add("PART " + part + " OK");
                }
            }
            if (parts.contains("c") && !out.contains("PASS: our target daemon stopped cleanly")) {
                missing.add("our target daemon stopped cleanly");
            }
            Matcher failLine = Pattern.compile("(?m)^FAIL: .*$").matcher(out);
            List<String> fails = new ArrayList<>();
            while (failLine.find()) {
                fails.add(failLine.group());
            }
            if (rc != 0
                    || !Pattern.compile("(?m)^ALL PASS").matcher(out).find()
                    || !missing.isEmpty()
                    || !fails.isEmpty()) {
                fail("NVMe/RDMA over Soft-RoCE failed: run.sh rc " + rc + ", " + fails + ", steps without PASS: "
                        + missing + " (guest output above)");
            }
        } finally {
            if (keep) {
                System.out.println("kept " + work);
            } else {
                PeerVm.deleteRecursively(work);
            }
        }
    }

    /**
     * Copies this JVM's test class path into {@code share}: jars into {@code cp/}, class directories into {@code dN/};
     * writes the guest's class path ({@code /share/...}) to {@code cp.txt} and returns it. That class path holds the
     * initiator, the target (through test-support), both transports, DiSNI and this package's
     * {@link RdmaGuestCheck}.
     */
    static String shareClassPath(Path share) throws IOException {
        Path jars = Files.createDirectories(share.resolve("cp"));
        List<String> guest = new ArrayList<>();
        int dirs = 0;
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(e);
            if (Files.isDirectory(p)) {
                String name = "d" + dirs++;
                PeerVm.copyTree(p, share.resolve(name));
                guest.add("/share/" + name);
            } else if (Files.isRegularFile(p) && p.getFileName().toString().endsWith(".jar")) {
                Path to = jars.resolve(p.getFileName().toString());
                if (Files.exists(to)) {
                    to = jars.resolve(dirs++ + "-" + p.getFileName());
                }
                Files.copy(p, to);
            }
        }
        guest.add("/share/cp/*");
        String cp = String.join(":", guest);
        Files.writeString(share.resolve("cp.txt"), cp + "\n", StandardCharsets.UTF_8);
        return cp;
    }
}

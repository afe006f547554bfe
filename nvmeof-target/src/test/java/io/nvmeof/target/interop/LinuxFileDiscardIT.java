package io.nvmeof.target.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.testkit.peervm.RunningVm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Linux kernel host (peer VM) discards blocks of a file-backed namespace of the Java target: {@code blkdiscard}
 * (Dataset Management deallocate) and {@code fallocate --punch-hole} on the device (Write Zeroes with DEAC) punch
 * holes in the backing file, which shrinks on disk ({@code stat}'s block count, as {@code du}); {@code blkdiscard -z}
 * (Write Zeroes without DEAC: the kernel's BLKZEROOUT asks for no unmapping) writes zeroes and keeps the blocks. The
 * host reads zeroes back there and its data elsewhere. Linux 6.1 sends no DEAC at all (its punch writes zeroes), 6.12
 * does: {@code -Ddiscard.guest=linux-6.12}. Guest side: {@code interop/linux-file-discard.sh}.
 *
 * <p>Run with {@code mvn -B -o -pl nvmeof-target -am verify -Dit.test=LinuxFileDiscardIT -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false}. One VM boot.
 */
@Tag("vm")
@Timeout(value = 25, unit = java.util.concurrent.TimeUnit.MINUTES)
class LinuxFileDiscardIT {
    static final String NQN = "nqn.2026-01.io.nvmeof:file-discard";
    static final Duration STEP_MAX = Duration.ofMinutes(4);
    static final long MIB = 1L << 20;

    @Test
    void kernelHostDiscardsShrinkTheBackingFile() throws Exception {
        String guestName = System.getProperty("discard.guest", PeerVm.DEFAULT_GUEST);
        // Linux 6.1 never sets DEAC in Write Zeroes (its fallocate --punch-hole writes zeroes); 6.12 does, as
        // DLFEAT allows (measured: both guests run this test).
        long deallocatedMib = guestName.equals("linux-6.1") ? 32 : 40;
        PeerVm vm = PeerVm.locate().guest(guestName);
        vm.ensureImage(Duration.ofMinutes(10));
        Path work = Files.createTempDirectory("linux-file-discard-it");
        Path file = work.resolve("ns1.img");
        Path job = work.resolve("job");
        SubsystemConfig sc = new SubsystemConfig(
                NQN, true, List.of(), List.of(NamespaceConfig.of(1, 64 * MIB).withFile(file)), null, null);
        try (NvmeTarget target = NvmeTarget.start(new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)), List.of(sc), 1L << 30, 0))) {
            int port = target.boundAddresses().get(0).getPort();
            assertEquals(0, diskBytes(file) / MIB, "a new namespace file is sparse");
            Path script = PeerVm.copyResource(LinuxFileDiscardIT.class, "/interop/linux-file-discard.sh", work);
            List<String> args = List.of("10.0.2.2", Integer.toString(port), NQN);
            System.out.println("peer VM: " + vm.dir() + " run.sh --no-fwd " + script + " " + args);
            try (RunningVm guest = vm.start(script, args, List.of("--no-fwd"), Duration.ofMinutes(20), job)) {
                guest.await("^WRITTEN$", STEP_MAX);
                long written = diskBytes(file);
                target.addNamespace(NQN, NamespaceConfig.of(2, MIB)); // tells the guest to go on
                guest.await("^DISCARDED$", STEP_MAX);
                long discarded = diskBytes(file);
                guest.await("^ALL PASS$", STEP_MAX);
                int rc = guest.stop(Duration.ofMinutes(2));
                System.out.println("===== guest output (rc " + rc + ")\n" + guest.output());
                assertEquals(0, rc, "guest script exit status");
                System.out.printf(
                        "LinuxFileDiscardIT (%s): file on disk %d KiB after 48 MiB written, %d KiB after the discards%n",
                        guestName, written >> 10, discarded >> 10);
                assertTrue(written >= 48 * MIB, "48 MiB written take their blocks: " + written);
                long expected = written - deallocatedMib * MIB;
                assertTrue(
                        Math.abs(discarded - expected) <= MIB,
                        deallocatedMib + " MiB deallocated were punched: " + discarded + " bytes on disk, expected "
                                + expected);
            } catch (IllegalStateException e) {
                fail("the kernel host failed: " + e.getMessage());
            }
        } finally {
            if (!Boolean.getBoolean("peervm.keep")) {
                PeerVm.deleteRecursively(work);
            }
        }
    }

    /** The bytes {@code file} occupies on its device (stat(1): the JDK has no st_blocks). */
    static long diskBytes(Path file) throws Exception {
        Process stat = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).start();
        String[] out = new String(stat.getInputStream().readAllBytes()).trim().split(" ");
        assertEquals(0, stat.waitFor());
        return Long.parseLong(out[0]) * Long.parseLong(out[1]);
    }
}

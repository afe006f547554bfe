package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NVM I/O on a file-backed namespace over the in-JVM transport: Flush and FUA writes make the data durable (the
 * kernel's own account: the file's dirty pages in /proc/self/smaps drop to zero once msync wrote them back), Identify
 * Namespace and Dataset Management say what a file can do, and the data is there after the target restarts.
 */
class FileNamespaceIoTest {
    private static final int BS = 4096;
    private static final long SIZE = 64L << 20;
    private static final int FUA = 1 << 30;

    @TempDir
    Path dir;

    private NvmeTarget target;
    private InJvmHost host;

    @AfterEach
    void tearDown() {
        if (host != null) {
            host.close();
        }
        if (target != null) {
            target.close();
        }
    }

    private void start(Path file) {
        SubsystemConfig s = new SubsystemConfig(
                TestTargets.NQN,
                true,
                List.of(),
                List.of(NamespaceConfig.of(1, SIZE).withFile(file), NamespaceConfig.of(2, 1L << 20)),
                null,
                null);
        target = NvmeTarget.create(new TargetConfig(List.of(), List.of(s), 1L << 30, 0));
        host = new InJvmHost(target);
        host.bringUp(TestTargets.NQN, 1);
    }

    private void stop() {
        host.close();
        target.close();
        host = null;
        target = null;
    }

    private static byte[] random(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Dirty bytes of the mappings of {@code file} in this process, as the kernel counts them. */
    private static long dirtyBytes(Path file) throws IOException {
        long kib = 0;
        boolean ours = false;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                ours = line.endsWith(" " + file);
            } else if (ours && (line.startsWith("Shared_Dirty:") || line.startsWith("Private_Dirty:"))) {
                kib += Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return kib * 1024;
    }

    @Test
    void flushAndFuaWritesReachTheFile() throws Exception {
        Path file = dir.toRealPath().resolve("ns.img"); // smaps names the real path
        start(file);
        check(host.io(InJvmHost.write(1, 0, random(4 * BS, 1), BS)));
        long afterPlain = dirtyBytes(file);
        // The kernel's background writeback could clean them meanwhile (never in 30 s unless memory is short): then
        // this check proves nothing, and is skipped rather than failed.
        Assumptions.assumeTrue(afterPlain >= 4 * BS, "a plain write leaves dirty pages: " + afterPlain);
        check(host.io(InJvmHost.flush(1)));
        assertEquals(0, dirtyBytes(file), "Flush wrote everything back");

        check(host.io(InJvmHost.write(1, 0, random(4 * BS, 2), BS)));
        long before = dirtyBytes(file);
        FakeRequest fua = InJvmHost.write(1, 1000, random(2 * BS, 3), BS);
        fua.sqe().cdw(12, fua.sqe().cdw12() | FUA);
        check(host.io(fua));
        // Not more dirty than before: FUA wrote its own blocks back (writeback may have cleaned others meanwhile).
        assertTrue(dirtyBytes(file) <= before, "FUA wrote its own blocks back");

        FakeRequest zeroes = InJvmHost.writeZeroes(1, 2000, 8, false);
        zeroes.sqe().cdw(12, zeroes.sqe().cdw12() | FUA);
        check(host.io(zeroes));
        assertTrue(dirtyBytes(file) <= before, "Write Zeroes with FUA too");

        check(host.io(InJvmHost.flush(0xFFFFFFFF))); // every namespace: the file one is forced
        assertEquals(0, dirtyBytes(file));
        check(host.io(InJvmHost.flush(2))); // RAM: nothing to do
    }

    @Test
    void identifyAndDeallocateSayWhatAFileDoesAndDataSurvivesARestart() throws Exception {
        // Built with the native helper (gcc at build time), deallocate punches holes in the file; without it, it is
        // advisory (the data stays) and Identify Namespace does not claim deallocated blocks read as zeroes.
        boolean holes = getClass().getClassLoader().getResource("native/linux-x86_64/libnvmeoffile.so") != null;
        Path file = dir.resolve("ns.img");
        start(file);
        byte[] data = random(64 * BS, 4);
        check(host.io(InJvmHost.write(1, 30, data, BS)));
        check(host.io(InJvmHost.deallocate(1, 30, 8)));
        byte[] expected = data.clone();
        if (holes) {
            java.util.Arrays.fill(expected, 0, 8 * BS, (byte) 0);
        }
        assertArrayEquals(
                expected, check(host.io(InJvmHost.read(1, 30, 64, BS))).received());
        // DLFEAT: deallocated blocks read zero (001b) with holes, not reported (000b) without; Write Zeroes DEAC (bit
        // 3)
        assertEquals(
                holes ? 0x09 : 0x08, check(host.admin(InJvmHost.identify(0, 1))).received()[33]);
        assertEquals(0x09, check(host.admin(InJvmHost.identify(0, 2))).received()[33], "RAM: reads zero");
        // Write Zeroes with DEAC zeroes the file's blocks (punched with the helper), with FUA too
        check(host.io(InJvmHost.writeZeroes(1, 40, 4, true)));
        FakeRequest fua = InJvmHost.writeZeroes(1, 50, 2, true);
        fua.sqe().cdw(12, fua.sqe().cdw12() | FUA);
        check(host.io(fua));
        stop();

        start(file);
        java.util.Arrays.fill(expected, 10 * BS, 14 * BS, (byte) 0);
        java.util.Arrays.fill(expected, 20 * BS, 22 * BS, (byte) 0);
        assertArrayEquals(
                expected, check(host.io(InJvmHost.read(1, 30, 64, BS))).received());
        assertEquals(0, target.memoryUsedBytes(), "file pages are not counted in the memory budget");
    }
}

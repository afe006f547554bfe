package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Persistence of a file-backed namespace across a crash: a real daemon process ({@link EmbeddedTarget}) with {@code
 * --namespace size=64M,file=F} takes writes from our initiator over NVMe/TCP or NVMe/RDMA (32 in flight, no Flush, no FUA), is
 * killed with SIGKILL ({@code Process.destroyForcibly}) as soon as the last write is acknowledged, starts again on the
 * same file, and every acknowledged write reads back (and unwritten blocks read as zeroes). Then more writes, a clean
 * stop (SIGTERM), a third start, and everything is verified again.
 */
class FileNamespaceCrashTest {
    private static final long SIZE = 64L << 20;
    private static final int BS = 4096;
    private static final int NSID = 2; // 1 is the embedded target's RAM namespace

    @TempDir
    Path dir;

    /** Block contents by LBA: the generation that wrote it last (a block's bytes follow from LBA and generation). */
    private final Map<Long, Integer> written = new HashMap<>();

    private static void fill(ByteBuffer b, int offset, long lba, int generation) {
        Random r = new Random(lba * 1_000_003L + generation);
        for (int i = 0; i < BS; i += 8) {
            b.putLong(offset + i, r.nextLong());
        }
    }

    private EmbeddedTarget start(String transport, Path file) throws Exception {
        return EmbeddedTarget.start(
                transport, 16L << 20, List.of("--namespace", "size=" + SIZE + ",bs=" + BS + ",file=" + file));
    }

    /**
     * Writes 1..16-block runs in random 16-block slots, 32 in flight, and waits for every acknowledgement. Writes in
     * flight together never overlap (NVMe does not order them), so what each block holds is known.
     */
    private void writeSome(Namespace ns, int generation, int commands) throws Exception {
        Random r = new Random(generation);
        List<CompletableFuture<Void>> inFlight = new ArrayList<>();
        java.util.Set<Integer> busySlots = new java.util.HashSet<>();
        int slots = (int) (SIZE / BS / 16);
        for (int i = 0; i < commands; i++) {
            int slot = r.nextInt(slots);
            if (inFlight.size() == 32 || busySlots.contains(slot)) {
                for (CompletableFuture<Void> f : inFlight) {
                    f.get(30, TimeUnit.SECONDS);
                }
                inFlight.clear();
                busySlots.clear();
            }
            int n = 1 + r.nextInt(16);
            long lba = (long) slot * 16 + r.nextInt(17 - n);
            ByteBuffer buf = ns.allocateBuffer(n);
            for (int k = 0; k < n; k++) {
                fill(buf, k * BS, lba + k, generation);
            }
            inFlight.add(ns.writeAsync(lba, n, buf));
            busySlots.add(slot);
            for (int k = 0; k < n; k++) {
                written.put(lba + k, generation);
            }
        }
        for (CompletableFuture<Void> f : inFlight) {
            f.get(30, TimeUnit.SECONDS);
        }
    }

    /** Reads the whole namespace in 128 KiB pieces and checks every block against what was acknowledged. */
    private void verifyAll(Namespace ns) throws Exception {
        int per = 32;
        ByteBuffer buf = ns.allocateBuffer(per);
        ByteBuffer expected = ByteBuffer.allocate(BS).order(buf.order()); // as fill() wrote it
        long blocks = SIZE / BS;
        for (long lba = 0; lba < blocks; lba += per) {
            ns.read(lba, per, buf);
            for (int k = 0; k < per; k++) {
                Integer gen = written.get(lba + k);
                if (gen == null) {
                    for (int i = 0; i < BS; i += 8) {
                        if (buf.getLong(k * BS + i) != 0) {
                            throw new AssertionError("never-written block " + (lba + k) + " is not zero");
                        }
                    }
                } else {
                    fill(expected, 0, lba + k, gen);
                    assertEquals(
                            expected.rewind(),
                            buf.duplicate().position(k * BS).limit((k + 1) * BS),
                            "block " + (lba + k) + " (generation " + gen + ")");
                }
            }
        }
    }

    /** Over NVMe/TCP, and over NVMe/RDMA (software RNIC here: namespace chunks are registered memory regions). */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void acknowledgedWritesSurviveKillNineAndACleanStop(String transport) throws Exception {
        Path file = dir.resolve("ns2.img");
        EmbeddedTarget t = start(transport, file);
        try (Controller c = Nvme.connect(t.uri())) {
            writeSome(c.namespace(NSID), 1, 3000);
            writeSome(c.namespace(NSID), 2, 1000); // overwrites some
            ProcessHandle.of(t.pid()).orElseThrow().destroyForcibly(); // SIGKILL, at once after the last ack
            assertTrue(ProcessHandle.of(t.pid())
                    .map(p -> p.onExit().thenApply(x -> true))
                    .orElseThrow()
                    .get(30, TimeUnit.SECONDS));
        } finally {
            t.close();
        }
        assertFalse(t.isAlive());
        assertEquals(SIZE, Files.size(file));

        t = start(transport, file);
        try (Controller c = Nvme.connect(t.uri())) {
            Namespace ns = c.namespace(NSID);
            assertEquals(SIZE, ns.sizeBytes());
            verifyAll(ns);
            writeSome(ns, 3, 1000);
        } finally {
            t.close(); // SIGTERM: a clean stop
        }

        t = start(transport, file);
        try (Controller c = Nvme.connect(t.uri())) {
            verifyAll(c.namespace(NSID));
        } finally {
            t.close();
        }
    }
}

package io.nvmeof.target.e2e;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.e2e.RawTcpHost.Completion;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A namespace removed while several hosts' queues hammer it over real NVMe/TCP (Netty's paranoid leak detection on):
 * every command completes, either normally or, once the namespace is gone, with Invalid Namespace or Format and DNR
 * (what nvmet answers for an NSID it no longer has); no queue is dropped, nothing is logged as an error or a leak, and
 * the namespace's memory goes back to the budget once the last read in flight released it.
 */
class TcpNamespaceRemovalTest {
    private static final int NSID = 7;
    private static final int BS = 4096;
    private static final int THREADS = 4;

    @TempDir
    Path dir;

    private E2eTarget t;

    @BeforeEach
    void start() throws Exception {
        t = new E2eTarget();
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ram", "file"})
    void ioInFlightToARemovedNamespaceCompletesWithInvalidNamespace(String kind) throws Exception {
        long before = t.target.memoryUsedBytes();
        // A file namespace spans 16 one-GiB mapping regions, so some are first mapped while the removal closes it.
        long size = kind.equals("file") ? 16L << 30 : 64L << 20;
        NamespaceConfig nc = NamespaceConfig.of(NSID, size);
        if (kind.equals("file")) {
            nc = nc.withFile(dir.resolve("ns.img"));
        }
        t.target.addNamespace(E2eTarget.NQN, nc);

        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        AtomicBoolean removed = new AtomicBoolean();
        List<Future<int[]>> results = new ArrayList<>();
        try (RawTcpHost admin = t.admin(false)) {
            for (int q = 1; q <= THREADS; q++) {
                RawTcpHost io = t.io(admin, q, false);
                int seed = q;
                results.add(pool.submit(() -> hammer(io, seed, size / BS, removed)));
            }
            Thread.sleep(300); // let every queue get going (not a speed assumption: the counts are checked below)
            removed.set(true); // from here on a queue may see the namespace gone
            assertTrue(t.target.removeNamespace(E2eTarget.NQN, NSID));
            int ok = 0;
            int refused = 0;
            for (Future<int[]> f : results) {
                int[] counts = f.get(60, TimeUnit.SECONDS);
                ok += counts[0];
                refused += counts[1];
            }
            assertTrue(ok > 0, "I/O ran before the removal");
            assertTrue(refused >= THREADS, "every queue saw the namespace go: " + refused);
        } finally {
            pool.shutdownNow();
        }
        // the memory of the removed namespace goes back to the budget (RAM) once transports released their reads
        E2eTarget.await(
                () -> t.target.memoryUsedBytes() == before,
                10_000,
                () -> "memory in use " + t.target.memoryUsedBytes() + ", before " + before);
        System.gc(); // paranoid leak detection reports a leaked buffer when the GC finds it
        try (RawTcpHost admin = t.admin(false);
                RawTcpHost io = t.io(admin, 1, false)) {
            RawTcpHost.expectOk(io.write(1, 0, BS, new byte[64 * 1024]), "the subsystem still serves");
        }
        System.gc();
        Thread.sleep(100);
        t.assertNoErrorsLogged();
    }

    /**
     * Writes (in-capsule and through R2T) and reads on one queue until the namespace is gone and refusals were seen,
     * checking each completion. Returns {successes, refusals}; the queue must stay usable throughout.
     */
    private static int[] hammer(RawTcpHost io, int seed, long blocks, AtomicBoolean removed) throws Exception {
        try (io) {
            Random rnd = new Random(seed);
            int ok = 0;
            int refused = 0;
            while (!(removed.get() && refused >= 3)) {
                long slba = (long) (rnd.nextDouble() * (blocks - 32));
                int n = rnd.nextBoolean() ? 1 : 32; // 4 KiB in the capsule, 128 KiB through R2T
                Completion c = rnd.nextBoolean()
                        ? io.write(NSID, slba, BS, new byte[n * BS])
                        : io.read(NSID, slba, BS, new byte[n * BS]);
                if (c.ok()) {
                    ok++;
                } else {
                    assertTrue(
                            Status.is(c.status(), Status.INVALID_NAMESPACE) && Status.isDnr(c.status()), c.toString());
                    assertTrue(removed.get(), "refused before the removal: " + c);
                    refused++;
                }
            }
            RawTcpHost.expectOk(io.read(1, 0, BS, new byte[BS]), "the queue still works");
            return new int[] {ok, refused};
        }
    }
}

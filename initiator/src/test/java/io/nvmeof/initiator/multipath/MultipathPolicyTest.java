package io.nvmeof.initiator.multipath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.initiator.BlockNamespace;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeTransportException;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The three path selection policies over two listeners of our target, the refusal of paths to different
 * namespaces, commands waiting for a usable path (and failing after the no-path timeout), and paths from the
 * discovery log.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MultipathPolicyTest {
    static final String NQN = MultipathFailoverTest.NQN;
    NvmeTarget target;
    String uri;

    @BeforeEach
    void start() throws Exception {
        target = NvmeTarget.start(MultipathFailoverTest.config(AnaState.OPTIMIZED));
        uri = "nvme+tcp://127.0.0.1:" + target.boundAddresses().get(0).getPort() + ",127.0.0.1:"
                + target.boundAddresses().get(1).getPort() + "/" + NQN + "?queues=1&depth=16&timeout=5s";
    }

    @AfterEach
    void stop() {
        target.close();
    }

    @Test
    void numaUsesTheFirstOptimizedPath() throws Exception {
        try (MultipathNamespace ns = MultipathNamespace.connect(uri)) {
            assertEquals(IoPolicy.NUMA, ns.policy());
            long[] d = writes(ns, 400);
            assertEquals(400, d[0], "numa: all on path 1");
            assertEquals(0, d[1]);
            // Path 1 non-optimized: the optimized path 2 takes everything.
            target.setAnaState(NQN, 1, 1, AnaState.NON_OPTIMIZED);
            MultipathFailoverTest.await(
                    "path 1 non-optimized", () -> ns.paths().get(0).anaState() == AnaState.NON_OPTIMIZED);
            d = writes(ns, 400);
            assertEquals(0, d[0]);
            assertEquals(400, d[1]);
        }
    }

    @Test
    void roundRobinAlternatesOverOptimizedPaths() throws Exception {
        try (MultipathNamespace ns = MultipathNamespace.connect(uri + "&iopolicy=round-robin")) {
            assertEquals(IoPolicy.ROUND_ROBIN, ns.policy());
            long[] d = writes(ns, 400);
            assertEquals(200, d[0], "one after the other: " + d[0] + "/" + d[1]);
            assertEquals(200, d[1]);
            // Only path 2 optimized: round-robin keeps to it and does not use the non-optimized path.
            target.setAnaState(NQN, 1, 1, AnaState.NON_OPTIMIZED);
            MultipathFailoverTest.await(
                    "path 1 non-optimized", () -> ns.paths().get(0).anaState() == AnaState.NON_OPTIMIZED);
            d = writes(ns, 400);
            assertEquals(0, d[0]);
            assertEquals(400, d[1]);
            // Neither optimized: the non-optimized paths, in turn.
            target.setAnaState(NQN, 2, 1, AnaState.NON_OPTIMIZED);
            MultipathFailoverTest.await(
                    "path 2 non-optimized", () -> ns.paths().get(1).anaState() == AnaState.NON_OPTIMIZED);
            d = writes(ns, 400);
            assertEquals(400, d[0] + d[1]);
            assertTrue(d[0] >= 150 && d[1] >= 150, "both non-optimized paths in turn: " + d[0] + "/" + d[1]);
        }
    }

    @Test
    void queueDepthSpreadsByCommandsInFlight() throws Exception {
        try (MultipathNamespace ns = MultipathNamespace.connect(uri + "&iopolicy=queue-depth")) {
            assertEquals(IoPolicy.QUEUE_DEPTH, ns.policy());
            // One at a time: the first path always has 0 in flight, so it takes them all (as Linux's early exit).
            long[] d = writes(ns, 200);
            assertEquals(200, d[0]);
            // 16 in flight at once: the second path gets its share.
            long a = ns.paths().get(0).commands();
            long b = ns.paths().get(1).commands();
            ByteBuffer buf = ByteBuffer.allocateDirect(4096);
            for (int round = 0; round < 50; round++) {
                CompletableFuture<?>[] fs = new CompletableFuture<?>[16];
                for (int i = 0; i < fs.length; i++) {
                    fs[i] = ns.writeAsync(i, 1, buf);
                }
                CompletableFuture.allOf(fs).get(10, TimeUnit.SECONDS);
            }
            long da = ns.paths().get(0).commands() - a;
            long db = ns.paths().get(1).commands() - b;
            assertEquals(800, da + db);
            assertTrue(da > 100 && db > 100, "both paths used under load: " + da + "/" + db);
            // A non-optimized path is not used while an optimized one is usable, however deep its queue.
            target.setAnaState(NQN, 2, 1, AnaState.NON_OPTIMIZED);
            MultipathFailoverTest.await(
                    "path 2 non-optimized", () -> ns.paths().get(1).anaState() == AnaState.NON_OPTIMIZED);
            b = ns.paths().get(1).commands();
            for (int round = 0; round < 20; round++) {
                CompletableFuture<?>[] fs = new CompletableFuture<?>[16];
                for (int i = 0; i < fs.length; i++) {
                    fs[i] = ns.writeAsync(i, 1, buf);
                }
                CompletableFuture.allOf(fs).get(10, TimeUnit.SECONDS);
            }
            assertEquals(b, ns.paths().get(1).commands());
        }
    }

    @Test
    void commandsWaitForAUsablePathThenGo() throws Exception {
        try (MultipathNamespace ns = MultipathNamespace.connect(
                NvmeUri.parse(uri), MultipathOptions.defaults().withNoPathTimeout(Duration.ofSeconds(20)))) {
            target.setAnaState(NQN, 1, 1, AnaState.INACCESSIBLE);
            target.setAnaState(NQN, 2, 1, AnaState.INACCESSIBLE);
            MultipathFailoverTest.await(
                    "no path usable",
                    () -> !ns.paths().get(0).usable() && !ns.paths().get(1).usable());
            ByteBuffer buf = ByteBuffer.allocateDirect(4096);
            buf.putLong(0, 0x1234_5678L);
            CompletableFuture<Void> f = ns.writeAsync(7, 1, buf);
            Thread.sleep(300);
            assertTrue(!f.isDone(), "the write waits while no path is usable");
            target.setAnaState(NQN, 2, 1, AnaState.OPTIMIZED);
            f.get(10, TimeUnit.SECONDS);
            ByteBuffer back = ByteBuffer.allocateDirect(4096);
            ns.read(7, 1, back);
            assertEquals(0x1234_5678L, back.getLong(0));
        }
    }

    @Test
    void commandsFailAfterTheNoPathTimeout() throws Exception {
        try (MultipathNamespace ns = MultipathNamespace.connect(
                NvmeUri.parse(uri), MultipathOptions.defaults().withNoPathTimeout(Duration.ofMillis(400)))) {
            target.setAnaState(NQN, 1, 1, AnaState.PERSISTENT_LOSS);
            target.setAnaState(NQN, 2, 1, AnaState.INACCESSIBLE);
            MultipathFailoverTest.await(
                    "no path usable",
                    () -> !ns.paths().get(0).usable() && !ns.paths().get(1).usable());
            long t0 = System.nanoTime();
            ExecutionException e = assertThrows(
                    ExecutionException.class,
                    () -> ns.readAsync(0, 1, ByteBuffer.allocateDirect(4096)).get(10, TimeUnit.SECONDS));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertInstanceOf(NvmeTransportException.class, e.getCause());
            assertTrue(
                    e.getCause().getMessage().contains("no usable path"),
                    e.getCause().getMessage());
            assertTrue(ms >= 350 && ms < 5000, "failed after the no-path timeout: " + ms + " ms");
            // The allocation-free form reports it through the callback, once.
            CountDownLatch done = new CountDownLatch(1);
            AtomicReference<NvmeException> err = new AtomicReference<>();
            ns.read(
                    0,
                    1,
                    ByteBuffer.allocateDirect(4096),
                    new IoCallback() {
                        @Override
                        public void completed(Object attachment) {
                            done.countDown();
                        }

                        @Override
                        public void failed(NvmeException error, Object attachment) {
                            err.set(error);
                            done.countDown();
                        }
                    },
                    null);
            assertTrue(done.await(10, TimeUnit.SECONDS));
            assertInstanceOf(NvmeTransportException.class, err.get());
        }
    }

    @Test
    void pathsToDifferentNamespacesAreRefused() throws Exception {
        // A second target with the same NQN but another namespace (its own UUID, so its own NGUID).
        SubsystemConfig other = new SubsystemConfig(
                NQN,
                true,
                List.of(),
                List.of(new NamespaceConfig(1, MultipathFailoverTest.NS_BYTES, 4096, UUID.randomUUID(), false)),
                null,
                null,
                List.of());
        try (NvmeTarget t2 = NvmeTarget.start(new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)), List.of(other), 1L << 30, 0))) {
            String mixed =
                    "nvme+tcp://127.0.0.1:" + target.boundAddresses().get(0).getPort() + ",127.0.0.1:"
                            + t2.boundAddresses().get(0).getPort() + "/" + NQN + "?queues=1";
            NvmeException e = assertThrows(NvmeException.class, () -> MultipathNamespace.connect(mixed));
            assertTrue(e.getMessage().contains("not the same namespace"), e.getMessage());
        }
    }

    @Test
    void pathsFromTheDiscoveryLog() throws Exception {
        NvmeUri disc = NvmeUri.parse(
                "nvme+tcp://127.0.0.1:" + target.boundAddresses().get(0).getPort() + "?queues=1&timeout=5s");
        try (MultipathNamespace ns = MultipathNamespace.fromDiscovery(disc, NQN, MultipathOptions.defaults())) {
            assertEquals(2, ns.paths().size(), "one path per listener in the log: " + ns.paths());
            assertTrue(ns.paths().stream().allMatch(PathStatus::usable));
            BlockNamespace b = ns;
            ByteBuffer buf = ByteBuffer.allocateDirect(4096);
            b.write(3, 1, buf);
            b.read(3, 1, buf);
            assertEquals(ns.blockDevice().size(), MultipathFailoverTest.NS_BYTES);
        }
    }

    @Test
    void errorStatusesAreRetriedFiveTimesUnlessDnr() throws Exception {
        // A target whose memory budget (1 MiB, eight 128 KiB chunks) runs out: Capacity Exceeded has no DNR.
        TargetConfig small = MultipathFailoverTest.config(AnaState.OPTIMIZED);
        small = new TargetConfig(small.listeners(), small.subsystems(), 1L << 20, 0);
        try (NvmeTarget t = NvmeTarget.start(small);
                MultipathNamespace ns = MultipathNamespace.connect("nvme+tcp://127.0.0.1:"
                        + t.boundAddresses().get(0).getPort() + ",127.0.0.1:"
                        + t.boundAddresses().get(1).getPort()
                        + "/" + NQN + "?queues=1&depth=16&timeout=5s")) {
            ByteBuffer buf = ByteBuffer.allocateDirect(4096);
            NvmeException full = null;
            long sentBefore = 0;
            for (int chunk = 0; chunk < 64 && full == null; chunk++) {
                sentBefore = ns.paths().get(0).commands() + ns.paths().get(1).commands();
                try {
                    ns.write(chunk * 32L, 1, buf); // one block in each 128 KiB chunk
                } catch (NvmeException e) {
                    full = e;
                }
            }
            assertInstanceOf(io.nvmeof.initiator.NvmeStatusException.class, full, "the budget ran out");
            assertTrue(full.getMessage().contains("Capacity Exceeded"), full.getMessage());
            long sent = ns.paths().get(0).commands() + ns.paths().get(1).commands() - sentBefore;
            assertEquals(6, sent, "sent once and retried 5 times (Linux's nvme_max_retries)");
            assertEquals(0, ns.failovers(), "not a path error");
            // LBA Out of Range comes with DNR: sent once.
            long before = ns.paths().get(0).commands() + ns.paths().get(1).commands();
            NvmeException e = assertThrows(NvmeException.class, () -> ns.read(ns.blockCount(), 1, buf));
            assertTrue(e.getMessage().contains("LBA Out of Range"), e.getMessage());
            assertEquals(1, ns.paths().get(0).commands() + ns.paths().get(1).commands() - before);
        }
    }

    @Test
    void singleControllerConnectRefusesAMultipathUri() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Nvme.connect(uri));
        assertTrue(e.getMessage().contains("MultipathNamespace"), e.getMessage());
    }

    /** Sends {@code n} single-block writes one after the other; the commands each path got. */
    static long[] writes(MultipathNamespace ns, int n) throws NvmeException {
        long a = ns.paths().get(0).commands();
        long b = ns.paths().get(1).commands();
        ByteBuffer buf = ByteBuffer.allocateDirect(ns.blockSize());
        for (int i = 0; i < n; i++) {
            ns.write(i, 1, buf);
        }
        return new long[] {ns.paths().get(0).commands() - a, ns.paths().get(1).commands() - b};
    }
}

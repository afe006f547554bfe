package io.nvmeof.initiator.multipath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.target.Controller;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.AnaStateConfig;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.testsupport.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A multipath namespace over two listeners of one subsystem of our target (path 1 direct to listener 1, path 2
 * through a {@link TcpProxy} to listener 2), a verified workload of 6 threads with small and large I/O running all the
 * time, while the test flips ANA states, cuts path 2, closes listener 1 and opens it again. After each change it
 * checks where the I/O goes (our per-path counts, and the target's per-listener counts while no path reconnected)
 * and at the end that every acknowledged write reads back.
 */
class MultipathFailoverTest {
    static final String NQN = "nqn.2026-01.io.nvmeof:mpath";
    static final int BS = 4096;
    static final long NS_BYTES = 64L << 20;
    static final Duration PHASE = Duration.ofMillis(700);

    static TargetConfig config(AnaState port2) {
        SubsystemConfig s = new SubsystemConfig(
                NQN,
                true,
                List.of(),
                List.of(new NamespaceConfig(1, NS_BYTES, BS, null, false)),
                null,
                null,
                port2 == AnaState.OPTIMIZED ? List.of() : List.of(new AnaStateConfig(2, 1, port2)));
        return new TargetConfig(
                List.of(
                        new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384),
                        new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)),
                List.of(s),
                1L << 30,
                0);
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void ioFollowsAnaStatesAndSurvivesLostPaths() throws Exception {
        try (NvmeTarget target = NvmeTarget.start(config(AnaState.NON_OPTIMIZED));
                TcpProxy proxy = TcpProxy.start(target.boundAddresses().get(1))) {
            int port1 = target.boundAddresses().get(0).getPort();
            NvmeUri uri = NvmeUri.parse("nvme+tcp://127.0.0.1:" + port1 + ",127.0.0.1:" + proxy.port() + "/" + NQN
                    + "?queues=2&depth=32&timeout=5s&kato=2s");
            MultipathOptions opts = MultipathOptions.defaults().withReconnectDelay(Duration.ofMillis(300));
            List<String> timings = new ArrayList<>();
            try (MultipathNamespace ns = MultipathNamespace.connect(uri, opts)) {
                assertEquals(IoPolicy.NUMA, ns.policy());
                assertEquals(AnaState.OPTIMIZED, ns.paths().get(0).anaState());
                assertEquals(AnaState.NON_OPTIMIZED, ns.paths().get(1).anaState());
                VerifiedWorkload w = new VerifiedWorkload(ns, 6, 1024);
                w.start();

                // A: path 1 optimized, path 2 non-optimized: everything on path 1.
                long[] d = phase(ns, target);
                assertTrue(d[0] > 0 && d[1] == 0, "A: I/O on the optimized path 1 only: " + str(d));
                assertTrue(d[2] > 0 && d[3] == 0, "A: the target agrees: " + str(d));

                // B: path 1 inaccessible, path 2 optimized: everything moves to path 2.
                target.setAnaState(NQN, 1, 1, AnaState.INACCESSIBLE);
                target.setAnaState(NQN, 2, 1, AnaState.OPTIMIZED);
                await(
                        "path 1 inaccessible, path 2 optimized",
                        () -> ana(ns, 0) == AnaState.INACCESSIBLE && ana(ns, 1) == AnaState.OPTIMIZED);
                d = phase(ns, target);
                assertTrue(d[0] == 0 && d[1] > 0, "B: I/O on path 2 only: " + str(d));
                assertTrue(d[2] == 0 && d[3] > 0, "B: the target agrees: " + str(d));

                // B': cut path 2 too: no usable path until path 2 reconnects; I/O waits, then goes on.
                long before = w.completed();
                long cut = System.nanoTime();
                proxy.cutConnections();
                await("path 2 lost", () -> !ns.paths().get(1).connected());
                await("path 2 back", () -> ns.paths().get(1).usable());
                await("I/O again", () -> w.completed() > before + 50);
                timings.add(String.format(
                        "no usable path -> I/O again on the reconnected path: %.0f ms (reconnect " + "delay 300 ms)",
                        (System.nanoTime() - cut) / 1e6));
                assertEquals(1, ns.paths().get(1).reconnects());

                // C: back to path 1 optimized, path 2 non-optimized: I/O fails back to path 1.
                target.setAnaState(NQN, 1, 1, AnaState.OPTIMIZED);
                target.setAnaState(NQN, 2, 1, AnaState.NON_OPTIMIZED);
                await(
                        "path 1 optimized again",
                        () -> ana(ns, 0) == AnaState.OPTIMIZED && ana(ns, 1) == AnaState.NON_OPTIMIZED);
                d = phase(ns, target);
                assertTrue(d[0] > 0 && d[1] == 0, "C: I/O back on path 1: " + str(d));

                // D: path 1 changing: I/O on the non-optimized path 2 meanwhile.
                target.setAnaState(NQN, 1, 1, AnaState.CHANGE);
                await("path 1 in change", () -> ana(ns, 0) == AnaState.CHANGE);
                d = phase(ns, target);
                assertTrue(d[0] == 0 && d[1] > 0, "D: I/O on the non-optimized path 2: " + str(d));
                target.setAnaState(NQN, 1, 1, AnaState.OPTIMIZED);
                await("path 1 optimized again", () -> ana(ns, 0) == AnaState.OPTIMIZED);

                // E: close listener 1 under I/O: failover to path 2, measured.
                long p2 = ns.paths().get(1).commands();
                long t0 = System.nanoTime();
                assertTrue(target.removeListener(1));
                long failover = awaitNanos(() -> ns.paths().get(1).commands() > p2 + 20, t0);
                timings.add(String.format("listener 1 closed -> I/O flowing on path 2: %.1f ms", failover / 1e6));
                d = phase(ns, target);
                assertTrue(d[0] == 0 && d[1] > 0, "E: I/O on path 2 while listener 1 is closed: " + str(d));
                // Listener 1 back on the same port (a new PORTID, optimized): path 1 reconnects and I/O fails back.
                target.addListener(new ListenerConfig("tcp", "127.0.0.1", port1, 128, 16384));
                long t1 = System.nanoTime();
                long p1 = ns.paths().get(0).commands();
                long failback = awaitNanos(() -> ns.paths().get(0).commands() > p1 + 20, t1);
                timings.add(String.format(
                        "listener 1 open again -> I/O flowing on path 1: %.1f ms (reconnect delay 300 ms)",
                        failback / 1e6));
                d = phase(ns, target);
                assertTrue(d[0] > 0 && d[1] == 0, "E: I/O back on path 1: " + str(d));

                List<String> errors = w.stopAndVerify();
                assertEquals(List.of(), errors, "every acknowledged write reads back, no command failed");
                assertTrue(w.writes.get() > 100 && w.reads.get() > 50, "the workload ran: " + w.writes + "/" + w.reads);
                assertTrue(ns.failovers() > 0, "commands were failed over");
                timings.add("failovers: " + ns.failovers() + ", writes " + w.writes + ", reads " + w.reads);
            }
            timings.forEach(t -> System.out.println("MultipathFailoverTest: " + t));
        }
    }

    static AnaState ana(MultipathNamespace ns, int path) {
        return ns.paths().get(path).anaState();
    }

    /**
     * Runs one phase: waits 500 ms for commands sent before it to finish (generous for a loaded CI machine), then counts for {@link #PHASE}: [our
     * commands on path 1, on path 2, the target's commands on listener PORTID 1, on PORTID 2].
     */
    static long[] phase(MultipathNamespace ns, NvmeTarget target) throws InterruptedException {
        Thread.sleep(500);
        long a0 = ns.paths().get(0).commands();
        long b0 = ns.paths().get(1).commands();
        long[] t0 = perPort(target);
        Thread.sleep(PHASE.toMillis());
        long[] t1 = perPort(target);
        return new long[] {
            ns.paths().get(0).commands() - a0, ns.paths().get(1).commands() - b0, t1[0] - t0[0], t1[1] - t0[1]
        };
    }

    static long[] perPort(NvmeTarget target) {
        long[] n = new long[2];
        for (Controller c : target.subsystem(NQN).controllers()) {
            int id = c.port().portId();
            if (id == 1 || id == 2) {
                n[id - 1] += c.ioCommands();
            }
        }
        return n;
    }

    static String str(long[] d) {
        return "ours " + d[0] + "/" + d[1] + ", target " + d[2] + "/" + d[3];
    }

    static void await(String what, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within 20 s: " + what);
            }
            Thread.sleep(2);
        }
    }

    static long awaitNanos(BooleanSupplier cond, long since) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("no I/O on the other path within 20 s");
            }
            Thread.onSpinWait();
        }
        return System.nanoTime() - since;
    }

    static InetSocketAddress addr(NvmeTarget t, int i) {
        return t.boundAddresses().get(i);
    }
}

package io.nvmeof.initiator;

import static io.nvmeof.initiator.Await.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.stats.SubsystemStats;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.testsupport.TcpProxy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Reconnect with the Linux host's semantics, through a fault proxy between initiator and target: a dropped
 * connection, a blackholed one (keep-alive expiry), a path slower than the command timeout, and reconnects refused
 * for a while, each under a verified multi-threaded workload of small and large I/O (every acknowledged write reads
 * back, no call fails, none hangs, the listener sees LIVE → RECONNECTING → LIVE); then ctrl_loss_tmo and
 * fast_io_fail_tmo with their typed exceptions.
 */
class ReconnectTest {
    @RegisterExtension
    NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").blockSize(4096).build(); // one per test

    private final StateEventLog events = new StateEventLog();

    private Controller connect(TcpProxy proxy, String options) throws NvmeException {
        String uri = "nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn() + "?" + options;
        return Nvme.connect(
                NvmeUri.parse(uri),
                ConnectOptions.builder()
                        .connectTimeout(Duration.ofSeconds(2))
                        .stateListener(events)
                        .build());
    }

    /** Runs the workload around {@code fault}, waits for the reconnect, then checks everything. */
    private void survives(Controller c, Runnable fault, Runnable heal) throws Exception {
        VerifiedWorkload w = new VerifiedWorkload(c.namespace(), 4, 1024).start();
        waitFor("I/O flowing", 10_000, () -> w.ops() > 50);
        fault.run();
        waitFor("RECONNECTING", 15_000, () -> c.state() == ControllerState.RECONNECTING || events.reconnects() > 0);
        heal.run();
        waitFor("LIVE again", 20_000, () -> events.reconnects() > 0);
        long opsAfter = w.ops();
        waitFor("I/O flowing again", 10_000, () -> w.ops() > opsAfter + 50);
        assertTrue(w.stop(30_000), "a workload call hung");
        assertEquals(List.of(), w.failures(), "every command was retried");
        assertEquals(List.of(), w.verifyAll(), "every acknowledged write reads back");
        assertTrue(c.reconnectCount() >= 1);
        List<ControllerState> s = events.states();
        assertEquals(ControllerState.CONNECTING, s.get(0), s.toString());
        assertEquals(ControllerState.LIVE, s.get(1), s.toString());
        assertEquals(ControllerState.RECONNECTING, s.get(2), s.toString());
        assertEquals(ControllerState.LIVE, s.get(s.size() - 1), s.toString());
        assertSame(ControllerState.LIVE, c.state());
    }

    @Test
    void connectionDroppedMidIo() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=2&depth=32&reconnect_delay=100ms&ctrl_loss_tmo=30")) {
            survives(c, proxy::cutConnections, () -> {});
            assertTrue(events.get(2).reason().contains("closed"), events.get(2).reason());
            assertInstanceOf(NvmeTransportException.class, events.get(2).cause());
        }
    }

    @Test
    void blackholeExpiresTheKeepAliveAndTheTargetReapsTheOldController() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c =
                        connect(proxy, "queues=2&keep_alive_tmo=1&timeout=3s&reconnect_delay=100ms&ctrl_loss_tmo=30")) {
            int oldCntlid = c.cntlid();
            long[] reaped = new long[2];
            survives(
                    c,
                    () -> {
                        proxy.blackholeConnections();
                        reaped[0] = System.nanoTime();
                        // Watch the target: the old controller is reaped by its keep-alive timer (KATO 1 s).
                        Thread watch = new Thread(() -> {
                            while (stats().keepAliveExpiries() == 0
                                    && System.nanoTime() - reaped[0] < TimeUnit.SECONDS.toNanos(20)) {
                                try {
                                    Thread.sleep(5);
                                } catch (InterruptedException e) {
                                    return;
                                }
                            }
                            reaped[1] = System.nanoTime();
                        });
                        watch.setDaemon(true);
                        watch.start();
                    },
                    () -> {});
            // The host reconnected while its old controller still existed on the target (the partition hid the close):
            // a new controller, a new CNTLID; the old one is reaped by its keep-alive timer (nvmet does the same).
            assertTrue(c.cntlid() != oldCntlid, "new CNTLID " + c.cntlid());
            waitFor("the target reaps the old controller", 10_000, () -> stats().keepAliveExpiries() >= 1);
            waitFor("one controller left", 10_000, () -> stats().controllers() == 1);
            long ms = TimeUnit.NANOSECONDS.toMillis(reaped[1] - reaped[0]);
            System.out.println("blackhole: the target reaped the old controller " + ms + " ms after the partition");
            // KATO from the last Keep Alive it saw (at most KATO/2 before the partition), plus scheduling slack.
            assertTrue(ms < 1000 + 3000, "reaped " + ms + " ms after the partition, KATO 1 s");
        }
    }

    private SubsystemStats stats() {
        return target.target().stats().subsystems().stream()
                .filter(s -> s.subsystem().equals(target.nqn()))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void pathSlowerThanTheCommandTimeout() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c =
                        connect(proxy, "queues=2&timeout=1s&keep_alive_tmo=5&reconnect_delay=200ms&ctrl_loss_tmo=30")) {
            survives(c, () -> proxy.delay(Duration.ofMillis(1500)), () -> proxy.delay(Duration.ZERO));
        }
    }

    @Test
    void reconnectsRefusedForAWhile() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=2&reconnect_delay=200ms&ctrl_loss_tmo=30")) {
            survives(
                    c,
                    () -> {
                        proxy.refuseConnections(true);
                        proxy.cutConnections();
                    },
                    () -> {
                        try {
                            waitFor("refused attempts", 10_000, () -> proxy.refusedConnections() >= 3);
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                        proxy.refuseConnections(false);
                    });
            assertTrue(proxy.refusedConnections() >= 3);
        }
    }

    @Test
    void ctrlLossTmoFailsEveryCommandPromptlyWithTheTypedException() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=2&reconnect_delay=300ms&ctrl_loss_tmo=2")) {
            VerifiedWorkload w = new VerifiedWorkload(c.namespace(), 4, 1024).start();
            waitFor("I/O flowing", 10_000, () -> w.ops() > 50);
            proxy.refuseConnections(true);
            long lost = System.nanoTime();
            proxy.cutConnections();
            waitFor("FAILED", 10_000, () -> c.state() == ControllerState.FAILED);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lost);
            assertTrue(ms >= 1500 && ms < 4000, "lost after " + ms + " ms");
            assertTrue(w.stop(3_000), "a call hung after ctrl_loss_tmo");
            assertTrue(w.maxCallMillis() < 5_000, "longest call " + w.maxCallMillis() + " ms");
            for (Throwable t : w.failures()) {
                assertInstanceOf(NvmeControllerLostException.class, t, t.toString());
            }
            assertTrue(!w.failures().isEmpty(), "the calls waiting for the reconnect failed");
            long before = System.nanoTime();
            NvmeControllerLostException later = assertThrows(
                    NvmeControllerLostException.class,
                    () -> c.namespace().write(0, 1, ByteBuffer.allocateDirect(4096)));
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before) < 500, "at once");
            assertTrue(later.getMessage().contains("ctrl_loss_tmo"), later.getMessage());
            assertInstanceOf(NvmeControllerLostException.class, c.failure());
            assertEquals(ControllerState.FAILED, events.last().state());
            assertTrue(events.states().contains(ControllerState.RECONNECTING));
        }
    }

    @Test
    void fastIoFailTmoFailsWaitingIoButReconnectGoesOn() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=1&reconnect_delay=200ms&ctrl_loss_tmo=30&fast_io_fail_tmo=1")) {
            Namespace ns = c.namespace();
            ns.write(0, 1, ByteBuffer.allocateDirect(4096));
            proxy.refuseConnections(true);
            proxy.cutConnections();
            waitFor("RECONNECTING", 5_000, () -> c.state() == ControllerState.RECONNECTING);
            long start = System.nanoTime();
            CompletableFuture<Void> parked = ns.writeAsync(1, 1, ByteBuffer.allocateDirect(4096));
            Throwable t = failureOf(parked);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertInstanceOf(NvmeFastIoFailException.class, t, t.toString());
            assertTrue(ms < 3000, "failed after " + ms + " ms");
            assertThrows(NvmeFastIoFailException.class, () -> ns.read(0, 1, ByteBuffer.allocateDirect(4096)));
            proxy.refuseConnections(false);
            waitFor("LIVE again", 10_000, () -> c.state() == ControllerState.LIVE);
            ns.write(2, 1, ByteBuffer.allocateDirect(4096)); // works again
        }
    }

    @Test
    void aNamespaceThatCameBackAsAnotherFailsItsWaitingIoAndIsReplaced() throws Exception {
        // The same subsystem NQN at the same address, but namespace 1 now has 512-byte blocks: not the same namespace.
        NvmeofTargetExtension other =
                NvmeofTargetExtension.builder().namespace("16M", 512).build();
        other.start();
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=1&reconnect_delay=200ms&ctrl_loss_tmo=30")) {
            Namespace before = c.namespace(1);
            List<NamespaceChangeEvent> changes = new CopyOnWriteArrayList<>();
            c.onNamespaceChange(changes::add);
            proxy.refuseConnections(true);
            proxy.cutConnections();
            waitFor("RECONNECTING", 5_000, () -> c.state() == ControllerState.RECONNECTING);
            CompletableFuture<Void> parked = before.writeAsync(0, 1, ByteBuffer.allocateDirect(4096));
            proxy.retarget(other.address());
            proxy.refuseConnections(false);
            Throwable t = failureOf(parked);
            assertInstanceOf(NvmeControllerLostException.class, t, t.toString());
            assertTrue(t.getMessage().contains("another namespace"), t.getMessage());
            waitFor("LIVE again", 10_000, () -> c.state() == ControllerState.LIVE);
            assertTrue(!before.isActive(), "the old Namespace object is deactivated");
            Namespace now = c.namespace(1);
            assertTrue(now != before);
            assertEquals(512, now.blockSize());
            now.write(0, 8, ByteBuffer.allocateDirect(4096)); // the new one works
            waitFor("the listener heard", 5_000, () -> !changes.isEmpty());
            assertEquals(List.of(1), changes.get(0).changed());
        } finally {
            other.stop();
        }
    }

    @Test
    void anAdminCommandWaitsForTheReconnect() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=1&reconnect_delay=200ms&ctrl_loss_tmo=30")) {
            proxy.refuseConnections(true);
            proxy.cutConnections();
            waitFor("RECONNECTING", 5_000, () -> c.state() == ControllerState.RECONNECTING);
            CompletableFuture<ByteBuffer> smart = CompletableFuture.supplyAsync(() -> {
                try {
                    return c.getLogPage(0x02, 0, 0, 512); // SMART / Health Information
                } catch (NvmeException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            Thread.sleep(500);
            assertTrue(!smart.isDone(), "waits while the controller reconnects");
            proxy.refuseConnections(false);
            assertEquals(512, smart.get(10, TimeUnit.SECONDS).capacity());
        }
    }

    @Test
    void closeWhileReconnectingFailsWaitingCommandsAndTellsDeleted() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address())) {
            Controller c = connect(proxy, "queues=1&reconnect_delay=200ms&ctrl_loss_tmo=-1");
            Namespace ns = c.namespace();
            proxy.refuseConnections(true);
            proxy.cutConnections();
            waitFor("RECONNECTING", 5_000, () -> c.state() == ControllerState.RECONNECTING);
            CompletableFuture<Void> parked = ns.readAsync(0, 1, ByteBuffer.allocateDirect(4096));
            Thread.sleep(300);
            assertTrue(!parked.isDone(), "waits for the reconnect");
            c.close();
            assertInstanceOf(NvmeTransportException.class, failureOf(parked));
            waitFor("DELETED told", 5_000, () -> events.states().contains(ControllerState.DELETED));
            assertSame(ControllerState.DELETED, c.state());
        }
    }

    static Throwable failureOf(CompletableFuture<?> f) throws Exception {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("the command should have failed");
    }
}

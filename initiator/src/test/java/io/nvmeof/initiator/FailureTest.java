package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.testsupport.LoopTransport;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.testsupport.TcpProxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Timeouts, dead connections and a target that goes away with reconnecting off ({@code ctrl_loss_tmo=0}, the
 * pre-reconnect behaviour): every command completes, none hangs. With reconnecting on, see {@link ReconnectTest}.
 */
class FailureTest {
    @RegisterExtension
    NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("16M").build(); // one per test

    static Throwable failureOf(CompletableFuture<?> f) throws Exception {
        try {
            f.get(10, TimeUnit.SECONDS); // the bound: never a hang
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("the command should have failed");
    }

    @Test
    void stalledTargetTimesOutTheCommandAndFailsTheController() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address())) {
            String uri = "nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn()
                    + "?timeout=700ms&queues=1&ctrl_loss_tmo=0";
            try (Controller c = Nvme.connect(uri)) {
                Namespace ns = c.namespace();
                ns.write(0, 1, ByteBuffer.allocateDirect(4096));
                proxy.pause();
                long start = System.nanoTime();
                CompletableFuture<Void> first = ns.readAsync(0, 1, ByteBuffer.allocateDirect(4096));
                CompletableFuture<Void> second = ns.writeAsync(1, 1, ByteBuffer.allocateDirect(4096));
                Throwable e1 = failureOf(first);
                Throwable e2 = failureOf(second);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                // one of them times out, the controller then fails and the other fails with the transport error
                assertTrue(e1 instanceof NvmeTimeoutException || e2 instanceof NvmeTimeoutException, e1 + " / " + e2);
                assertTrue(e1 instanceof NvmeException && e2 instanceof NvmeException);
                assertTrue(ms >= 700 && ms < 5000, "timed out after " + ms + " ms: never before the timeout");
                assertTrue(
                        e1.getMessage().contains("within 700 ms")
                                || e2.getMessage().contains("within 700 ms"),
                        e1.getMessage());
                assertFalse(c.isOpen());
                assertInstanceOf(NvmeTimeoutException.class, c.failure());
                // later commands fail at once
                NvmeTransportException later = assertThrows(
                        NvmeTransportException.class, () -> ns.read(0, 1, ByteBuffer.allocateDirect(4096)));
                assertTrue(later.getMessage().contains("controller failed"), later.getMessage());
                proxy.resume();
            }
        }
    }

    @Test
    void timedOutSlotIsNotReusedUntilTheControllerAnswers() throws Exception {
        // The loop transport can hold commands without closing anything: the slot stays taken while held.
        NvmeofTargetExtension loop = NvmeofTargetExtension.builder()
                .transport("loop")
                .namespace("1M")
                .build();
        loop.start();
        try (Controller c = Nvme.connect(loop.uri("timeout=300ms&queues=1&depth=4&ctrl_loss_tmo=0"))) {
            Namespace ns = c.namespace();
            CommandQueue q = c.ioQueues()[0];
            LoopTransport.pause(loop.port());
            CompletableFuture<Void> f = ns.readAsync(0, 1, ByteBuffer.allocateDirect(4096));
            assertInstanceOf(NvmeTimeoutException.class, failureOf(f));
            // The controller fails and closes its queues; only then is the slot given back.
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (q.freeSlots() != 4 && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            assertEquals(4, q.freeSlots());
            assertFalse(c.isOpen());
        } finally {
            LoopTransport.resume(loop.port());
            loop.stop();
        }
    }

    @Test
    void connectionCutMidIoFailsEveryOutstandingCommand() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address())) {
            String uri =
                    "nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn() + "?queues=2&depth=32&ctrl_loss_tmo=0";
            try (Controller c = Nvme.connect(uri)) {
                Namespace ns = c.namespace();
                proxy.pause(); // let commands pile up in flight, then kill the link
                List<CompletableFuture<Void>> fs = new ArrayList<>();
                for (int i = 0; i < 15; i++) { // 30 commands: under the 32 slots of this thread's queue
                    fs.add(ns.writeAsync(i, 4, ByteBuffer.allocateDirect(4 * 4096)));
                    fs.add(ns.readAsync(100 + i, 1, ByteBuffer.allocateDirect(4096)));
                }
                proxy.cutConnections();
                for (CompletableFuture<Void> f : fs) {
                    Throwable t = failureOf(f);
                    assertInstanceOf(NvmeTransportException.class, t);
                }
                // The commands fail as the connection closes; the controller fails when its close is reported.
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (c.isOpen() && System.nanoTime() < end) {
                    Thread.sleep(5);
                }
                assertFalse(c.isOpen());
                assertInstanceOf(NvmeTransportException.class, c.failure());
            }
        }
    }

    @Test
    void targetClosingMidIoFailsEveryOutstandingCommand() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=2&depth=64&ctrl_loss_tmo=0"))) {
            Namespace ns = c.namespace();
            List<CompletableFuture<Void>> fs = new ArrayList<>();
            Thread writer = new Thread(() -> {
                for (int i = 0; i < 2000 && c.isOpen(); i++) {
                    fs.add(ns.writeAsync(i % 1000, 1, ByteBuffer.allocateDirect(4096)));
                }
            });
            synchronized (fs) {
                writer.start();
                Thread.sleep(20);
                target.stop();
            }
            writer.join(10_000);
            int failed = 0;
            for (CompletableFuture<Void> f : new ArrayList<>(fs)) {
                try {
                    f.get(10, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    assertInstanceOf(NvmeException.class, e.getCause());
                    failed++;
                }
            }
            assertTrue(failed > 0 || !fs.isEmpty());
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (c.isOpen() && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            assertFalse(c.isOpen(), "the controller notices the target is gone");
        }
    }

    @Test
    void connectionRefusedIsATransportException() {
        NvmeTransportException e = assertThrows(
                NvmeTransportException.class, () -> Nvme.connect("nvme+tcp://127.0.0.1:1/" + target.nqn()));
        assertTrue(e.getMessage().contains("cannot connect the admin queue"), e.getMessage());
    }

    @Test
    void rdmaConnectionRefusedIsATransportException() throws Exception {
        // The rdma transport is on the class path (the software RNIC where no RDMA device exists): a port where no
        // rdma listener runs is a clear transport error, not a hang.
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        int free = port;
        NvmeTransportException e = assertThrows(
                NvmeTransportException.class, () -> Nvme.connect("nvme+rdma://127.0.0.1:" + free + "/" + target.nqn()));
        assertTrue(
                e.getMessage().contains("cannot connect the admin queue to rdma://127.0.0.1:" + free), e.getMessage());
    }

    @Test
    void closingFailsOutstandingCommandsAndLaterOnes() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address())) {
            Controller c =
                    Nvme.connect("nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn() + "?queues=1&timeout=1s");
            Namespace ns = c.namespace();
            proxy.pause();
            CompletableFuture<Void> f = ns.readAsync(0, 1, ByteBuffer.allocateDirect(4096));
            Thread closer = new Thread(c::close); // the shutdown handshake waits on the paused proxy, then gives up
            closer.start();
            Throwable t = failureOf(f);
            assertInstanceOf(NvmeTransportException.class, t);
            assertTrue(t.getMessage().contains("closed"), t.getMessage());
            proxy.resume();
            closer.join(15_000);
            assertFalse(closer.isAlive());
            assertThrows(NvmeTransportException.class, () -> ns.read(0, 1, ByteBuffer.allocateDirect(4096)));
        }
    }
}

package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The host side over real loopback sockets against this module's own target side with a RAM-backed test core. */
@Timeout(60)
class HostLoopbackTest {
    private static final int MIB = 1 << 20;
    /** 64 MiB of shared "namespace": 128 CIDs × 4 threads get disjoint 128 KiB ranges, the big tests the rest. */
    private final ByteBuffer ram = ByteBuffer.allocateDirect(64 * MIB).order(ByteOrder.LITTLE_ENDIAN);

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private TargetListener listen(boolean digestsAllowed) throws IOException {
        ListenerOptions options =
                new ListenerOptions(new InetSocketAddress("127.0.0.1", 0), 1, 1024, 16384, 2, digestsAllowed);
        TargetListener l = new TcpTransport().listen(options, channel -> new RamCore(channel, ram));
        closeables.add(l);
        return l;
    }

    private static HostQueueOptions options(
            InetSocketAddress address, int qid, int queueSize, boolean hd, boolean dd, Duration timeout) {
        return new HostQueueOptions(address, qid, queueSize, qid == 0 ? 0 : 1, hd, dd, timeout);
    }

    /** connect + the fabrics Connect command (its 1024 bytes always in-capsule, nvmeof-protocol.md §5.10). */
    private HostQueue open(TargetListener l, boolean nativeIo, int queueSize, boolean hd, boolean dd, int cattr)
            throws Exception {
        HostQueue q = new TcpTransport(nativeIo)
                .connect(options(l.localAddress(), 1, queueSize, hd, dd, Duration.ofSeconds(5)));
        closeables.add(q);
        TestCommand connect = new TestCommand(0x7F, 0).data(ByteBuffer.wrap(Bytes.pattern(1024, 1)), 0, 1024);
        connect.sqe.fctype(0x01).connect(0, 1, queueSize - 1, cattr, 0);
        q.submit(connect);
        await(connect);
        assertEquals(0, connect.status, "Connect");
        assertEquals(1, connect.dw0, "CNTLID");
        return q;
    }

    private static void await(TestCommand c) throws InterruptedException {
        assertTrue(c.done.await(20, TimeUnit.SECONDS), "no outcome for CID " + c.sqe.cid());
        if (c.error != null) {
            throw new AssertionError("CID " + c.sqe.cid() + " failed", c.error);
        }
    }

    private static TestCommand write(int cid, long slba, ByteBuffer buf, int offset, int length) {
        TestCommand c = new TestCommand(0x01, cid).data(buf, offset, length);
        c.sqe.slba(slba).nlb(length / RamCore.BLOCK - 1);
        return c;
    }

    private static TestCommand read(int cid, long slba, ByteBuffer buf, int offset, int length) {
        TestCommand c = new TestCommand(0x02, cid).data(buf, offset, length);
        c.sqe.slba(slba).nlb(length / RamCore.BLOCK - 1);
        return c;
    }

    @Test
    void foundByServiceLoaderWithAHostSide() {
        assertInstanceOf(TcpTransport.class, Transport.find("tcp"));
    }

    @ParameterizedTest(name = "hd={0} dd={1} epoll={2} cattr={3}")
    @CsvSource({"false,false,true,0", "true,true,true,0", "true,false,false,0", "false,true,false,4", "true,true,true,4"
    })
    void writesAndReadsFrom4KiBTo1MiBVerifiedByteForByte(boolean hd, boolean dd, boolean nativeIo, int cattr)
            throws Exception {
        TargetListener l = listen(true);
        HostQueue q = open(l, nativeIo, 32, hd, dd, cattr);
        q.maxInCapsuleData(16384 - 64 * 0); // IOCCSZ-style limit: 4k/8k/16k writes go in-capsule, larger via R2T
        int[] sizes = {4096, 8192, 16384, 65536, 131072 + 4096, MIB};
        long slba = 0;
        int seed = 0;
        for (int size : sizes) {
            for (boolean direct : new boolean[] {true, false}) {
                byte[] data = Bytes.pattern(size, ++seed);
                ByteBuffer src = direct ? ByteBuffer.allocateDirect(size + 16) : ByteBuffer.allocate(size + 16);
                src.put(16, data);
                TestCommand w = write(1, slba, src, 16, size);
                q.submit(w);
                await(w);
                assertEquals(0, w.status, "write " + size);
                ByteBuffer dst = direct ? ByteBuffer.allocate(size + 8) : ByteBuffer.allocateDirect(size + 8);
                TestCommand r = read(2, slba, dst, 8, size);
                q.submit(r);
                await(r);
                assertEquals(0, r.status, "read " + size);
                byte[] back = new byte[size];
                dst.get(8, back);
                assertArrayEquals(data, back, "read back " + size + " bytes (direct=" + direct + ")");
                slba += size / RamCore.BLOCK;
            }
        }
        assertTrue(q.isOpen());
    }

    @Test
    void manyCommandsInFlightFromSeveralThreads() throws Exception {
        TargetListener l = listen(true);
        HostQueue q = open(l, true, 128, true, true, 0);
        q.maxInCapsuleData(4096);
        int threads = 4;
        int perThread = 32;
        int size = 8192;
        int rounds = 20;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t * perThread;
            Thread w = new Thread(() -> {
                try {
                    TestCommand[] cmds = new TestCommand[perThread];
                    ByteBuffer[] bufs = new ByteBuffer[perThread];
                    for (int round = 0; round < rounds; round++) {
                        for (int i = 0; i < perThread; i++) {
                            int cid = first + i;
                            bufs[i] = ByteBuffer.allocateDirect(size);
                            bufs[i].put(0, Bytes.pattern(size, cid * 131 + round));
                            cmds[i] = write(cid, (long) cid * (size / RamCore.BLOCK), bufs[i], 0, size);
                            q.submit(cmds[i]);
                        }
                        for (TestCommand c : cmds) {
                            await(c);
                            assertEquals(0, c.status);
                        }
                        for (int i = 0; i < perThread; i++) {
                            int cid = first + i;
                            bufs[i] = ByteBuffer.allocate(size);
                            cmds[i] = read(cid, (long) cid * (size / RamCore.BLOCK), bufs[i], 0, size);
                            q.submit(cmds[i]);
                        }
                        for (int i = 0; i < perThread; i++) {
                            await(cmds[i]);
                            assertArrayEquals(Bytes.pattern(size, (first + i) * 131 + round), bufs[i].array());
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            workers.add(w);
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertTrue(q.isOpen());
    }

    @Test
    void theControllerClosingMidIoFailsEveryOutstandingCommand() throws Exception {
        TargetListener l = listen(true);
        HostQueue q = open(l, true, 64, false, false, 0);
        CopyOnWriteArrayList<Throwable> closes = new CopyOnWriteArrayList<>();
        CountDownLatch closed = new CountDownLatch(1);
        q.onClose(cause -> {
            closes.add(cause);
            closed.countDown();
        });
        List<TestCommand> held = new ArrayList<>();
        for (int cid = 1; cid <= 40; cid++) {
            TestCommand c = new TestCommand(RamCore.HOLD_OPCODE, cid);
            held.add(c);
            q.submit(c);
        }
        TestCommand bigWrite = write(41, 0, ByteBuffer.allocateDirect(4 * MIB), 0, 4 * MIB);
        q.submit(bigWrite);
        Thread.sleep(100); // let them reach the controller
        l.close();
        assertTrue(closed.await(10, TimeUnit.SECONDS), "onClose");
        held.add(bigWrite);
        for (TestCommand c : held) {
            assertTrue(c.done.await(1, TimeUnit.SECONDS), "CID " + c.sqe.cid() + " hangs");
        }
        Thread.sleep(50);
        for (TestCommand c : held) {
            assertEquals(1, c.outcomes(), "CID " + c.sqe.cid() + " told exactly once");
        }
        for (int i = 0; i < 40; i++) {
            assertEquals(1, held.get(i).errors.get(), "held commands cannot have succeeded");
            assertInstanceOf(IOException.class, held.get(i).error);
        }
        assertEquals(1, closes.size());
        assertNotNull(closes.get(0), "not an orderly close");
        assertFalse(q.isOpen());
        assertThrows(IllegalStateException.class, () -> q.submit(new TestCommand(0x18, 1)));
    }

    @Test
    void closeFromTheHostFailsOutstandingCommandsAndReturnsAfterTheCallbacks() throws Exception {
        TargetListener l = listen(true);
        HostQueue q = open(l, false, 16, true, false, 0);
        AtomicInteger listener = new AtomicInteger();
        q.onClose(cause -> listener.addAndGet(cause == null ? 1 : 100));
        TestCommand held = new TestCommand(RamCore.HOLD_OPCODE, 3);
        q.submit(held);
        Thread.sleep(50);
        q.close();
        assertEquals(1, held.errors.get(), "told before close() returned");
        assertEquals(1, listener.get(), "null cause, once");
        q.close();
        assertEquals(1, listener.get());
    }

    @Test
    void digestsTheControllerRefusesFailTheConnect() throws Exception {
        TargetListener l = listen(false);
        IOException e = assertThrows(
                IOException.class,
                () -> new TcpTransport().connect(options(l.localAddress(), 0, 32, true, false, Duration.ofSeconds(5))));
        assertEquals(
                "controller at 127.0.0.1:" + l.localAddress().getPort() + " refused header digests", e.getMessage());
    }

    @Test
    void connectionRefused() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        for (boolean nativeIo : new boolean[] {true, false}) {
            IOException e = assertThrows(
                    IOException.class,
                    () -> new TcpTransport(nativeIo)
                            .connect(options(
                                    new InetSocketAddress("127.0.0.1", port),
                                    0,
                                    32,
                                    false,
                                    false,
                                    Duration.ofSeconds(5))));
            assertEquals("cannot connect to controller at 127.0.0.1:" + port + ": connection refused", e.getMessage());
        }
    }

    @Test
    void aControllerThatNeverSendsICRespTimesOut() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress())) {
            List<Socket> accepted = new CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    accepted.add(s.accept()); // and say nothing
                } catch (IOException ignored) {
                    // closed by the test
                }
            });
            acceptor.start();
            long start = System.nanoTime();
            IOException e = assertThrows(
                    IOException.class,
                    () -> new TcpTransport()
                            .connect(options(
                                    new InetSocketAddress("127.0.0.1", s.getLocalPort()),
                                    0,
                                    32,
                                    false,
                                    false,
                                    Duration.ofMillis(300))));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(
                    "controller at 127.0.0.1:" + s.getLocalPort() + " sent no ICResp within 300 ms", e.getMessage());
            assertTrue(ms >= 250 && ms < 3000, "took " + ms + " ms");
            acceptor.join(2000);
            for (Socket a : accepted) {
                assertEquals(-1, readAfterIcReq(a), "the host closed its side");
                a.close();
            }
        }
    }

    private static int readAfterIcReq(Socket a) throws IOException {
        a.setSoTimeout(5000);
        a.getInputStream().readNBytes(128);
        return a.getInputStream().read();
    }

    @Test
    void connectFromAnEventLoopIsRefused() throws Exception {
        TargetListener l = listen(true);
        HostQueue q = open(l, true, 16, false, false, 0);
        AtomicReference<Throwable> seen = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        q.execute(() -> {
            try {
                new TcpTransport().connect(options(l.localAddress(), 0, 32, false, false, Duration.ofSeconds(1)));
            } catch (Throwable t) {
                seen.set(t);
            }
            done.countDown();
        });
        assertTrue(done.await(5, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, seen.get());
        assertTrue(q.isOpen());
    }

    /**
     * Queues whose close callbacks close the other queues (as a controller failing from one queue's close closes all
     * of its queues), on different event loops of the host group, all closed at once by the target: every callback
     * returns promptly. Closing from one loop used to wait for the other loop, which was waiting for the first: both
     * stalled 10 s.
     */
    @Test
    void queuesClosingEachOtherFromTheirLoopsDoNotWaitForEachOther() throws Exception {
        TargetListener l = listen(false);
        List<HostQueue> qs = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 4; i++) {
            qs.add(open(l, true, 8, false, false, 0));
        }
        CountDownLatch done = new CountDownLatch(qs.size());
        for (HostQueue q : qs) {
            q.onClose(cause -> {
                for (HostQueue other : qs) {
                    if (other != q) {
                        other.close();
                    }
                }
                done.countDown();
            });
        }
        long t0 = System.nanoTime();
        l.close();
        assertTrue(done.await(20, TimeUnit.SECONDS), "every close callback returned");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 5000, "the callbacks did not wait for each other's loops: " + ms + " ms");
    }
}

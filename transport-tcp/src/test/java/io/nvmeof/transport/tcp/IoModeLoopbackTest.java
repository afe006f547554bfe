package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.uring.IoUring;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.TargetListener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every engine (epoll, io_uring, NIO), sleeping and busy-polling, on both sides over loopback with verified data. The
 * io_uring cases are skipped, with the cause, only where {@code IoUring.isAvailable()} is false.
 */
@Timeout(60)
class IoModeLoopbackTest {
    private static final int MIB = 1 << 20;
    private final ByteBuffer ram = ByteBuffer.allocateDirect(16 * MIB).order(ByteOrder.LITTLE_ENDIAN);
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    static void assumeEngine(String engine) {
        if (engine.equals("io_uring")) {
            assumeTrue(IoUring.isAvailable(), () -> "io_uring unavailable: " + IoUring.unavailabilityCause());
        }
    }

    private TargetListener listen(IoMode mode) throws IOException {
        ListenerOptions options =
                new ListenerOptions(new InetSocketAddress("127.0.0.1", 0), 1, 1024, 16384, 0, true, mode);
        TargetListener l = new TcpTransport().listen(options, channel -> new RamCore(channel, ram));
        closeables.add(l);
        return l;
    }

    private HostQueue open(TargetListener l, IoMode mode, boolean digests) throws Exception {
        HostQueue q = new TcpTransport()
                .connect(new HostQueueOptions(
                        l.localAddress(), 1, 64, 1, digests, digests, Duration.ofSeconds(5), mode));
        closeables.add(q);
        TestCommand connect = new TestCommand(0x7F, 0).data(ByteBuffer.wrap(Bytes.pattern(1024, 1)), 0, 1024);
        connect.sqe.fctype(0x01).connect(0, 1, 63, 4, 0);
        q.submit(connect);
        await(connect);
        assertEquals(0, connect.status, "Connect");
        q.maxInCapsuleData(16384);
        return q;
    }

    private static void await(TestCommand c) throws InterruptedException {
        assertTrue(c.done.await(20, TimeUnit.SECONDS), "no outcome for CID " + c.sqe.cid());
        if (c.error != null) {
            throw new AssertionError("CID " + c.sqe.cid() + " failed", c.error);
        }
    }

    private static TestCommand io(int opcode, int cid, long slba, ByteBuffer buf, int length) {
        TestCommand c = new TestCommand(opcode, cid).data(buf, 0, length);
        c.sqe.slba(slba).nlb(length / RamCore.BLOCK - 1);
        return c;
    }

    @ParameterizedTest(name = "{0} busy={1} digests={2}")
    @CsvSource({
        "epoll,false,false",
        "epoll,true,false",
        "epoll,true,true",
        "io_uring,false,false",
        "io_uring,true,false",
        "io_uring,false,true",
        "io_uring,true,true",
        "nio,true,false",
        "auto,true,true"
    })
    void writesAndReadsVerified(String engine, boolean busy, boolean digests) throws Exception {
        assumeEngine(engine);
        IoMode mode = new IoMode(engine, busy);
        TargetListener l = listen(mode);
        HostQueue q = open(l, mode, digests);
        long slba = 0;
        int seed = 7;
        for (int size : new int[] {4096, 16384, 65536, 131072, MIB}) {
            byte[] data = Bytes.pattern(size, ++seed);
            ByteBuffer src = ByteBuffer.allocateDirect(size);
            src.put(0, data);
            TestCommand w = io(0x01, 1, slba, src, size);
            q.submit(w);
            await(w);
            assertEquals(0, w.status, "write " + size);
            ByteBuffer dst = ByteBuffer.allocateDirect(size);
            TestCommand r = io(0x02, 2, slba, dst, size);
            q.submit(r);
            await(r);
            assertEquals(0, r.status, "read " + size);
            byte[] back = new byte[size];
            dst.get(0, back);
            assertArrayEquals(data, back, "read back " + size);
            slba += size / RamCore.BLOCK;
        }
        // 32 reads in flight, submitted from this (foreign) thread: the busy loop must pick up the drain task at once.
        TestCommand[] burst = new TestCommand[32];
        for (int i = 0; i < burst.length; i++) {
            burst[i] = io(0x02, i + 3, (long) i * 8, ByteBuffer.allocateDirect(4096), 4096);
            q.submit(burst[i]);
        }
        for (TestCommand c : burst) {
            await(c);
            assertEquals(0, c.status);
        }
        // Many round trips one at a time: a lost wake-up would show as a stall here.
        TestCommand r = io(0x02, 40, 0, ByteBuffer.allocateDirect(4096), 4096);
        long t0 = System.nanoTime();
        for (int i = 0; i < 500; i++) {
            r.reset();
            q.submit(r);
            await(r);
        }
        long perIoMicros = (System.nanoTime() - t0) / 500 / 1000;
        assertTrue(perIoMicros < 50_000, "500 sequential 4 KiB reads took " + perIoMicros + " µs each");
        assertTrue(q.isOpen());
        if (busy) {
            String prefix = "nvme-tcp-host-" + IoEngine.resolve(mode, true).id + "-busy";
            assertTrue(
                    Thread.getAllStackTraces().keySet().stream()
                            .anyMatch(t -> t.getName().startsWith(prefix)),
                    "a thread named " + prefix + "-*");
        }
    }

    @Test
    void busyListenerCloseStopsItsSpinningThreads() throws Exception {
        IoMode mode = new IoMode("epoll", true);
        TargetListener l = listen(mode);
        open(l, mode, false);
        String port = Integer.toString(l.localAddress().getPort());
        assertTrue(threadsNamed("nvme-tcp-io-any") > 0);
        l.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (threadsNamed("nvme-tcp-io-any") > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(0, threadsNamed("nvme-tcp-io-any"), "listener on port " + port + " left spinning threads");
    }

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(prefix) && t.isAlive())
                .count();
    }

    @Test
    void unknownEngineIsRefusedOnBothSides() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> new TcpTransport()
                        .listen(
                                new ListenerOptions(
                                        new InetSocketAddress("127.0.0.1", 0),
                                        1,
                                        128,
                                        16384,
                                        0,
                                        true,
                                        new IoMode("kqueue", false)),
                                ch -> new RamCore(ch, ram)));
        assertTrue(e.getMessage().contains("unknown I/O engine 'kqueue'"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class,
                () -> new TcpTransport()
                        .connect(new HostQueueOptions(
                                new InetSocketAddress("127.0.0.1", 1),
                                1,
                                32,
                                1,
                                false,
                                false,
                                Duration.ofSeconds(1),
                                new IoMode("kqueue", true))));
        assertTrue(e.getMessage().contains("unknown I/O engine 'kqueue'"), e.getMessage());
    }

    @Test
    void explicitEngineResolvesOrSaysWhyNot() throws IOException {
        assertEquals(IoEngine.NIO, IoEngine.resolve(new IoMode("nio", false), true));
        assertEquals(IoEngine.NIO, IoEngine.resolve(IoMode.DEFAULT, false));
        assertFalse(
                IoEngine.resolve(IoMode.DEFAULT, true) == IoEngine.NIO && io.netty.channel.epoll.Epoll.isAvailable());
        if (IoUring.isAvailable()) {
            assertEquals(IoEngine.IO_URING, IoEngine.resolve(new IoMode("io_uring", false), true));
        } else {
            IOException e =
                    assertThrows(IOException.class, () -> IoEngine.resolve(new IoMode("io_uring", false), true));
            assertTrue(e.getMessage().startsWith("io_uring unavailable: "), e.getMessage());
        }
    }
}

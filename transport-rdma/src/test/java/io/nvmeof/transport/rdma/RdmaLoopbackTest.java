package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.transport.rdma.soft.SoftRdmaProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Host queue against target listener, both of this module, in one JVM over the software RNIC (emulated), with a fake
 * core that serves one RAM namespace registered through the listener's memory observer.
 */
class RdmaLoopbackTest {
    private final RdmaTransport transport = new RdmaTransport(new SoftRdmaProvider());
    private final FakeCore core = new FakeCore();
    private RdmaTargetListener listener;
    private final List<RdmaHostQueue> queues = new ArrayList<>();

    @BeforeEach
    void listen() throws IOException {
        ListenerOptions o = new ListenerOptions(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, 128, 16384, 0, false);
        listener = (RdmaTargetListener) transport.listen(o, core);
        core.attach(listener.memoryObserver());
    }

    @AfterEach
    void close() {
        for (RdmaHostQueue q : queues) {
            q.close();
        }
        listener.close();
        core.detach();
    }

    private RdmaHostQueue connect(int qid, int size) throws IOException {
        RdmaHostQueue q = (RdmaHostQueue) transport.connect(new HostQueueOptions(
                listener.localAddress(), qid, size, qid == 0 ? 0 : 1, false, false, Duration.ofSeconds(5)));
        queues.add(q);
        return q;
    }

    /** Admin queue + Connect, then I/O queue 1 + Connect. */
    private RdmaHostQueue ioQueue(int size) throws Exception {
        RdmaHostQueue admin = connect(0, 32);
        TestCommand c = TestCommand.connect(0, 0, 31);
        admin.submit(c);
        assertEquals(0, c.status());
        assertTrue(
                core.connectDataSeen,
                "the admin Connect data was RDMA-Read by the target (keyed, nvmeof-protocol.md §7.4)");
        RdmaHostQueue io = connect(1, size);
        TestCommand ic = TestCommand.connect(0, 1, size - 1);
        io.submit(ic);
        assertEquals(0, ic.status());
        return io;
    }

    private static ByteBuffer random(int length, long seed, boolean direct) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        ByteBuffer buf = direct ? ByteBuffer.allocateDirect(length) : ByteBuffer.allocate(length);
        return buf.order(ByteOrder.LITTLE_ENDIAN).put(0, b);
    }

    private static byte[] bytes(ByteBuffer b, int length) {
        byte[] out = new byte[length];
        b.get(0, out);
        return out;
    }

    @Test
    void portInfoIsNvmetRdmaLike() {
        PortInfo p = listener.portInfo();
        assertEquals(PortInfo.TRTYPE_RDMA, p.transportType());
        assertEquals(0x00100005, p.sgls());
        assertEquals(8, p.mdts());
        assertEquals(4096, p.inCapsuleDataSize(), "16 KiB asked, 4 KiB given (IOCCSZ 260)");
        assertEquals(260, p.ioccsz());
        assertEquals(128, p.maxQueueSize());
        assertArrayEquals(new byte[] {1, 1, 1}, p.tsas());
        assertTrue(transport.isAvailable());
        assertEquals("rdma", io.nvmeof.core.spi.Transport.find("rdma").name(), "found through ServiceLoader");
    }

    @Test
    void readsAndWritesVerifiedWithZeroCopyOnTheTarget() throws Exception {
        RdmaHostQueue q = ioQueue(32);
        long copiedBefore = listener.copiedBytes();
        long placedBefore = listener.placedBytes();
        long total = 0;
        int cid = 0;
        for (int size = 4096; size <= 1 << 20; size <<= 1) {
            for (boolean registered : new boolean[] {false, true}) {
                long slba = (cid * 17L) % 512;
                ByteBuffer out = registered
                        ? q.allocateBuffer(size).put(0, random(size, size, false), 0, size)
                        : random(size, size + cid, size % 8192 == 0);
                TestCommand w = TestCommand.write(cid % 32, slba, out, size);
                q.submit(w);
                assertEquals(0, w.status(), "write " + size);
                ByteBuffer in = registered ? q.allocateBuffer(size) : ByteBuffer.allocate(size);
                TestCommand r = TestCommand.read((cid + 1) % 32, slba, in, size);
                q.submit(r);
                assertEquals(0, r.status(), "read " + size);
                assertArrayEquals(bytes(out, size), bytes(in, size), size + " bytes, registered=" + registered);
                byte[] inNs = new byte[size];
                core.ns.get((int) slba * FakeCore.BS, inNs);
                assertArrayEquals(bytes(out, size), inNs, "in the namespace memory");
                total += 2L * size;
                cid += 2;
                if (registered) {
                    q.freeBuffer(out);
                    q.freeBuffer(in);
                }
            }
        }
        assertEquals(0, listener.copiedBytes() - copiedBefore, "no copy on the target: RDMA from/to namespace memory");
        assertEquals(total, listener.placedBytes() - placedBefore);
        assertEquals(18, core.directWrites.get(), "every write RDMA-Read straight into the namespace memory");
        assertEquals(0, core.copiedWrites.get());
        assertTrue(q.directBytes() > 0, "registered host buffers were named directly");
        assertEquals(0, q.poolGrowths(), "the host pool registered nothing after connect");
        waitFor(() -> core.added.get() == core.released.get(), "every segment released once");
    }

    @Test
    void zeroCopyOffCopiesAndStillWorks() throws Exception {
        listener.close();
        core.detach();
        System.setProperty(RdmaTransport.ZERO_COPY_PROPERTY, "false");
        try {
            listener = (RdmaTargetListener) transport.listen(
                    new ListenerOptions(
                            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, 128, 4096, 0, false),
                    core);
        } finally {
            System.clearProperty(RdmaTransport.ZERO_COPY_PROPERTY);
        }
        assertEquals(null, listener.memoryObserver());
        RdmaHostQueue q = ioQueue(8);
        ByteBuffer out = random(65536, 5, true);
        TestCommand w = TestCommand.write(1, 0, out, 65536);
        q.submit(w);
        assertEquals(0, w.status());
        ByteBuffer in = ByteBuffer.allocate(65536);
        TestCommand r = TestCommand.read(2, 0, in, 65536);
        q.submit(r);
        assertEquals(0, r.status());
        assertArrayEquals(bytes(out, 65536), bytes(in, 65536));
        assertEquals(1, core.copiedWrites.get());
        assertTrue(listener.copiedBytes() >= 2 * 65536);
    }

    @Test
    void inCapsuleWritesOnIoQueuesOnly() throws Exception {
        RdmaHostQueue q = ioQueue(8);
        q.maxInCapsuleData(4096);
        ByteBuffer out = random(4096, 9, false);
        TestCommand w = TestCommand.write(3, 100, out, 4096);
        q.submit(w);
        assertEquals(0, w.status());
        assertEquals(1, core.inCapsuleWrites.get());
        ByteBuffer in = ByteBuffer.allocate(4096);
        TestCommand r = TestCommand.read(4, 100, in, 4096);
        q.submit(r);
        assertEquals(0, r.status());
        assertArrayEquals(bytes(out, 4096), bytes(in, 4096));
        // 8 KiB is above the controller's 4 KiB: keyed
        TestCommand big = TestCommand.write(5, 200, random(8192, 1, false), 8192);
        q.submit(big);
        assertEquals(0, big.status());
        assertEquals(1, core.inCapsuleWrites.get());
    }

    @Test
    void adminDataFromHeapIsCopiedAndCallbacksRunOnTheQueueThread() throws Exception {
        RdmaHostQueue admin = connect(0, 32);
        TestCommand c = TestCommand.connect(0, 0, 31);
        admin.submit(c);
        assertEquals(1, c.result.get(5, TimeUnit.SECONDS)[1], "DW0 = CNTLID");
        ByteBuffer page = ByteBuffer.allocate(4096);
        TestCommand id = new TestCommand(1, page, 0, 4096);
        id.sqe.opcode(0x06).cdw(10, 1);
        admin.submit(id);
        assertEquals(0, id.status());
        for (int i = 0; i < 4096; i++) {
            assertEquals((byte) i, page.get(i));
        }
        assertTrue(id.callbackThread.getName().startsWith("nvme-rdma-host-q0"), id.callbackThread.getName());
        assertThrows(IllegalArgumentException.class, () -> admin.submit(new TestCommand(32, null, 0, 0)));
        TestCommand ka = new TestCommand(2, null, 0, 0);
        ka.sqe.opcode(0x18);
        admin.submit(ka);
        assertEquals(0, ka.status());
    }

    @Test
    void manyThreadsSubmitConcurrently() throws Exception {
        RdmaHostQueue q = ioQueue(64);
        int threads = 4;
        int perThread = 200;
        List<Thread> ts = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            int base = t * 16;
            Thread th = new Thread(() -> {
                try {
                    ByteBuffer buf = ByteBuffer.allocateDirect(8192);
                    for (int i = 0; i < perThread; i++) {
                        int cid = base + (i % 16);
                        TestCommand c = (i & 1) == 0
                                ? TestCommand.write(cid, base, buf, 8192)
                                : TestCommand.read(cid, base, buf, 8192);
                        q.submit(c);
                        assertEquals(0, c.status());
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join(30_000);
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    @Test
    void rejectsCarryTheNvmeRdmaStatus() throws Exception {
        NvmeRdmaRejectedException e = assertThrows(NvmeRdmaRejectedException.class, () -> connect(0, 64));
        assertEquals(RdmaCmReject.STS_INVALID_HSQSIZE, e.sts(), "admin queue larger than 32");
        e = assertThrows(NvmeRdmaRejectedException.class, () -> connect(1, 256));
        assertEquals(RdmaCmReject.STS_INVALID_HSQSIZE, e.sts(), "I/O queue larger than MQES+1");
        assertTrue(e.getMessage().contains("STS 4"), e.getMessage());
        // raw private data through the provider
        SoftRdmaProvider p = new SoftRdmaProvider();
        assertEquals(RdmaCmReject.STS_INVALID_LEN, rawReject(p, new byte[16], 8));
        byte[] ok = request(0, 32, 31);
        byte[] recfmt = ok.clone();
        recfmt[0] = 1;
        assertEquals(RdmaCmReject.STS_INVALID_RECFMT, rawReject(p, recfmt, 8));
        assertEquals(RdmaCmReject.STS_INVALID_HRQSIZE, rawReject(p, request(1, 8, 15), 8));
        assertEquals(RdmaCmReject.STS_INVALID_QID, rawReject(p, request(0xFFFF, 8, 7), 8));
        assertEquals(RdmaCmReject.STS_INVALID_IRD, rawReject(p, ok, 0), "no RDMA Read resources offered");
        assertEquals(0, listener.openQueues());
    }

    private static byte[] request(int qid, int hrqsize, int hsqsize) {
        ByteBuffer b = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        RdmaCmRequest r = new RdmaCmRequest();
        r.wrap(b, 0);
        r.set(qid, hrqsize, hsqsize, 0);
        return b.array();
    }

    private int rawReject(SoftRdmaProvider p, byte[] priv, int responderResources) {
        io.nvmeof.transport.rdma.verbs.RdmaRejectedException e = assertThrows(
                io.nvmeof.transport.rdma.verbs.RdmaRejectedException.class,
                () -> p.connect(
                        listener.localAddress(),
                        new io.nvmeof.transport.rdma.verbs.QueuePairAttributes(8, 8, 1, 1, 16, responderResources, 0),
                        ByteBuffer.wrap(priv),
                        null,
                        Duration.ofSeconds(5)));
        ByteBuffer rej = e.privateData();
        assertEquals(4, rej.remaining());
        assertEquals(0, rej.getShort(0), "RECFMT");
        return rej.getShort(2) & 0xFFFF;
    }

    @Test
    void droppedMidIoFailsEveryOutstandingCommandOnce() throws Exception {
        RdmaHostQueue q = ioQueue(16);
        core.stallReads = true;
        AtomicInteger closes = new AtomicInteger();
        CompletableFuture<Throwable> closeCause = new CompletableFuture<>();
        q.onClose(c -> {
            closes.incrementAndGet();
            closeCause.complete(c);
        });
        List<TestCommand> cmds = new ArrayList<>();
        for (int cid = 0; cid < 10; cid++) {
            TestCommand r = TestCommand.read(cid, cid, ByteBuffer.allocate(65536), 65536);
            cmds.add(r);
            q.submit(r);
        }
        waitFor(() -> core.added.get() >= 10, "the target holds 10 reads");
        // the target side drops the queue (as the core would on keep-alive expiry)
        core.channels.get(core.channels.size() - 1).close();
        for (TestCommand c : cmds) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> c.result.get(10, TimeUnit.SECONDS));
            assertInstanceOf(IOException.class, e.getCause());
        }
        assertNotNull(closeCause.get(10, TimeUnit.SECONDS), "the host's close listener got a cause");
        Thread.sleep(100);
        for (TestCommand c : cmds) {
            assertEquals(1, c.callbacks.get(), "exactly one callback per command");
        }
        assertEquals(1, closes.get());
        assertFalse(q.isOpen());
        assertThrows(
                IllegalStateException.class, () -> q.submit(TestCommand.read(0, 0, ByteBuffer.allocate(4096), 4096)));
        waitFor(() -> core.added.get() == core.released.get(), "the target released every held segment once");
        waitFor(() -> listener.openQueues() == 1, "only the admin queue is left");
    }

    @Test
    void hostCloseFailsInFlightCommandsAndTheTargetSeesTheDisconnect() throws Exception {
        RdmaHostQueue q = ioQueue(8);
        core.stallReads = true;
        TestCommand r = TestCommand.read(1, 0, ByteBuffer.allocate(4096), 4096);
        q.submit(r);
        waitFor(() -> core.added.get() >= 1, "held");
        CompletableFuture<Throwable> cause = new CompletableFuture<>();
        q.onClose(cause::complete);
        q.close();
        assertThrows(ExecutionException.class, () -> r.result.get(5, TimeUnit.SECONDS));
        assertEquals(null, cause.get(5, TimeUnit.SECONDS), "orderly close: null cause");
        waitFor(() -> core.closes.size() >= 1, "the target queue closed");
        waitFor(() -> core.added.get() == core.released.get(), "segments released");
    }

    static void waitFor(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting: " + what);
            }
            Thread.sleep(5);
        }
    }
}

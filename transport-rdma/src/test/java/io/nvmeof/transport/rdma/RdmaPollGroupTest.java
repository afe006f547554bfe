package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.transport.rdma.soft.SoftRdmaProvider;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Many queues on one target listener with two poll groups, over the software RNIC (emulated): the queues share the
 * groups' threads, CQs and SRQs; a fault or a disconnect on some queues leaves the others working; every SRQ buffer
 * is posted again at the end; idle groups sleep.
 */
class RdmaPollGroupTest {
    private static final int CONTROLLERS = 16;
    private static final int IO_QUEUES = 4;
    private static final int IO_QUEUE_SIZE = 16;
    /** Small, so a buffer that is not given back shows: the later rounds would stall on receiver-not-ready. */
    private static final int SRQ_DEPTH = 64;

    private SoftRdmaTarget target;
    private FakeCore core;
    private RdmaTargetListener listener;
    private ExecutorService pool;

    @BeforeAll
    static void smallSrq() {
        System.setProperty(RdmaTargetListener.SRQ_DEPTH_PROPERTY, Integer.toString(SRQ_DEPTH));
    }

    @AfterAll
    static void defaultSrq() {
        System.clearProperty(RdmaTargetListener.SRQ_DEPTH_PROPERTY);
    }

    @BeforeEach
    void listen() throws IOException {
        target = new SoftRdmaTarget(2);
        core = target.core;
        listener = target.listener;
        pool = Executors.newFixedThreadPool(8);
    }

    @AfterEach
    void close() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        target.close();
    }

    /** A controller: its admin queue, then its I/O queues (index 0 is the admin queue). */
    private List<RdmaHostQueue> controller() throws Exception {
        return target.controller(IO_QUEUES, IO_QUEUE_SIZE);
    }

    /**
     * Writes then reads back {@code rounds} × 4 KiB (in the capsule) and 16 KiB (keyed, RDMA Read / Write) in the
     * queue's own 16 blocks, CIDs 0..IO_QUEUE_SIZE-1, byte for byte.
     */
    private void io(RdmaHostQueue q, int queueIndex, int rounds, long seed) throws Exception {
        Random rnd = new Random(seed);
        for (int i = 0; i < rounds; i++) {
            int size = i % 2 == 0 ? 4096 : 16384;
            long slba = queueIndex * 16L + (i % 3) * 4;
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            ByteBuffer out =
                    ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN).put(0, data);
            TestCommand w = TestCommand.write((2 * i) % IO_QUEUE_SIZE, slba, out, size);
            q.submit(w);
            assertEquals(0, w.status(), "write on queue " + queueIndex);
            ByteBuffer in = ByteBuffer.allocate(size);
            TestCommand r = TestCommand.read((2 * i + 1) % IO_QUEUE_SIZE, slba, in, size);
            q.submit(r);
            assertEquals(0, r.status(), "read on queue " + queueIndex);
            byte[] got = new byte[size];
            in.get(0, got);
            assertArrayEquals(data, got, "queue " + queueIndex + " round " + i);
        }
    }

    private void ioOnAll(List<RdmaHostQueue> ioQueues, List<Integer> indexes, int rounds, long seed) throws Exception {
        List<CompletableFuture<Void>> fs = new ArrayList<>();
        for (int i = 0; i < ioQueues.size(); i++) {
            RdmaHostQueue q = ioQueues.get(i);
            int index = indexes.get(i);
            fs.add(CompletableFuture.runAsync(
                    () -> {
                        try {
                            io(q, index, rounds, seed + index);
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    },
                    pool));
        }
        CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    }

    /** Runs on the group's thread and waits for the value (the SRQ counters belong to that thread). */
    private static int onGroup(RdmaPollGroup g, java.util.function.IntSupplier what) throws Exception {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        g.execute(() -> f.complete(what.getAsInt()));
        return f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void manyQueuesOnTwoPollGroupsWithSharedCqAndSrq() throws Exception {
        List<List<RdmaHostQueue>> controllers = new ArrayList<>();
        for (int c = 0; c < CONTROLLERS; c++) {
            controllers.add(controller());
        }
        int queues = CONTROLLERS * (1 + IO_QUEUES);
        assertEquals(queues, listener.openQueues());

        assertEquals(2, target.threads("nvme-rdma-pg").size(), "the target serves " + queues + " queues on 2 threads");
        assertEquals(0, target.threads("nvme-rdma-q").size(), "no thread per queue");
        RdmaPollGroup[] groups = listener.pollGroups();
        assertEquals(2, groups.length);
        for (RdmaPollGroup g : groups) {
            assertEquals(queues / 2, g.load(), "the least-loaded group takes each new queue");
            assertNotNull(g.srqBuffers(), "the software RNIC has SRQs");
            assertEquals(SRQ_DEPTH, g.srqBuffers().count);
        }

        List<RdmaHostQueue> io = new ArrayList<>();
        List<Integer> index = new ArrayList<>();
        for (int c = 0; c < CONTROLLERS; c++) {
            for (int q = 1; q <= IO_QUEUES; q++) {
                io.add(controllers.get(c).get(q));
                index.add(c * IO_QUEUES + q - 1);
            }
        }
        ioOnAll(io, index, 6, 1);

        // Mid-way: controllers 0..3 go away (host disconnects) while the others run I/O, and one extra queue faults.
        CompletableFuture<Void> running = CompletableFuture.runAsync(
                () -> {
                    try {
                        ioOnAll(io.subList(4 * IO_QUEUES, io.size()), index.subList(4 * IO_QUEUES, io.size()), 6, 2);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                },
                Executors.newSingleThreadExecutor());
        for (int c = 0; c < 4; c++) {
            for (RdmaHostQueue q : controllers.get(c)) {
                q.close();
            }
        }
        int closesBefore = core.closes.size();
        RdmaConnection raw = shortCapsule();
        RdmaLoopbackTest.waitFor(
                () -> core.closes.stream().anyMatch(t -> t instanceof NvmeRdmaProtocolException),
                "the target closed the queue that sent a short capsule");
        running.get(120, TimeUnit.SECONDS);
        raw.close();
        RdmaLoopbackTest.waitFor(
                () -> listener.openQueues() == queues - 4 * (1 + IO_QUEUES), "only the closed queues are gone");
        assertTrue(core.closes.size() >= closesBefore + 1);

        // The rest still work, with every SRQ buffer back in circulation (64 per group would run out otherwise).
        ioOnAll(io.subList(4 * IO_QUEUES, io.size()), index.subList(4 * IO_QUEUES, io.size()), 40, 3);

        for (RdmaHostQueue q : target.hostQueues) {
            q.close();
        }
        RdmaLoopbackTest.waitFor(() -> listener.openQueues() == 0, "every queue closed");
        for (RdmaPollGroup g : groups) {
            assertEquals(SRQ_DEPTH, onGroup(g, () -> g.srqBuffers().posted()), g + ": every SRQ buffer posted again");
            assertEquals(0, g.load());
        }
        assertEquals(core.added.get(), core.released.get(), "every read segment released once");
    }

    /** A raw verbs host on QID 1 that sends a 32-byte capsule (a protocol fault). */
    private RdmaConnection shortCapsule() throws Exception {
        SoftRdmaProvider provider = new SoftRdmaProvider();
        ByteBuffer priv = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        RdmaCmRequest r = new RdmaCmRequest();
        r.wrap(priv, 0);
        r.set(1, 8, 7, 1);
        MemoryRegion[] send = new MemoryRegion[1];
        RdmaConnection conn = provider.connect(
                listener.localAddress(),
                new QueuePairAttributes(16, 8, 1, 1, 24, 4, 0),
                priv,
                c -> {
                    try {
                        ProtectionDomain pd = c.protectionDomain();
                        MemoryRegion recv = pd.register(pd.allocate(8 * 16), ProtectionDomain.ACCESS_LOCAL_WRITE);
                        send[0] = pd.register(pd.allocate(64), ProtectionDomain.ACCESS_LOCAL_WRITE);
                        for (int i = 0; i < 8; i++) {
                            c.queuePair().postRecv(i, recv, i * 16, 16);
                        }
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                },
                Duration.ofSeconds(5));
        assertTrue(conn.queuePair().postSend(1, send[0], 0, 32, true));
        return conn;
    }

    @Test
    void idleGroupsSleep() throws Exception {
        List<List<RdmaHostQueue>> controllers = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            controllers.add(controller());
        }
        io(controllers.get(0).get(1), 0, 2, 7);
        List<Thread> groupThreads = target.threads("nvme-rdma-pg");
        assertEquals(2, groupThreads.size());
        // 300 ms to settle: past the spin window (200 µs by default) and any work.
        ThreadCpu window = ThreadCpu.over(groupThreads, 300, 1000);
        long wall = window.wallNanos();
        for (int i = 0; i < groupThreads.size(); i++) {
            Thread t = groupThreads.get(i);
            long cpu = window.cpuNanos()[i];
            // A spinning thread would use most of the wall time; a sleeping one wakes ~1000 times a second for a few
            // microseconds. The bound only tells the two apart (not a speed assertion).
            assertTrue(
                    cpu < wall / 5, t.getName() + " used " + cpu / 1000 + " µs of CPU in " + wall / 1000 + " µs idle");
            Thread.State s = t.getState();
            assertTrue(s == Thread.State.TIMED_WAITING || s == Thread.State.WAITING || s == Thread.State.RUNNABLE);
        }
        // And they still answer at once when work comes.
        io(controllers.get(3).get(4), 15, 2, 8);
        assertInstanceOf(RdmaPollGroup.class, listener.pollGroups()[0]);
    }

    /** Heap bytes the poll-group threads allocate per I/O in steady state: none (a loose bound catches a per-I/O object). */
    @Test
    void pollGroupsAllocateNothingPerIo() throws Exception {
        List<RdmaHostQueue> c0 = controller();
        List<RdmaHostQueue> c1 = controller();
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        List<Thread> groupThreads = target.threads("nvme-rdma-pg");
        assertEquals(2, groupThreads.size());
        int n = 1500;
        ioRounds(c0.get(1), c1.get(2), n); // warm up (JIT, pools, the core's tables)
        long before = 0;
        for (Thread t : groupThreads) {
            before += mx.getThreadAllocatedBytes(t.getId());
        }
        ioRounds(c0.get(1), c1.get(2), n);
        long after = 0;
        for (Thread t : groupThreads) {
            after += mx.getThreadAllocatedBytes(t.getId());
        }
        long ios = 6L * n; // per round and queue: an in-capsule write, a keyed write, a read
        long perIo = (after - before) / ios;
        System.out.println("poll groups, steady state: ~" + perIo + " heap bytes per I/O (" + (after - before)
                + " bytes over " + ios + " I/Os)");
        assertTrue(perIo < 16, perIo + " heap bytes per I/O on the poll-group threads");
    }

    /** {@code n} rounds on two queues (one per group, most likely): 4 KiB in-capsule write, 16 KiB keyed write, read. */
    private static void ioRounds(RdmaHostQueue a, RdmaHostQueue b, int n) throws Exception {
        ByteBuffer small = ByteBuffer.allocate(4096);
        ByteBuffer big = ByteBuffer.allocate(16384);
        ByteBuffer in = ByteBuffer.allocate(16384);
        for (int i = 0; i < n; i++) {
            for (RdmaHostQueue q : List.of(a, b)) {
                TestCommand w1 = TestCommand.write(0, 0, small, 4096);
                q.submit(w1);
                assertEquals(0, w1.status());
                TestCommand w2 = TestCommand.write(1, 4, big, 16384);
                q.submit(w2);
                assertEquals(0, w2.status());
                TestCommand r = TestCommand.read(2, 4, in, 16384);
                q.submit(r);
                assertEquals(0, r.status());
            }
        }
    }
}

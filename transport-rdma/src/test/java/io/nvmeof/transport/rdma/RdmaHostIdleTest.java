package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.transport.rdma.soft.SoftRdmaProvider;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Idle host queues over the software RNIC (emulated) sleep: with no command outstanding their threads neither spin nor
 * wake thousands of times a second, and a submit still wakes them at once.
 */
class RdmaHostIdleTest {
    private static final int CONTROLLERS = 4;
    private static final int IO_QUEUES = 4;
    private static final int IO_QUEUE_SIZE = 16;

    private final RdmaTransport transport = new RdmaTransport(new SoftRdmaProvider());
    private final FakeCore core = new FakeCore();
    private RdmaTargetListener listener;
    private final List<RdmaHostQueue> hostQueues = new ArrayList<>();

    @BeforeEach
    void listen() throws IOException {
        ListenerOptions o =
                new ListenerOptions(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, 128, 4096, 1, false);
        listener = (RdmaTargetListener) transport.listen(o, core);
        core.attach(listener.memoryObserver());
    }

    @AfterEach
    void close() {
        for (RdmaHostQueue q : hostQueues) {
            q.close();
        }
        listener.close();
        core.detach();
    }

    private RdmaHostQueue connect(int qid, int size) throws Exception {
        RdmaHostQueue q = (RdmaHostQueue) transport.connect(new HostQueueOptions(
                listener.localAddress(), qid, size, qid == 0 ? 0 : 1, false, false, Duration.ofSeconds(10)));
        hostQueues.add(q);
        TestCommand c = TestCommand.connect(0, qid, size - 1);
        q.submit(c);
        assertEquals(0, c.status());
        return q;
    }

    /** A 4 KiB write then read back in the queue's own blocks, from this (another) thread: the queue must wake. */
    private static void roundTrip(RdmaHostQueue q, int index, long seed) throws Exception {
        byte[] data = new byte[4096];
        new Random(seed).nextBytes(data);
        ByteBuffer out =
                ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN).put(0, data);
        TestCommand w = TestCommand.write(0, index * 8L, out, 4096);
        q.submit(w);
        assertEquals(0, w.status(), "write on queue " + index);
        ByteBuffer in = ByteBuffer.allocate(4096);
        TestCommand r = TestCommand.read(1, index * 8L, in, 4096);
        q.submit(r);
        assertEquals(0, r.status(), "read on queue " + index);
        byte[] got = new byte[4096];
        in.get(0, got);
        assertArrayEquals(data, got, "queue " + index);
    }

    /**
     * Over 1 s (after 300 ms to settle), the host queue threads together use under 5% of one core. A thread that spins
     * after each timeout wake, or looks at its CQ every 200 µs, costs about 1% of a core per queue or more (20 queues:
     * 20%+); parked threads wake a few times a second. The bound only tells the two apart (not a speed assertion).
     */
    private void assertIdle(String what) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("nvme-rdma-host-q") && t.isAlive()) {
                threads.add(t);
            }
        }
        assertEquals(hostQueues.size(), threads.size());
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread.sleep(300);
        long[] before = new long[threads.size()];
        for (int i = 0; i < before.length; i++) {
            before[i] = mx.getThreadCpuTime(threads.get(i).getId());
        }
        long t0 = System.nanoTime();
        Thread.sleep(1000);
        long wall = System.nanoTime() - t0;
        long cpu = 0;
        for (int i = 0; i < before.length; i++) {
            cpu += mx.getThreadCpuTime(threads.get(i).getId()) - before[i];
        }
        assertTrue(
                cpu < wall / 20,
                threads.size() + " " + what + " used " + cpu / 1000 + " µs of CPU in " + wall / 1000 + " µs");
    }

    private List<RdmaHostQueue> connectAll() throws Exception {
        List<RdmaHostQueue> ioQueues = new ArrayList<>();
        for (int c = 0; c < CONTROLLERS; c++) {
            connect(0, 32);
            for (int q = 1; q <= IO_QUEUES; q++) {
                ioQueues.add(connect(q, IO_QUEUE_SIZE));
            }
        }
        return ioQueues;
    }

    /**
     * Each I/O queue holds one command the target does not answer (as an admin queue holds an Asynchronous Event
     * Request): the threads watch their CQs, in slices that grow while nothing comes, so they still use little CPU.
     */
    @Test
    void queuesWithALongOutstandingCommandWakeRarely() throws Exception {
        List<RdmaHostQueue> ioQueues = connectAll();
        for (int i = 0; i < ioQueues.size(); i++) {
            roundTrip(ioQueues.get(i), i, i);
        }
        core.stallReads = true;
        long base = core.added.get();
        List<TestCommand> held = new ArrayList<>();
        for (int i = 0; i < ioQueues.size(); i++) {
            TestCommand r = TestCommand.read(2, i * 8L, ByteBuffer.allocate(4096), 4096);
            ioQueues.get(i).submit(r);
            held.add(r);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (core.added.get() < base + ioQueues.size() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(base + ioQueues.size(), core.added.get(), "the target holds one read per I/O queue");
        assertIdle("host queue threads with a command outstanding");
        for (TestCommand r : held) {
            assertFalse(r.result.isDone(), "the target holds the read");
        }
    }

    @Test
    void idleHostQueuesSleepAndWakeOnSubmit() throws Exception {
        List<RdmaHostQueue> ioQueues = connectAll();
        for (int i = 0; i < ioQueues.size(); i++) {
            roundTrip(ioQueues.get(i), i, i);
        }
        assertIdle("idle host queue threads");
        // And a submit from another thread still wakes each parked queue.
        for (int i = 0; i < ioQueues.size(); i++) {
            roundTrip(ioQueues.get(i), i, 100 + i);
        }
    }
}

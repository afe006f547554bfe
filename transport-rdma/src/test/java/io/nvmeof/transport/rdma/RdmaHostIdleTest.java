package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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

    private SoftRdmaTarget target;

    @BeforeEach
    void listen() throws IOException {
        target = new SoftRdmaTarget(1);
    }

    @AfterEach
    void close() {
        target.close();
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
        assertEquals(target.hostQueues.size(), threads.size());
        ThreadCpu window = ThreadCpu.over(threads, 300, 1000);
        long cpu = window.totalCpuNanos();
        long wall = window.wallNanos();
        assertTrue(
                cpu < wall / 20,
                threads.size() + " " + what + " used " + cpu / 1000 + " µs of CPU in " + wall / 1000 + " µs");
    }

    private List<RdmaHostQueue> connectAll() throws Exception {
        List<RdmaHostQueue> ioQueues = new ArrayList<>();
        for (int c = 0; c < CONTROLLERS; c++) {
            List<RdmaHostQueue> controller = target.controller(IO_QUEUES, IO_QUEUE_SIZE);
            ioQueues.addAll(controller.subList(1, controller.size()));
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
        target.core.stallReads = true;
        long base = target.core.added.get();
        List<TestCommand> held = new ArrayList<>();
        for (int i = 0; i < ioQueues.size(); i++) {
            TestCommand r = TestCommand.read(2, i * 8L, ByteBuffer.allocate(4096), 4096);
            ioQueues.get(i).submit(r);
            held.add(r);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (target.core.added.get() < base + ioQueues.size() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(base + ioQueues.size(), target.core.added.get(), "the target holds one read per I/O queue");
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

package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The issue-13 scale over the software RNIC (emulated), hosts in this JVM: 64 controllers × (admin + 4 I/O queues),
 * 320 queues, on one target listener with 2 poll groups. Every queue connects, the groups take half each on their two
 * threads (no thread per queue), every I/O queue writes and reads back its own block, no queue faults on either side,
 * and when the hosts close every queue goes away, the groups are empty and every read segment is released once. It
 * asserts behaviour, not CPU or speed: perf/scale.sh measures the target's idle CPU at this scale.
 */
class PollGroupScaleTest {
    private static final int CONTROLLERS = 64;
    private static final int IO_QUEUES = 4;
    /** Two entries: a write and its read back (CIDs 0 and 1), and a small footprint per queue. */
    private static final int IO_QUEUE_SIZE = 2;

    @Test
    void threeHundredTwentyQueuesOnTwoPollGroups() throws Exception {
        // 320 connects one after another on a shared machine: each may take long, none may fail.
        try (SoftRdmaTarget target = new SoftRdmaTarget(2, Duration.ofSeconds(60))) {
            List<Throwable> hostFaults = new CopyOnWriteArrayList<>();
            List<RdmaHostQueue> io = new ArrayList<>();
            for (int c = 0; c < CONTROLLERS; c++) {
                List<RdmaHostQueue> controller = target.controller(IO_QUEUES, IO_QUEUE_SIZE);
                for (RdmaHostQueue q : controller) {
                    q.onClose(cause -> {
                        if (cause != null) {
                            hostFaults.add(cause);
                        }
                    });
                }
                io.addAll(controller.subList(1, controller.size()));
            }
            int queues = CONTROLLERS * (1 + IO_QUEUES);
            RdmaTargetListener listener = target.listener;
            assertEquals(queues, listener.openQueues());
            assertEquals(2, target.threads("nvme-rdma-pg").size(), queues + " queues on 2 poll-group threads");
            assertEquals(0, target.threads("nvme-rdma-q").size(), "no thread per queue");
            RdmaPollGroup[] groups = listener.pollGroups();
            assertEquals(2, groups.length);
            for (RdmaPollGroup g : groups) {
                assertEquals(queues / 2, g.load(), g + " serves half the queues");
            }

            for (int i = 0; i < io.size(); i++) {
                writeAndReadBack(io.get(i), i);
            }
            assertEquals(List.of(), hostFaults, "no host queue closed under us");
            assertEquals(List.of(), target.core.closes, "no target queue closed under us");

            for (RdmaHostQueue q : target.hostQueues) {
                q.close();
            }
            RdmaLoopbackTest.waitFor(() -> listener.openQueues() == 0, "every queue gone");
            for (RdmaPollGroup g : groups) {
                assertEquals(0, g.load(), g + " is empty");
            }
            RdmaLoopbackTest.waitFor(() -> target.core.closes.size() == queues, "the core told of every close");
            for (Throwable t : target.core.closes) {
                // The target tells its core of a host's disconnect as an IOException; a fault would be another type.
                assertEquals(IOException.class, t.getClass(), t.toString());
                assertTrue(t.getMessage().contains("disconnected RDMA queue"), t.getMessage());
            }
            assertEquals(List.of(), hostFaults, "the hosts closed every queue in order");
            assertEquals(target.core.added.get(), target.core.released.get(), "every read segment released once");
        }
    }

    /** A 4 KiB write of block {@code index} then its read back, byte for byte. */
    private static void writeAndReadBack(RdmaHostQueue q, int index) throws Exception {
        byte[] data = new byte[FakeCore.BS];
        new Random(index).nextBytes(data);
        ByteBuffer out =
                ByteBuffer.allocate(FakeCore.BS).order(ByteOrder.LITTLE_ENDIAN).put(0, data);
        TestCommand w = TestCommand.write(0, index, out, FakeCore.BS);
        q.submit(w);
        assertEquals(0, w.status(), "write on I/O queue " + index);
        ByteBuffer in = ByteBuffer.allocate(FakeCore.BS);
        TestCommand r = TestCommand.read(1, index, in, FakeCore.BS);
        q.submit(r);
        assertEquals(0, r.status(), "read on I/O queue " + index);
        byte[] got = new byte[FakeCore.BS];
        in.get(0, got);
        assertArrayEquals(data, got, "I/O queue " + index);
    }
}

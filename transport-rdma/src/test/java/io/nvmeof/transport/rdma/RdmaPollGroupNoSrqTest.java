package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code -Dnvmeof.rdma.srq=false} (SPDK's {@code no_srq}, nvmet-rdma's {@code use_srq=0}) over the software RNIC: the
 * poll groups make no shared receive queue, each queue posts receive buffers of its own on the group's shared CQ, and
 * I/O works on every queue, past more rounds than a queue has buffers (so each buffer is posted again), until every
 * queue closes.
 */
class RdmaPollGroupNoSrqTest {
    private static final int IO_QUEUE_SIZE = 8;

    @AfterEach
    void clear() {
        System.clearProperty(RdmaTargetListener.SRQ_PROPERTY);
    }

    @Test
    void queuesPostTheirOwnReceivesWhenTheSrqIsOff() throws Exception {
        System.setProperty(RdmaTargetListener.SRQ_PROPERTY, "false");
        try (SoftRdmaTarget target = new SoftRdmaTarget(2)) {
            List<RdmaHostQueue> io = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                List<RdmaHostQueue> ctrl = target.controller(2, IO_QUEUE_SIZE);
                io.addAll(ctrl.subList(1, ctrl.size()));
            }
            for (RdmaPollGroup g : target.listener.pollGroups()) {
                assertNull(g.srqBuffers(), g + " has no shared receive queue");
                assertTrue(g.load() > 0, "both groups serve queues");
            }
            Random rnd = new Random(5);
            for (int round = 0; round < 3 * IO_QUEUE_SIZE; round++) {
                for (int q = 0; q < io.size(); q++) {
                    int size = round % 2 == 0 ? 4096 : 16384; // in the capsule, then keyed
                    long slba = q * 8L;
                    byte[] data = new byte[size];
                    rnd.nextBytes(data);
                    TestCommand w = TestCommand.write(
                            round % IO_QUEUE_SIZE,
                            slba,
                            ByteBuffer.allocate(size)
                                    .order(ByteOrder.LITTLE_ENDIAN)
                                    .put(0, data),
                            size);
                    io.get(q).submit(w);
                    assertEquals(0, w.status(), "write, queue " + q + " round " + round);
                    ByteBuffer in = ByteBuffer.allocate(size);
                    TestCommand r = TestCommand.read((round + 1) % IO_QUEUE_SIZE, slba, in, size);
                    io.get(q).submit(r);
                    assertEquals(0, r.status(), "read, queue " + q + " round " + round);
                    byte[] got = new byte[size];
                    in.get(0, got);
                    assertArrayEquals(data, got, "queue " + q + " round " + round);
                }
            }
            for (RdmaHostQueue q : target.hostQueues) {
                q.close();
            }
            RdmaLoopbackTest.waitFor(() -> target.listener.openQueues() == 0, "every queue closed");
            assertEquals(target.core.added.get(), target.core.released.get(), "every read segment released once");
        }
    }

    @Test
    void aValueOtherThanTrueOrFalseIsRefused() {
        System.setProperty(RdmaTargetListener.SRQ_PROPERTY, "no");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
            try (SoftRdmaTarget ignored = new SoftRdmaTarget(1)) {
                // not reached
            } catch (IOException io) {
                throw new AssertionError(io);
            }
        });
        assertTrue(e.getMessage().contains("nvmeof.rdma.srq must be true or false, not 'no'"), e.getMessage());
    }
}

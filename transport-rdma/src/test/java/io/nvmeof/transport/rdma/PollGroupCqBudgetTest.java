package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How many queues one poll group's CQ takes (software RNIC, one group, a CQ of 1024 entries, an SRQ of 64): a queue of
 * S commands reserves S response Sends + its RDMA Read depth, plus S receives when it has no shared receive queue;
 * with the SRQ its receives are the SRQ's 64, reserved once. The first queue (the admin queue, 32 commands) comes
 * before the group has made its SRQ and reserves for its receives either way. A queue past the budget is refused
 * with STS 6 (no resources).
 */
class PollGroupCqBudgetTest {
    private static final int CQ = 1024;
    private static final int SRQ = 64;
    private static final int IO_SLOTS = 16;
    private static final int READS = Math.min(RdmaHostQueue.RESPONDER_RESOURCES, RdmaTransport.MAX_READ_DEPTH);
    private static final int ADMIN = 2 * RdmaTargetListener.ADMIN_QUEUE_SIZE + READS;

    @BeforeEach
    void smallQueues() {
        System.setProperty(RdmaTargetListener.CQ_ENTRIES_PROPERTY, Integer.toString(CQ));
        System.setProperty(RdmaTargetListener.SRQ_DEPTH_PROPERTY, Integer.toString(SRQ));
    }

    @AfterEach
    void clear() {
        System.clearProperty(RdmaTargetListener.CQ_ENTRIES_PROPERTY);
        System.clearProperty(RdmaTargetListener.SRQ_DEPTH_PROPERTY);
        System.clearProperty(RdmaTargetListener.SRQ_PROPERTY);
    }

    /** Connects the admin queue, then I/O queues of IO_SLOTS until one is refused; returns how many connected. */
    private static int ioQueuesThatFit() throws Exception {
        try (SoftRdmaTarget target = new SoftRdmaTarget(1)) {
            target.connect(0, RdmaTargetListener.ADMIN_QUEUE_SIZE);
            for (int n = 0; ; n++) {
                try {
                    target.connect(1, IO_SLOTS);
                } catch (Exception e) {
                    Throwable t = e;
                    while (!(t instanceof NvmeRdmaRejectedException) && t.getCause() != null) {
                        t = t.getCause();
                    }
                    NvmeRdmaRejectedException r = assertInstanceOf(NvmeRdmaRejectedException.class, t, e.toString());
                    assertEquals(RdmaCmReject.STS_NO_RSC, r.sts(), r.getMessage());
                    return n;
                }
            }
        }
    }

    @Test
    void withTheSrqAQueueReservesNoReceives() throws Exception {
        assertEquals((CQ - SRQ - ADMIN) / (IO_SLOTS + READS), ioQueuesThatFit());
    }

    @Test
    void withoutTheSrqEachQueueReservesItsReceives() throws Exception {
        System.setProperty(RdmaTargetListener.SRQ_PROPERTY, "false");
        assertEquals((CQ - ADMIN) / (2 * IO_SLOTS + READS), ioQueuesThatFit());
    }
}

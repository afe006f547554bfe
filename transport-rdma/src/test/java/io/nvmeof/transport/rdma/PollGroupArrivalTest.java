package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A poll group reads the clock once per loop turn for the commands that turn received (their arrival, for the target's
 * latency statistics). Over the software RNIC: each command sent after a pause gets a time between its send and its
 * completion, never a time left over from an earlier turn.
 */
class PollGroupArrivalTest {
    @Test
    void eachCommandArrivesInItsOwnTurnNotAnEarlierOne() throws Exception {
        try (SoftRdmaTarget target = new SoftRdmaTarget(1)) {
            RdmaHostQueue q = target.controller(1, 8).get(1);
            List<Long> arrivals = new CopyOnWriteArrayList<>();
            target.core.arrivals = arrivals;
            for (int i = 0; i < 6; i++) {
                Thread.sleep(20); // the group's loop turns meanwhile, with nothing received
                long sent = System.nanoTime();
                TestCommand r = TestCommand.read(i, i * 8L, ByteBuffer.allocate(4096), 4096);
                q.submit(r);
                assertEquals(0, r.status(), "read " + i);
                long done = System.nanoTime();
                assertEquals(i + 1, arrivals.size());
                long arrived = arrivals.get(i);
                assertTrue(
                        arrived >= sent && arrived <= done,
                        "read " + i + " arrived " + (arrived - sent) + " ns after it was sent, " + (done - arrived)
                                + " ns before it completed");
            }
            target.core.arrivals = null;
        }
    }
}

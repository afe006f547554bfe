package io.nvmeof.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Test helpers shared by the in-JVM tests and the peer process. */
final class Harness {
    static final QueuePairAttributes ATTRS = new QueuePairAttributes(16, 16, 1, 1, 32, 4, 4);

    private Harness() {}

    /** Polls until {@code n} completions arrived (copies), failing after {@code timeout}. */
    static List<WorkCompletion> take(CompletionQueue cq, int n, Duration timeout) throws InterruptedException {
        List<WorkCompletion> got = new ArrayList<>();
        WorkCompletion[] out = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        long deadline = System.nanoTime() + timeout.toNanos();
        while (got.size() < n) {
            WorkCompletion[] want = n - got.size() >= out.length ? out : java.util.Arrays.copyOf(out, n - got.size());
            int k = cq.poll(want);
            for (int i = 0; i < k; i++) {
                got.add(copy(want[i]));
            }
            if (k == 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    fail("expected " + n + " completions, got " + got);
                }
                cq.await(Duration.ofNanos(Math.min(left, 50_000_000)));
            }
        }
        return got;
    }

    static WorkCompletion take1(CompletionQueue cq) throws InterruptedException {
        return take(cq, 1, Duration.ofSeconds(5)).get(0);
    }

    /** Asserts nothing more arrives within {@code window}. */
    static void assertQuiet(CompletionQueue cq, Duration window) throws InterruptedException {
        WorkCompletion[] out = {new WorkCompletion()};
        long deadline = System.nanoTime() + window.toNanos();
        while (System.nanoTime() < deadline) {
            int k = cq.poll(out);
            assertTrue(k == 0, () -> "unexpected completion " + out[0]);
            cq.await(Duration.ofMillis(5));
        }
    }

    static WorkCompletion copy(WorkCompletion w) {
        WorkCompletion c = new WorkCompletion();
        c.wrId = w.wrId;
        c.opcode = w.opcode;
        c.status = w.status;
        c.byteLength = w.byteLength;
        c.invalidatedRkey = w.invalidatedRkey;
        c.withInvalidate = w.withInvalidate;
        c.qpNumber = w.qpNumber;
        return c;
    }

    static void waitFor(RdmaConnection c, java.util.function.BooleanSupplier cond, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what + " on " + c);
            }
            Thread.sleep(2);
        }
    }
}

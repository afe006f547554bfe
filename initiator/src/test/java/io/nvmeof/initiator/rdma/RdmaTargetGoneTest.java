package io.nvmeof.initiator.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** An in-JVM NVMe/RDMA target that closes while I/O is in flight: every command completes, none hangs. */
class RdmaTargetGoneTest {
    @RegisterExtension
    NvmeofTargetExtension target = NvmeofTargetExtension.builder()
            .transport("rdma")
            .namespace("16M")
            .blockSize(4096)
            .build();

    /** Futures issued by {@code threads} threads until the controller fails; returns them all. */
    static ConcurrentLinkedQueue<CompletableFuture<Void>> hammer(Controller c, int threads, Runnable kill)
            throws Exception {
        Namespace ns = c.namespace();
        ConcurrentLinkedQueue<CompletableFuture<Void>> fs = new ConcurrentLinkedQueue<>();
        Thread[] ts = new Thread[threads];
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(
                    () -> {
                        ByteBuffer buf = ByteBuffer.allocateDirect(64 << 10);
                        started.countDown();
                        for (int i = 0; i < 100_000 && c.isOpen(); i++) {
                            int blocks = 1 + (i % 16);
                            long lba = (id * 1000L + i * 16L) % 3000;
                            CompletableFuture<Void> f = i % 2 == 0
                                    ? ns.writeAsync(lba, blocks, buf.slice(0, blocks * 4096))
                                    : ns.readAsync(lba, blocks, ByteBuffer.allocateDirect(blocks * 4096));
                            fs.add(f);
                            if (fs.size() % 64 == 0) {
                                try {
                                    f.get(10, TimeUnit.SECONDS); // keep a bounded number in flight
                                } catch (Exception e) {
                                    // failed: the loop ends when the controller notices
                                }
                            }
                        }
                    },
                    "rdma-gone-" + t);
            ts[t].start();
        }
        started.await();
        // I/O is flowing before the kill (a fixed sleep was not enough on a loaded machine: the kill could come first).
        long flowingBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!completedNormally(fs, 64)) {
            if (System.nanoTime() > flowingBy) {
                throw new AssertionError("I/O did not flow within 20 s (" + fs.size() + " commands issued)");
            }
            Thread.sleep(5);
        }
        kill.run();
        for (Thread t : ts) {
            t.join(20_000);
            assertFalse(t.isAlive(), "a submitting thread is stuck");
        }
        return fs;
    }

    /** Whether at least {@code n} of the futures have completed normally. */
    private static boolean completedNormally(Iterable<CompletableFuture<Void>> fs, int n) {
        int done = 0;
        for (CompletableFuture<Void> f : fs) {
            if (f.isDone() && !f.isCompletedExceptionally() && ++done >= n) {
                return true;
            }
        }
        return false;
    }

    /** Every future completes within a bound; returns how many failed (with an {@link NvmeException}). */
    static int assertAllComplete(List<CompletableFuture<Void>> fs) throws Exception {
        int failed = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        for (CompletableFuture<Void> f : fs) {
            try {
                f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                assertInstanceOf(NvmeException.class, e.getCause());
                failed++;
            } catch (TimeoutException e) {
                fail("a command never completed (" + fs.size() + " issued)");
            }
        }
        return failed;
    }

    @Test
    void targetClosingMidIoFailsEveryOutstandingCommand() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=2&depth=64&ctrl_loss_tmo=0"))) {
            List<CompletableFuture<Void>> fs = List.copyOf(hammer(c, 2, target::stop));
            int failed = assertAllComplete(fs);
            assertTrue(failed > 0, "some of " + fs.size() + " commands were in flight when the target closed");
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); // a bound for a loaded machine
            while (c.isOpen() && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            assertFalse(c.isOpen(), "the controller noticed the target is gone");
            assertTrue(c.failure() != null);
            StringBuilder chain = new StringBuilder();
            for (Throwable t = c.failure(); t != null; t = t.getCause()) {
                chain.append(t).append(" <- ");
            }
            assertTrue(chain.toString().contains("disconnected"), "says the controller went away: " + chain);
            assertFalse(chain.toString().contains("WR_FLUSH_ERR"), chain.toString());
            // Later calls fail at once.
            CompletableFuture<Void> late = c.namespace().readAsync(0, 1, ByteBuffer.allocateDirect(4096));
            assertEquals(1, assertAllComplete(List.of(late)));
        }
    }
}

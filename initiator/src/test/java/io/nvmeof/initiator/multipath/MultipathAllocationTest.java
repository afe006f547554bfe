package io.nvmeof.initiator.multipath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import io.nvmeof.core.command.AnaState;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.target.NvmeTarget;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Heap bytes per I/O of a {@link MultipathNamespace}'s callback form in steady state (no path error), with each
 * policy over two optimized paths of our target: reads that reissue themselves with {@code tryRead} from the
 * completion callback, measured on both paths' queue threads (com.sun.management.ThreadMXBean). The request taken
 * from the free list and the path selection must allocate nothing.
 */
class MultipathAllocationTest {
    static final int IOS = 20_000;

    static long allocated(Thread t) {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(t.getId());
    }

    static final class Chain implements IoCallback {
        final MultipathNamespace ns;
        final ByteBuffer[] bufs;
        long remaining;
        long lba;
        int inflight;
        long done;
        volatile Thread t0;
        volatile Thread t1;
        volatile NvmeException error;
        volatile boolean finished;

        Chain(MultipathNamespace ns, int depth) {
            this.ns = ns;
            bufs = new ByteBuffer[depth];
            for (int i = 0; i < depth; i++) {
                bufs[i] = ByteBuffer.allocateDirect(4096);
            }
        }

        void run(long ios) {
            synchronized (this) {
                remaining = ios - bufs.length;
                inflight = bufs.length;
                finished = false;
            }
            for (ByteBuffer b : bufs) {
                ns.read(0, 1, b, this, b);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!finished && System.nanoTime() < deadline) {
                LockSupport.parkNanos(1_000_000L);
            }
            assertTrue(finished, "I/Os did not finish");
            assertNull(error);
        }

        @Override
        public void completed(Object attachment) {
            Thread me = Thread.currentThread();
            if (t0 == null) {
                t0 = me;
            } else if (t0 != me && t1 == null) {
                t1 = me;
            }
            // Two queue threads complete commands: a monitor orders the counters (uncontended locks allocate nothing).
            synchronized (this) {
                done++;
                if (remaining > 0) {
                    remaining--;
                    lba = (lba + 7) & 255;
                    if (!ns.tryRead(lba, 1, (ByteBuffer) attachment, this, attachment)) {
                        error = new NvmeException("tryRead refused with a slot just freed");
                        finished = true;
                    }
                } else if (--inflight == 0) {
                    finished = true;
                }
            }
        }

        @Override
        public void failed(NvmeException e, Object attachment) {
            error = e;
            finished = true;
        }
    }

    @Test
    void callbackChainAllocatesNothingWithAnyPolicy() throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try (NvmeTarget target = NvmeTarget.start(MultipathFailoverTest.config(AnaState.OPTIMIZED))) {
            String uri =
                    "nvme+tcp://127.0.0.1:" + target.boundAddresses().get(0).getPort() + ",127.0.0.1:"
                            + target.boundAddresses().get(1).getPort() + "/" + MultipathFailoverTest.NQN
                            + "?queues=1&depth=32";
            for (IoPolicy policy : IoPolicy.values()) {
                try (MultipathNamespace ns = MultipathNamespace.connect(uri + "&iopolicy=" + policy.linuxName())) {
                    Chain c = new Chain(ns, 8);
                    c.run(IOS); // warm up: JIT, pools, both paths
                    c.run(IOS);
                    Thread q0 = c.t0;
                    Thread q1 = c.t1;
                    assertNotNull(q0);
                    long a0 = allocated(q0);
                    long a1 = q1 == null ? 0 : allocated(q1);
                    long d0 = c.done;
                    c.run(IOS);
                    assertEquals(IOS, c.done - d0);
                    long per0 = (allocated(q0) - a0) / IOS;
                    long per1 = q1 == null ? 0 : (allocated(q1) - a1) / IOS;
                    System.out.println("multipath " + policy.linuxName() + " callback chain over TCP, QD8: queue "
                            + "threads ~" + per0 + " and ~" + per1 + " B/IO" + (q1 == null ? " (one queue thread)" : "")
                            + ", paths " + ns.paths());
                    assertTrue(
                            per0 < 4 && per1 < 4,
                            policy + ": bytes per I/O on the queue threads: " + per0 + ", " + per1);
                    if (policy == IoPolicy.ROUND_ROBIN) {
                        // Both paths carried the chain (their queues may share one event-loop thread).
                        assertTrue(ns.paths().get(0).commands() > IOS
                                && ns.paths().get(1).commands() > IOS);
                    }
                }
            }
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }
}

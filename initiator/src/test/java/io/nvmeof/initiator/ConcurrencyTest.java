package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Several threads over several queues, verified data; bounded in-flight commands and back-pressure. */
class ConcurrencyTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").build();

    @Test
    void threadsOverSeveralQueuesWithVerifiedData() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=4&depth=16"))) {
            assertEquals(4, c.ioQueueCount());
            Namespace ns = c.namespace();
            int threads = 8;
            int regionBlocks = 512; // each thread owns its own region, so every read has one right answer
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    results.add(pool.submit(() -> {
                        Random rnd = new Random(thread);
                        long base = (long) thread * regionBlocks;
                        int[] version = new int[regionBlocks];
                        int ops = 0;
                        List<CompletableFuture<Void>> inflight = new ArrayList<>();
                        for (int round = 0; round < 20; round++) {
                            // a burst of async writes to distinct blocks, then verified reads
                            inflight.clear();
                            List<Integer> blocks = new ArrayList<>();
                            for (int k = 0; k < 24; k++) {
                                int b = rnd.nextInt(regionBlocks);
                                if (blocks.contains(b)) {
                                    continue;
                                }
                                blocks.add(b);
                                version[b]++;
                                inflight.add(ns.writeAsync(base + b, 1, block(thread, b, version[b])));
                            }
                            CompletableFuture.allOf(inflight.toArray(new CompletableFuture<?>[0]))
                                    .get(30, TimeUnit.SECONDS);
                            for (int b : blocks) {
                                ByteBuffer r = ByteBuffer.allocateDirect(4096);
                                ns.read(base + b, 1, r);
                                if (!r.equals(block(thread, b, version[b]))) {
                                    throw new AssertionError("thread " + thread + " block " + b + " has wrong data");
                                }
                                ops += 2;
                            }
                        }
                        return ops;
                    }));
                }
                int total = 0;
                for (Future<Integer> f : results) {
                    total += f.get(60, TimeUnit.SECONDS);
                }
                assertTrue(total > 1000);
            } finally {
                pool.shutdown();
            }
            for (CommandQueue q : c.ioQueues()) {
                assertEquals(q.size(), awaitFreeSlots(q, q.size()), "every slot is back on " + q.name());
            }
        }
    }

    @Test
    void aViewOnOneQueueSendsEveryCommandThere() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=4&depth=8"))) {
            CommandQueue[] qs = c.ioQueues();
            assertEquals(4, qs.length);
            for (int i = 0; i < qs.length; i++) {
                Namespace view = c.namespace().onQueue(i);
                assertEquals(c.namespace().sizeBytes(), view.sizeBytes());
                int n = qs[i].size();
                CountDownLatch inCallback = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                AtomicInteger done = new AtomicInteger();
                IoCallback hold = new IoCallback() {
                    @Override
                    public void completed(Object attachment) {
                        inCallback.countDown();
                        try {
                            release.await(10, TimeUnit.SECONDS); // holds the queue's thread: no other answer is read
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        done.incrementAndGet();
                    }

                    @Override
                    public void failed(NvmeException error, Object attachment) {
                        inCallback.countDown();
                    }
                };
                for (int k = 0; k < n; k++) {
                    view.read(k, 1, ByteBuffer.allocateDirect(4096), hold, null); // from this thread, all to queue i
                }
                assertTrue(inCallback.await(10, TimeUnit.SECONDS));
                // the first answer's callback holds queue i's thread, so the other commands are still out on queue i
                assertTrue(qs[i].freeSlots() < n - 1, "queue " + i + " has " + qs[i].freeSlots() + " free slots");
                for (int k = 0; k < qs.length; k++) {
                    if (k != i) {
                        assertEquals(qs[k].size(), qs[k].freeSlots(), "queue " + k + " got none of queue " + i + "'s");
                    }
                }
                release.countDown();
                assertEquals(n, awaitFreeSlots(qs[i], n));
                assertEquals(n, done.get());
            }
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(
                    IllegalArgumentException.class, () -> c.namespace().onQueue(4));
            assertTrue(e.getMessage().contains("0..3"), e.getMessage());
        }
    }

    /** A slot goes back to the free list just after its callback returns, so give the last ones a moment. */
    static int awaitFreeSlots(CommandQueue q, int expected) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (q.freeSlots() != expected && System.nanoTime() < end) {
            Thread.sleep(1);
        }
        return q.freeSlots();
    }

    static ByteBuffer block(int thread, int b, int version) {
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        for (int i = 0; i < 4096; i += 4) {
            buf.putInt(i, thread * 1_000_003 + b * 7919 + version * 31 + i);
        }
        return buf;
    }

    @Test
    void moreSubmittersThanSlotsWaitAndAllComplete() throws Exception {
        // one queue of 4 slots, 16 threads each keeping commands going: callers block for a slot, nothing is lost
        try (Controller c = Nvme.connect(target.uri("queues=1&depth=4"))) {
            assertEquals(4, c.ioQueueDepth());
            Namespace ns = c.namespace();
            int threads = 16;
            AtomicInteger completed = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                fs.add(pool.submit(() -> {
                    start.await();
                    List<CompletableFuture<Void>> mine = new ArrayList<>();
                    for (int i = 0; i < 50; i++) {
                        mine.add(ns.writeAsync(thread * 64 + (i % 64), 1, block(thread, i, 0))
                                .thenRun(completed::incrementAndGet));
                    }
                    CompletableFuture.allOf(mine.toArray(new CompletableFuture<?>[0]))
                            .get(30, TimeUnit.SECONDS);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertEquals(threads * 50, completed.get());
            assertEquals(4, awaitFreeSlots(c.ioQueues()[0], 4));
        }
    }

    @Test
    void tryFormsRejectWhenEverySlotIsInFlight() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=1&depth=2"))) {
            Namespace ns = c.namespace();
            CountDownLatch done = new CountDownLatch(64);
            AtomicInteger rejected = new AtomicInteger();
            AtomicInteger failures = new AtomicInteger();
            IoCallback cb = new IoCallback() {
                @Override
                public void completed(Object attachment) {
                    done.countDown();
                }

                @Override
                public void failed(NvmeException error, Object attachment) {
                    failures.incrementAndGet();
                    done.countDown();
                }
            };
            ByteBuffer buf = ByteBuffer.allocateDirect(64 * 4096);
            int submitted = 0;
            for (int i = 0; i < 64; i++) {
                ByteBuffer slice = buf.slice(i * 4096, 4096);
                while (!ns.tryWrite(i, 1, slice, cb, null)) {
                    rejected.incrementAndGet(); // never more than 2 in flight: the try form says so at once
                    Thread.onSpinWait();
                }
                submitted++;
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
            assertEquals(64, submitted);
            assertEquals(0, failures.get());
            assertTrue(rejected.get() > 0, "with 2 slots and 64 back-to-back writes some tries must be rejected");
            assertEquals(2, awaitFreeSlots(c.ioQueues()[0], 2));
        }
    }
}

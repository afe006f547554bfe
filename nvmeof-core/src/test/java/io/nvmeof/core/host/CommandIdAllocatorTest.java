package io.nvmeof.core.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class CommandIdAllocatorTest {
    @Test
    void everyCidOnceThenBackPressure() {
        CommandIdAllocator a = new CommandIdAllocator(32);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 32; i++) {
            int cid = a.tryAcquire();
            assertTrue(cid >= 0 && cid < 32, "in range: " + cid);
            assertTrue(seen.add(cid), "CID " + cid + " handed out twice");
        }
        assertEquals(CommandIdAllocator.NONE, a.tryAcquire(), "all held: refused at once");
        assertEquals(0, a.available());
        a.release(17);
        assertEquals(1, a.available());
        assertEquals(17, a.tryAcquire());
    }

    @Test
    void acquireWaitsAtMostTheTimeout() throws InterruptedException {
        CommandIdAllocator a = new CommandIdAllocator(2);
        a.tryAcquire();
        a.tryAcquire();
        long t0 = System.nanoTime();
        assertEquals(CommandIdAllocator.NONE, a.acquire(TimeUnit.MILLISECONDS.toNanos(100)));
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(waited >= 99 && waited < 5000, "waited " + waited + " ms");
    }

    @Test
    void aWaiterGetsTheReleasedCid() throws Exception {
        CommandIdAllocator a = new CommandIdAllocator(2);
        a.tryAcquire();
        int held = a.tryAcquire();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Integer> f = pool.submit(() -> a.acquire(TimeUnit.SECONDS.toNanos(30)));
            Thread.sleep(50); // let it park
            long t0 = System.nanoTime();
            a.release(held);
            assertEquals(held, f.get(10, TimeUnit.SECONDS));
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "woken, not timed out");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void closeWakesWaiters() throws Exception {
        CommandIdAllocator a = new CommandIdAllocator(1);
        a.tryAcquire();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<Integer>> fs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                fs.add(pool.submit(() -> a.acquire(TimeUnit.SECONDS.toNanos(30))));
            }
            Thread.sleep(50);
            a.close();
            for (Future<Integer> f : fs) {
                assertEquals(CommandIdAllocator.NONE, f.get(5, TimeUnit.SECONDS));
            }
            assertEquals(CommandIdAllocator.NONE, a.acquire(TimeUnit.SECONDS.toNanos(30)), "closed: no wait");
        } finally {
            pool.shutdownNow();
        }
    }

    /** A held CID (e.g. of a timed-out command awaiting its late answer) is never handed out, however busy. */
    @Test
    void aHeldCidIsNeverReused() {
        CommandIdAllocator a = new CommandIdAllocator(4);
        int timedOut = a.tryAcquire();
        for (int i = 0; i < 100_000; i++) {
            int cid = a.tryAcquire();
            assertNotEquals(timedOut, cid);
            assertNotEquals(CommandIdAllocator.NONE, cid);
            a.release(cid);
        }
        assertEquals(3, a.available());
        a.release(timedOut); // answered, or its queue closed: only now
        assertEquals(4, a.available());
    }

    /**
     * More threads than CIDs, half waiting and half trying: no CID is ever held twice (an owner array checks every
     * hand-out), nobody waits for ever, and every CID is back at the end.
     */
    @Test
    void manyThreadsNeverShareACid() throws Exception {
        int size = 4;
        int threads = 8;
        int rounds = 20_000;
        CommandIdAllocator a = new CommandIdAllocator(size);
        AtomicIntegerArray owner = new AtomicIntegerArray(size);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Integer>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t + 1;
                boolean waits = t % 2 == 0;
                fs.add(pool.submit(() -> {
                    start.await();
                    int got = 0;
                    for (int i = 0; i < rounds; i++) {
                        int cid = waits ? a.acquire(TimeUnit.SECONDS.toNanos(20)) : a.tryAcquire();
                        if (cid == CommandIdAllocator.NONE) {
                            if (waits) {
                                throw new AssertionError("a waiter timed out with " + size + " CIDs cycling");
                            }
                            Thread.onSpinWait();
                            continue;
                        }
                        if (!owner.compareAndSet(cid, 0, me)) {
                            throw new AssertionError("CID " + cid + " held by " + owner.get(cid) + " and " + me);
                        }
                        got++;
                        owner.set(cid, 0);
                        a.release(cid);
                    }
                    return got;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : fs) {
                total += f.get(50, TimeUnit.SECONDS);
            }
            assertTrue(total >= threads / 2 * rounds, "every waiter's round got a CID: " + total);
            assertEquals(size, a.available(), "every CID back");
        } finally {
            pool.shutdownNow();
        }
    }
}

package io.nvmeof.core.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class SubmissionListTest {
    private static final int KEEP_ALIVE = 0x18;

    /** Claims and offers {@code c}, as a submit from another thread does. */
    private static TestCommand queue(SubmissionList l, TestCommand c) {
        assertTrue(l.claim(c));
        l.offer(c.command().cid());
        return c;
    }

    @Test
    void aCidInFlightIsRefusedUntilReleased() {
        SubmissionList l = new SubmissionList(1, 8);
        TestCommand a = new TestCommand(KEEP_ALIVE, 5);
        l.claim(a);
        assertThrows(IllegalStateException.class, () -> l.claim(new TestCommand(KEEP_ALIVE, 5)), "in flight");
        assertThrows(IllegalArgumentException.class, () -> l.claim(new TestCommand(KEEP_ALIVE, 8)), "out of range");
        assertSame(a, l.command(5));
        // A command that timed out in the initiator is still the transport's until answered: still refused.
        assertThrows(IllegalStateException.class, () -> l.claim(new TestCommand(KEEP_ALIVE, 5)));
        assertSame(a, l.release(5));
        l.claim(new TestCommand(KEEP_ALIVE, 5));
    }

    @Test
    void drainSendsInSubmissionOrderAndOnlyTheFirstOfferWakes() {
        SubmissionList l = new SubmissionList(1, 8);
        List<Integer> sent = new ArrayList<>();
        boolean[] wakes = new boolean[4];
        int[] cids = {3, 0, 7, 1};
        for (int i = 0; i < cids.length; i++) {
            TestCommand c = new TestCommand(KEEP_ALIVE, cids[i]);
            l.claim(c);
            wakes[i] = l.offer(cids[i]);
        }
        assertTrue(wakes[0]);
        assertFalse(wakes[1] || wakes[2] || wakes[3], "the list was not empty: a drain is due already");
        assertTrue(l.hasQueued());
        assertEquals(4, l.drain(c -> sent.add(c.command().cid())));
        assertEquals(List.of(3, 0, 7, 1), sent);
        assertFalse(l.hasQueued());
        assertEquals(0, l.drain(c -> sent.add(-1)));
    }

    @Test
    void aSenderThatThrowsFailsOnlyThatCommand() {
        SubmissionList l = new SubmissionList(1, 8);
        TestCommand a = queue(l, new TestCommand(KEEP_ALIVE, 1));
        TestCommand b = queue(l, new TestCommand(KEEP_ALIVE, 2));
        List<TestCommand> sent = new ArrayList<>();
        l.drain(c -> {
            if (c == a) {
                throw new IllegalStateException("no buffer");
            }
            sent.add((TestCommand) c);
        });
        assertEquals(1, a.errors.get());
        assertEquals("no buffer", a.error.getMessage());
        assertEquals(List.of(b), sent);
        l.claim(new TestCommand(KEEP_ALIVE, 1)); // a's CID is free again
    }

    @Test
    void closeFailsQueuedAndInFlightCommandsOnce() {
        SubmissionList l = new SubmissionList(1, 8);
        TestCommand inFlight = queue(l, new TestCommand(KEEP_ALIVE, 1));
        TestCommand answered = queue(l, new TestCommand(KEEP_ALIVE, 3));
        l.drain(c -> {});
        l.release(3);
        TestCommand queued = queue(l, new TestCommand(KEEP_ALIVE, 2));
        IOException cause = new IOException("queue closed");
        l.close(cause);
        l.close(new IOException("again"));
        assertEquals(1, inFlight.errors.get());
        assertEquals(1, queued.errors.get());
        assertSame(cause, queued.error);
        assertEquals(0, answered.outcomes());
        assertEquals(0, l.drain(c -> {
            throw new AssertionError("nothing is sent after the close");
        }));
        assertThrows(IllegalStateException.class, () -> l.claim(new TestCommand(KEEP_ALIVE, 4)));
        assertEquals(1, inFlight.errors.get());
    }

    /**
     * Eight producer threads, each cycling eight CIDs of its own, against one consumer that sleeps (park without a
     * timeout) whenever the list is empty and is woken only when {@link SubmissionList#offer} says so: a lost wake-up
     * hangs the test; a lost, duplicated or reordered command fails it.
     */
    @Test
    void manySubmittersOneQueueThread() throws Exception {
        int producers = 8;
        int perProducer = 8;
        int rounds = 1_000;
        SubmissionList l = new SubmissionList(1, producers * perProducer);
        TestCommand[] cmds = new TestCommand[producers * perProducer];
        for (int cid = 0; cid < cmds.length; cid++) {
            cmds[cid] = new TestCommand(KEEP_ALIVE, cid);
        }
        long[] lastSeq = new long[producers];
        java.util.Arrays.fill(lastSeq, -1);
        AtomicLong sent = new AtomicLong();
        AtomicInteger orderErrors = new AtomicInteger();
        StopFlag stop = new StopFlag();
        SubmissionList.Sender sender = c -> {
            TestCommand t = (TestCommand) c;
            int p = t.command().cid() / perProducer;
            if (t.seq <= lastSeq[p]) {
                orderErrors.incrementAndGet();
            }
            lastSeq[p] = t.seq;
            sent.incrementAndGet();
            l.release(t.command().cid()); // answered at once
            t.onResponse(null);
        };
        Thread consumer = new Thread(() -> {
            while (!stop.value) {
                l.drain(sender);
                if (!l.hasQueued() && !stop.value) {
                    LockSupport.park(this);
                }
            }
        });
        consumer.start();
        ExecutorService pool = Executors.newFixedThreadPool(producers);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                int first = p * perProducer;
                fs.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < rounds * perProducer; i++) {
                        TestCommand c = cmds[first + i % perProducer];
                        int round = i / perProducer;
                        while (c.responses.get() < round) {
                            Thread.onSpinWait(); // this CID's previous round is still in flight
                        }
                        c.seq = i;
                        l.claim(c);
                        if (l.offer(c.command().cid())) {
                            LockSupport.unpark(consumer);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : fs) {
                f.get(100, TimeUnit.SECONDS);
            }
            long want = (long) producers * perProducer * rounds;
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (sent.get() < want && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            assertEquals(want, sent.get(), "every command sent once");
            assertEquals(0, orderErrors.get(), "each submitter's commands go out in its order");
            for (TestCommand c : cmds) {
                assertEquals(rounds, c.responses.get());
                assertEquals(0, c.errors.get());
            }
        } finally {
            stop.value = true;
            LockSupport.unpark(consumer);
            consumer.join(5000);
            pool.shutdownNow();
        }
    }

    /**
     * Submitters race with a close: every command whose claim returned gets exactly one outcome (answered, or failed
     * by the close, queued or in flight); every refused one gets none, and nobody waits for ever.
     */
    @Test
    void closeRacingWithSubmittersGivesEveryTakenCommandOneOutcome() throws Exception {
        for (int run = 0; run < 20; run++) {
            int producers = 4;
            int perProducer = 4;
            SubmissionList l = new SubmissionList(1, producers * perProducer);
            TestCommand[] cmds = new TestCommand[producers * perProducer];
            AtomicInteger[] accepted = new AtomicInteger[cmds.length];
            for (int cid = 0; cid < cmds.length; cid++) {
                cmds[cid] = new TestCommand(KEEP_ALIVE, cid);
                accepted[cid] = new AtomicInteger();
            }
            AtomicLong sent = new AtomicLong();
            int answerFirst = 200 + run * 50;
            SubmissionList.Sender sender = c -> {
                if (sent.incrementAndGet() <= answerFirst) {
                    l.release(c.command().cid());
                    c.onResponse(null);
                } // later ones stay in flight until the close
            };
            Thread consumer = new Thread(() -> {
                while (sent.get() < answerFirst + 5) {
                    l.drain(sender);
                    Thread.onSpinWait();
                }
                l.close(new IOException("closed"));
            });
            ExecutorService pool = Executors.newFixedThreadPool(producers);
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int p = 0; p < producers; p++) {
                    int first = p * perProducer;
                    fs.add(pool.submit(() -> {
                        for (int i = 0; ; i++) {
                            int cid = first + i % perProducer;
                            TestCommand c = cmds[cid];
                            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                            while (c.outcomes() < accepted[cid].get()) {
                                if (System.nanoTime() > end) {
                                    throw new AssertionError("CID " + cid + " never got its outcome");
                                }
                                Thread.onSpinWait();
                            }
                            boolean send;
                            try {
                                send = l.claim(c);
                            } catch (IllegalStateException closed) {
                                return null; // not taken: no outcome
                            }
                            accepted[cid].incrementAndGet();
                            if (send) {
                                l.offer(cid);
                            }
                        }
                    }));
                }
                consumer.start();
                for (Future<?> f : fs) {
                    f.get(60, TimeUnit.SECONDS);
                }
                consumer.join(10_000);
                for (int cid = 0; cid < cmds.length; cid++) {
                    assertEquals(accepted[cid].get(), cmds[cid].outcomes(), "run " + run + " CID " + cid);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static final class StopFlag {
        volatile boolean value;
    }
}

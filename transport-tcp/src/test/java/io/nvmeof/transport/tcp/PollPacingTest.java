package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.nvmeof.core.command.AdminOpcode;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Idle turns yield on every turn at depth and on every fourth at queue depth 1; both sides count their capsules. */
class PollPacingTest {
    private static final int KEEP_ALIVE = AdminOpcode.KEEP_ALIVE.code();

    @AfterEach
    void uninstall() {
        PollPacing.install(null);
    }

    /** The next idle turns' decisions: Y where the thread yields, '.' where it polls again at once. */
    private static String idleTurns(PollPacing p, int turns) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < turns; i++) {
            s.append(p.yieldOnIdleTurn() ? 'Y' : '.');
        }
        return s.toString();
    }

    private static void turn(PollPacing p, int capsules) {
        for (int i = 0; i < capsules; i++) {
            p.capsule();
        }
        p.turnEnded();
    }

    @Test
    void everyIdleTurnYieldsUntilCapsulesComeOneAtATime() {
        PollPacing p = new PollPacing();
        assertEquals("YYYYYYYY", idleTurns(p, 8), "no capsule yet");
        turn(p, 1);
        assertEquals("...Y...Y", idleTurns(p, 8), "one capsule per turn: a yield every fourth idle turn");
        turn(p, 1);
        assertEquals("...Y", idleTurns(p, 4), "the count starts again after each turn with capsules");
        turn(p, 3);
        assertEquals("YYYYYYYY", idleTurns(p, 8), "several: every idle turn yields");
        turn(p, 0);
        assertEquals("YYYY", idleTurns(p, 4), "a turn without capsules (part of a PDU) keeps the pace");
        turn(p, 1);
        turn(p, 0);
        assertEquals("...Y", idleTurns(p, 4), "and keeps the one-at-a-time pace too");
    }

    @Test
    void theTargetCountsEveryCommandOfARead() {
        PollPacing p = new PollPacing();
        PollPacing.install(p); // the test thread is the embedded channel's loop
        TargetHarness h = new TargetHarness();
        h.connectIc(0);
        h.feed(Bytes.capsule(Bytes.connectSqe(1, 0, 31, 0), Bytes.pattern(1024, 1), false, false));
        assertEquals(1, h.drainPdus().size());
        p.turnEnded();
        h.feed(Bytes.capsule(Bytes.sqe(KEEP_ALIVE, 2, 0x5A, 0), null, false, false));
        p.turnEnded();
        assertEquals("...Y", idleTurns(p, 4), "one command in the turn");
        h.feed(Bytes.concat(
                Bytes.capsule(Bytes.sqe(KEEP_ALIVE, 3, 0x5A, 0), null, false, false),
                Bytes.capsule(Bytes.sqe(KEEP_ALIVE, 4, 0x5A, 0), null, false, false)));
        p.turnEnded();
        assertEquals("YYYY", idleTurns(p, 4), "two commands in the turn");
        assertEquals(3, h.drainPdus().size());
        h.assertClean();
    }

    @Test
    void theHostCountsEveryCompletion() {
        PollPacing p = new PollPacing();
        PollPacing.install(p);
        HostHarness h = new HostHarness(false, false).connect(131072);
        TestCommand one = new TestCommand(KEEP_ALIVE, 1);
        TestCommand two = new TestCommand(KEEP_ALIVE, 2);
        h.queue.submit(one);
        h.queue.submit(two);
        assertEquals(2, h.drainPdus().size());
        p.turnEnded(); // the ICResp is not a capsule
        assertEquals("YYYY", idleTurns(p, 4));
        h.feed(h.capsuleResp(1, 0, 0));
        p.turnEnded();
        assertEquals("...Y", idleTurns(p, 4), "one completion in the turn");
        h.queue.submit(one.reset());
        h.drainPdus();
        h.feed(Bytes.concat(h.capsuleResp(1, 0, 0), h.capsuleResp(2, 0, 0)));
        p.turnEnded();
        assertEquals("YYYY", idleTurns(p, 4), "two completions in the turn");
        h.queue.close();
        h.assertClean();
    }

    @Test
    void aHandlerGetsItsLoopThreadsPacingOnlyOnThatThread() throws Exception {
        EventLoop loop = new DefaultEventLoop();
        try {
            PollPacing none = loop.submit(() -> PollPacing.of(loop)).get();
            PollPacing installed = loop.submit(() -> {
                        PollPacing p = new PollPacing();
                        PollPacing.install(p);
                        return p;
                    })
                    .get();
            assertNotSame(none, installed, "a loop that does not poll: the handler's own");
            assertSame(installed, loop.submit(() -> PollPacing.of(loop)).get(), "on the loop: the loop's");
            assertNotSame(installed, PollPacing.of(loop), "added from another thread: not the loop's");
            loop.submit(() -> PollPacing.install(null)).get();
        } finally {
            loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }
}

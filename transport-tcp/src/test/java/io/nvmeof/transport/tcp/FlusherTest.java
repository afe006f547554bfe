package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** When a {@link Flusher} calls {@code flush()}: counted by an outbound handler in front of its context. */
class FlusherTest {
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private int flushes;
    private Flusher flusher;

    @BeforeEach
    void setUp() {
        channel.pipeline().addLast(new ChannelOutboundHandlerAdapter() {
            @Override
            public void flush(ChannelHandlerContext ctx) {
                flushes++;
                ctx.flush();
            }
        });
        channel.pipeline().addLast("handler", new ChannelInboundHandlerAdapter());
        flusher = new Flusher(channel.pipeline().context("handler"));
    }

    @Test
    void outsideAReadManyRequestsAreOneFlushTaskPerEventLoopTurn() {
        flusher.flushSoon();
        flusher.flushSoon();
        flusher.flushSoon();
        assertEquals(0, flushes, "the task has not run yet");
        channel.runPendingTasks();
        assertEquals(1, flushes);

        flusher.flushSoon();
        channel.runPendingTasks();
        assertEquals(2, flushes, "a later turn gets its own flush");
    }

    @Test
    void duringAReadFlushesWaitForTheEndOfEachSocketRead() {
        flusher.readStarted();
        flusher.flushSoon();
        flusher.flushNow();
        channel.runPendingTasks();
        assertEquals(0, flushes, "nothing goes out in the middle of a socket read");

        flusher.endOfSocketRead();
        assertEquals(1, flushes);
        flusher.endOfSocketRead();
        assertEquals(1, flushes, "a socket read that produced nothing is not flushed");

        flusher.flushSoon();
        flusher.readComplete();
        assertEquals(2, flushes, "the end of the read burst flushes what is left");
        flusher.readComplete();
        assertEquals(2, flushes);
    }

    @Test
    void afterTheReadBurstFlushNowFlushesAtOnce() {
        flusher.readStarted();
        flusher.readComplete();
        flusher.flushNow();
        assertEquals(1, flushes);
    }

    @Test
    void aFlushTaskQueuedBeforeStopDoesNothing() {
        flusher.flushSoon();
        flusher.stop();
        channel.runPendingTasks();
        assertEquals(0, flushes);
    }
}

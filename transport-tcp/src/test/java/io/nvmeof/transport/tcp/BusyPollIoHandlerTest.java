package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;
import io.nvmeof.core.spi.IdlePolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The polling window: non-blocking polls after an event, then back to sleeping; which loops get which window. */
class BusyPollIoHandlerTest {
    /** Records whether each turn was allowed to block and returns the scripted number of events. */
    private static final class Recorder implements IoHandler {
        final List<Boolean> canBlock = new ArrayList<>();
        int events;

        @Override
        public int run(IoHandlerContext context) {
            canBlock.add(context.canBlock());
            return events;
        }

        @Override
        public void wakeup() {}

        @Override
        public IoRegistration register(IoHandle handle) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isCompatible(Class<? extends IoHandle> handleType) {
            return true;
        }
    }

    private static final IoHandlerContext BLOCKING = new IoHandlerContext() {
        @Override
        public boolean canBlock() {
            return true;
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return TimeUnit.SECONDS.toNanos(1);
        }

        @Override
        public long deadlineNanos() {
            return -1;
        }
    };

    /** Long enough that three turns fit in it on a loaded CI machine; the test sleeps twice that to pass it. */
    private static final long WINDOW_MILLIS = 500;

    @Test
    void pollsWithoutBlockingWithinTheWindowThenSleepsUntilTheNextEvent() throws Exception {
        Recorder r = new Recorder();
        BusyPollIoHandler h = (BusyPollIoHandler)
                BusyPollIoHandler.factory(executor -> r, TimeUnit.MILLISECONDS.toNanos(WINDOW_MILLIS))
                        .newHandler(null);
        r.events = 1;
        h.run(BLOCKING);
        r.events = 0;
        h.run(BLOCKING);
        h.run(BLOCKING);
        assertEquals(List.of(false, false, false), r.canBlock, "polls only, inside the window");
        assertFalse(h.sleeping());
        Thread.sleep(2 * WINDOW_MILLIS);
        h.run(BLOCKING); // the idle turn that finds the window over
        assertTrue(h.sleeping());
        h.run(BLOCKING);
        assertTrue(r.canBlock.get(r.canBlock.size() - 1), "sleeps in the kernel once the window has passed");
        r.events = 2;
        h.run(BLOCKING); // woken by an event: polls again
        r.events = 0;
        h.run(BLOCKING);
        assertFalse(h.sleeping());
        assertFalse(r.canBlock.get(r.canBlock.size() - 1));
    }

    @Test
    void queueLoopsPollAcceptLoopsDoNot() {
        assertTrue(IdlePolicy.of(false).spinNanos() > 0, "the default mode polls briefly (io.nvmeof.spinMicros)");
        ThreadAwareExecutor executor = new ThreadAwareExecutor() {
            @Override
            public boolean isExecutorThread(Thread thread) {
                return thread == Thread.currentThread();
            }

            @Override
            public void execute(Runnable command) {
                command.run();
            }
        };
        List<IoHandler> handlers = List.of(
                IoEngine.NIO.factory(false).newHandler(executor),
                IoEngine.NIO.factory(true).newHandler(executor),
                IoEngine.NIO.sleepingFactory().newHandler(executor));
        try {
            assertInstanceOf(BusyPollIoHandler.class, handlers.get(0));
            assertInstanceOf(BusyPollIoHandler.class, handlers.get(1));
            assertFalse(handlers.get(2) instanceof BusyPollIoHandler);
        } finally {
            handlers.forEach(IoHandler::destroy);
        }
    }
}

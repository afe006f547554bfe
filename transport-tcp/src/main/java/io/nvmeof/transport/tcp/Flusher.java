package io.nvmeof.transport.tcp;

import io.netty.channel.ChannelHandlerContext;

/**
 * When an NVMe/TCP handler flushes the PDUs it has written: one per connection, owned by its event loop, shared by
 * nothing else. The target and host handlers write PDUs without flushing and ask this for a flush; it turns many
 * requests into few {@code flush()} calls, so a burst of completions or commands leaves in few socket writes:
 * <ul>
 *   <li>while PDUs from the socket are being handled ({@link #readStarted}), the flush waits for the end of that
 *       socket read ({@link #endOfSocketRead}, from {@link ReadBoundary}) or of the read burst
 *       ({@link #readComplete}, from {@code channelReadComplete}), whichever comes first;</li>
 *   <li>otherwise {@link #flushSoon} runs one flush task per event-loop turn, and {@link #flushNow} flushes at
 *       once.</li>
 * </ul>
 */
final class Flusher {
    private final ChannelHandlerContext ctx;
    private final Runnable flushTask = this::runFlushTask;

    private boolean inRead;
    private boolean pending;
    private boolean scheduled;
    private boolean stopped;

    /** {@code ctx}: the handler's context, whose {@code flush()} this calls. */
    Flusher(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** A PDU read from the socket is being handled: flushes asked for now wait for the end of the socket read. */
    void readStarted() {
        inRead = true;
    }

    /** The end of one socket read ({@link ReadBoundary#END_OF_READ}): what it produced goes out before the next. */
    void endOfSocketRead() {
        flushIfPending();
    }

    /** The end of the read burst ({@code channelReadComplete}). */
    void readComplete() {
        inRead = false;
        flushIfPending();
    }

    /** PDUs were written: flushed at the end of the socket read, or by one task later in this event-loop turn. */
    void flushSoon() {
        if (inRead) {
            pending = true;
        } else if (!scheduled) {
            scheduled = true;
            ctx.executor().execute(flushTask);
        }
    }

    /** PDUs were written: flushed at the end of the socket read, or now. */
    void flushNow() {
        if (inRead) {
            pending = true;
        } else {
            ctx.flush();
        }
    }

    /** The connection is closing: a flush task already queued does nothing. */
    void stop() {
        stopped = true;
    }

    private void flushIfPending() {
        if (pending) {
            pending = false;
            ctx.flush();
        }
    }

    private void runFlushTask() {
        scheduled = false;
        if (!stopped) {
            ctx.flush();
        }
    }
}

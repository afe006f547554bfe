package io.nvmeof.core.util;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A log that writes at most {@code linesPerSecond} lines per one-second window and counts the rest, so a host that
 * repeats a refused command cannot flood the log. The next line written after a window with suppressed lines says
 * how many were dropped. One instance per connection or controller; any thread may call {@link #log}.
 *
 * <p>Lock-free and cheap when it does not log: one volatile read, one atomic increment. The message is built only
 * when the line is written ({@link Supplier}), so callers on a hot path allocate nothing while suppressed except the
 * capturing lambda they pass, which the refusal paths (cold by definition) may afford.
 */
public final class RateLimitedLog {
    private static final long WINDOW_NANOS = 1_000_000_000L;

    private final Logger logger;
    private final int linesPerSecond;
    private final AtomicLong windowStart = new AtomicLong(System.nanoTime());
    private final AtomicInteger inWindow = new AtomicInteger();
    private final AtomicInteger suppressed = new AtomicInteger();

    public RateLimitedLog(Logger logger, int linesPerSecond) {
        if (linesPerSecond < 1) {
            throw new IllegalArgumentException("linesPerSecond " + linesPerSecond);
        }
        this.logger = logger;
        this.linesPerSecond = linesPerSecond;
    }

    /** Writes the line at {@code level} unless this window's lines are used up; then it only counts it. */
    public void log(Level level, Supplier<String> message) {
        if (!logger.isLoggable(level)) {
            return;
        }
        long now = System.nanoTime();
        long start = windowStart.get();
        if (now - start >= WINDOW_NANOS && windowStart.compareAndSet(start, now)) {
            inWindow.set(0); // a racing caller may still count against the old window: harmless
        }
        if (inWindow.incrementAndGet() > linesPerSecond) {
            suppressed.incrementAndGet();
            return;
        }
        int dropped = suppressed.getAndSet(0);
        String line = message.get();
        logger.log(level, dropped == 0 ? line : line + " (" + dropped + " similar line(s) suppressed before this one)");
    }

    /** Lines not written since the last one that was. */
    public int suppressed() {
        return suppressed.get();
    }
}

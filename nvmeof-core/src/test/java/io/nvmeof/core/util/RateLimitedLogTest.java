package io.nvmeof.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class RateLimitedLogTest {
    /** A logger that keeps its lines. */
    private static final class Lines implements Logger {
        final List<String> lines = new ArrayList<>();

        @Override
        public String getName() {
            return "test";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(format);
        }
    }

    @Test
    void writesAtMostNLinesAWindowAndBuildsNoMessageWhenSuppressed() throws Exception {
        Lines logger = new Lines();
        RateLimitedLog log = new RateLimitedLog(logger, 3);
        int[] built = {0};
        Supplier<String> message = () -> "line " + ++built[0];
        for (int i = 0; i < 10; i++) {
            log.log(Level.WARNING, message);
        }
        // 3 a window (a window may have ended during the loop on a very slow machine: then 6 at most).
        assertTrue(logger.lines.size() <= 6 && logger.lines.size() < 10, logger.lines.toString());
        assertEquals(logger.lines.size(), built[0], "suppressed lines are never built");
        int suppressed = log.suppressed();
        assertEquals(10 - logger.lines.size(), suppressed);
        Thread.sleep(1100);
        log.log(Level.WARNING, message);
        String last = logger.lines.get(logger.lines.size() - 1);
        assertTrue(last.endsWith("(" + suppressed + " similar line(s) suppressed before this one)"), last);
        assertEquals(0, log.suppressed());
    }
}

package io.nvmeof.target.interop;

import io.nvmeof.target.e2e.E2eTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What the target in the test's JVM logged at WARNING or above while a peer-VM host used it. Opened before the target
 * starts (it hangs a handler on the root logger), closed in the test's {@code finally}; {@link #errors()} prints every
 * record it saw and returns the ones that are bugs ({@link E2eTarget#isError}), for the test to assert there are none.
 */
final class TargetLogCapture extends Handler implements AutoCloseable {
    private final List<LogRecord> records = new ArrayList<>();

    TargetLogCapture() {
        Logger.getLogger("").addHandler(this);
    }

    @Override
    public synchronized void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
            records.add(r);
        }
    }

    /** Prints each captured record ("target log: ...") and returns the errors among them, with their exceptions. */
    synchronized List<String> errors() {
        List<String> errors = new ArrayList<>();
        for (LogRecord p : records) {
            String msg = p.getLevel() + " " + p.getLoggerName() + ": " + p.getMessage();
            System.out.println("target log: " + msg);
            if (E2eTarget.isError(p)) {
                errors.add(msg + (p.getThrown() != null ? " / " + p.getThrown() : ""));
            }
        }
        return errors;
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        Logger.getLogger("").removeHandler(this);
    }
}

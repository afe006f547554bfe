package io.nvmeof.perf;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * How long this JVM's JIT compilers have compiled so far. The perf tool reports the part that fell inside the measured
 * window: a Java initiator's compiler threads share the cores it runs on, and while they still compile the I/O path
 * they take the initiator's core away from it for milliseconds at a time (perf/README.md, "the QD128 tail").
 */
final class JitTime {
    private JitTime() {}

    /** Milliseconds spent compiling since the JVM started ({@link CompilationMXBean}); -1 if the JVM does not say. */
    static long millis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return -1;
        }
        return jit.getTotalCompilationTime();
    }

    /**
     * Whether {@code jitMillis} of compiling is more than 1 % of a window of {@code windowNanos}: enough to say that the
     * JIT was still warming up, and that a longer ramp would leave it out.
     */
    static boolean significant(long jitMillis, long windowNanos) {
        return jitMillis * 1_000_000L * 100 > windowNanos;
    }

    /** Milliseconds spent compiling between two readings of {@link #millis}; -1 if either is unknown. */
    static long between(long before, long after) {
        return before < 0 || after < 0 ? -1 : after - before;
    }
}

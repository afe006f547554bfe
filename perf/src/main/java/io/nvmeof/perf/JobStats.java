package io.nvmeof.perf;

/**
 * Where one job records its completed I/Os: the measured window's statistics, which are reported, and the ramp's,
 * which are not. A timed job records the I/Os it issued during the ramp as well, through the same code, so that the
 * JIT has compiled that code before the window opens (perf/README.md, "the JIT at the start of the window"). The ramp
 * has two halves with statistics of their own, so that the code has met fresh statistics once before the window's
 * (their first values take branches a steady stream never takes, such as HdrHistogram's new-maximum branch; met first
 * at the window's opening, each was a C2 trap that threw away the compiled completion path there). Written only by
 * the thread that records the job's I/Os, except {@link #openWindow}, which the runner calls before the job sees the
 * window open, and {@link #startRamp}, which the job's thread calls before its first I/O.
 */
final class JobStats {
    /** Reads of the measured window. */
    final DirStats read = new DirStats();
    /** Writes of the measured window. */
    final DirStats write = new DirStats();
    /** Reads issued during the second half of the ramp: never reported. */
    final DirStats rampRead = new DirStats();
    /** Writes issued during the second half of the ramp: never reported. */
    final DirStats rampWrite = new DirStats();
    /** Reads issued during the first half of the ramp: never reported. */
    final DirStats earlyRampRead = new DirStats();
    /** Writes issued during the first half of the ramp: never reported. */
    final DirStats earlyRampWrite = new DirStats();
    /** Index 0: the measured window's statistics; 1: the ramp's second half; 2: its first half. */
    private final DirStats[] readSinks = {read, rampRead, earlyRampRead};

    private final DirStats[] writeSinks = {write, rampWrite, earlyRampWrite};

    /** Middle of the ramp (System.nanoTime), set by {@link #startRamp}. */
    private long rampMiddle;

    /** The ramp runs from {@code nowNanos}, the job's start, to {@code rampEndNanos} (timed runs). */
    void startRamp(long nowNanos, long rampEndNanos) {
        rampMiddle = nowNanos + Math.max(0, rampEndNanos - nowNanos) / 2;
        earlyRampRead.startSampling(nowNanos, 0);
        earlyRampWrite.startSampling(nowNanos, 0);
        rampRead.startSampling(rampMiddle, 0);
        rampWrite.startSampling(rampMiddle, 0);
    }

    /**
     * The window's statistics sample from {@code startNanos}. Called before the job can see the window open (the
     * job learns it from a volatile field written after this), so no I/O is recorded into them before.
     */
    void openWindow(long startNanos, int expectedSamples) {
        read.startSampling(startNanos, expectedSamples);
        write.startSampling(startNanos, expectedSamples);
    }

    /**
     * The statistics of an I/O issued at {@code t0}, given the window's start ({@code measureStart}; far ahead until
     * it opens): the number of these two times that {@code t0} comes before, the ramp's middle and the window's start.
     * An index, not a branch: a branch that goes one way for the whole ramp is compiled by C2 as a trap, and the
     * window's first I/O would throw away the compiled completion path, which is inlined into the transport's read
     * loop.
     */
    DirStats sink(boolean isRead, long t0, long measureStart) {
        int phase = (int) ((t0 - measureStart) >>> 63) + (int) ((t0 - rampMiddle) >>> 63);
        return (isRead ? readSinks : writeSinks)[phase];
    }

    /** The statistics of a verify run's I/Os: it has no ramp, every I/O counts. */
    DirStats window(boolean isRead) {
        return isRead ? read : write;
    }
}

package io.nvmeof.perf;

/**
 * Where one job records its completed I/Os: the measured window's statistics, which are reported, and the ramp's,
 * which are not. A timed job records the I/Os it issued during the ramp as well, through the same code, so that the
 * JIT has compiled that code before the window opens (perf/README.md, "the JIT at the start of the window"). Written
 * only by the thread that records the job's I/Os, except {@link #openWindow}, which the runner calls before the job
 * sees the window open.
 */
final class JobStats {
    /** Reads of the measured window. */
    final DirStats read = new DirStats();
    /** Writes of the measured window. */
    final DirStats write = new DirStats();
    /** Reads issued during the ramp: never reported. */
    final DirStats rampRead = new DirStats();
    /** Writes issued during the ramp: never reported. */
    final DirStats rampWrite = new DirStats();
    /** Index 0: the measured window's statistics; 1: the ramp's. */
    private final DirStats[] readSinks = {read, rampRead};

    private final DirStats[] writeSinks = {write, rampWrite};

    /** The ramp's statistics sample from {@code nowNanos}, the job's start (timed runs). */
    void startRamp(long nowNanos) {
        rampRead.startSampling(nowNanos, 0);
        rampWrite.startSampling(nowNanos, 0);
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
     * The statistics an I/O goes to: {@code ramp} is 1 for an I/O issued during the ramp, 0 for one of the window. An
     * index, not a branch: a branch that goes one way for the whole ramp is compiled by C2 as a trap, and the window's
     * first I/O would throw away the compiled completion path, which is inlined into the transport's read loop.
     */
    DirStats sink(boolean isRead, int ramp) {
        return (isRead ? readSinks : writeSinks)[ramp];
    }
}

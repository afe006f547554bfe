package io.nvmeof.perf;

/**
 * The idle phase of a run ({@code --idle_seconds}): every controller and I/O queue connected, no I/O, for
 * {@code windowNanos}. Keep Alive and whatever else the two sides do on their own is all there is.
 *
 * @param controllers   controllers connected
 * @param queues        I/O queues connected (over all controllers)
 * @param windowNanos   the idle window as measured
 * @param initiatorCpu  this process's CPU over the window
 * @param targetCpu     the target's CPU over the window (its log page 0xC0), or null when unknown
 * @param targetUnknown why the target's CPU is unknown, or null
 */
public record IdleResult(
        int controllers,
        int queues,
        long windowNanos,
        CpuSample initiatorCpu,
        CpuSample targetCpu,
        String targetUnknown) {

    /** The initiator's CPU over the window as a percentage of one core. */
    public double initiatorPctOfCore() {
        return 100.0 * initiatorCpu.totalNanos() / Math.max(1, windowNanos);
    }

    /** The target's CPU over the window as a percentage of one core; NaN when unknown. */
    public double targetPctOfCore() {
        return targetCpu == null ? Double.NaN : 100.0 * targetCpu.totalNanos() / Math.max(1, windowNanos);
    }
}

package io.nvmeof.perf;

import java.util.List;

/**
 * The outcome of one workload over one setup.
 *
 * @param jobs          per job, in order
 * @param total         all jobs together (fio's group)
 * @param initiatorCpu  this process's CPU over the measured window
 * @param initiatorJitMillis time this JVM's JIT compilers spent compiling during the window (-1: unknown); part of
 *                      initiatorCpu, and a sign that the ramp was too short for the JIT to finish
 * @param targetCpu     the target's CPU over the window (null: unknown, see targetUnknown)
 * @param targetCommands commands the target completed in the window (-1: unknown)
 * @param targetUnknown why the target's CPU is unknown (null if known)
 * @param windowNanos   the measured window
 * @param startMillis   wall-clock start (epoch ms)
 * @param failure       what failed (a verify mismatch names the LBA), or null
 * @param reconnects    times a controller of the run (or a path of a multipath namespace) reconnected after
 *                      losing its connection
 * @param failovers     commands a multipath namespace (a target URI with several addresses) sent again after a
 *                      path error; 0 without multipath
 * @param topology      the controllers and I/O queues of the run (one job per queue)
 * @param idle          the idle phase before the I/O ({@code --idle_seconds}), or null if there was none
 */
public record RunResult(
        Workload workload,
        Setup setup,
        String targetUri,
        boolean embeddedTarget,
        List<JobResult> jobs,
        JobResult total,
        CpuSample initiatorCpu,
        long initiatorJitMillis,
        CpuSample targetCpu,
        long targetCommands,
        String targetUnknown,
        long windowNanos,
        long startMillis,
        String failure,
        int blockSize,
        int targetCpus,
        long reconnects,
        long failovers,
        Topology topology,
        IdleResult idle) {

    public record JobResult(String name, int jobs, DirStats read, DirStats write) {
        public long ios() {
            return read.ios + write.ios;
        }
    }

    public long ios() {
        return total.ios();
    }

    /** Jobs (= I/O queues) that completed at least one I/O counted in the window. */
    public int queuesWithIo() {
        int n = 0;
        for (JobResult j : jobs) {
            if (j.ios() > 0) {
                n++;
            }
        }
        return n;
    }

    public double iops() {
        return total.read().iops() + total.write().iops();
    }

    /** Initiator CPU microseconds per I/O (process CPU over the window / I/Os completed in it). */
    public double initiatorCpuPerIo() {
        return ios() == 0 ? Double.NaN : initiatorCpu.totalNanos() / 1000.0 / ios();
    }

    /** Target CPU microseconds per I/O; NaN when unknown. */
    public double targetCpuPerIo() {
        return targetCpu == null || ios() == 0 ? Double.NaN : targetCpu.totalNanos() / 1000.0 / ios();
    }

    /** Completion latency percentile over both directions, in ns. */
    public long clatPercentile(double p) {
        org.HdrHistogram.Histogram h = total.read().clat.copy();
        h.add(total.write().clat);
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(p);
    }
}

package io.nvmeof.perf;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process's CPU use at one instant: user and system time (clock-tick resolution, 10 ms) and the precise total (ns),
 * with the monotonic time it was taken at. The initiator samples itself; the target's samples come from its vendor
 * log page ({@link TargetStats}), with the same meaning.
 */
public record CpuSample(long userNanos, long systemNanos, long totalNanos, long clockNanos) {
    /** USER_HZ on Linux: /proc/self/stat counts in ticks of 10 ms. */
    static final long TICK_NANOS = 10_000_000L;

    /** This process now. */
    public static CpuSample self() {
        long user = 0;
        long sys = 0;
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            user = Long.parseLong(f[11]) * TICK_NANOS;
            sys = Long.parseLong(f[12]) * TICK_NANOS;
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux: user/system split unknown, total still known
        }
        long total = user + sys;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long t = os.getProcessCpuTime();
            if (t > 0) {
                total = t;
            }
        }
        return new CpuSample(user, sys, total, System.nanoTime());
    }

    /** The CPU used between {@code before} and this sample. */
    public CpuSample minus(CpuSample before) {
        return new CpuSample(
                userNanos - before.userNanos,
                systemNanos - before.systemNanos,
                totalNanos - before.totalNanos,
                clockNanos - before.clockNanos);
    }
}

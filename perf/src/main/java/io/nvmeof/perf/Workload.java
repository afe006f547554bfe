package io.nvmeof.perf;

import java.util.Locale;

/**
 * One workload point, fio's job options.
 *
 * @param name        fio's {@code --name}: the job name
 * @param rw          read, write, randread, randwrite, rw (sequential mix), randrw
 * @param rwmixread   percentage of reads in rw/randrw
 * @param bs          bytes per I/O
 * @param iodepth     I/Os in flight per job
 * @param numjobs     jobs: each one thread and one I/O queue (by default each its own controller; see {@link Topology})
 * @param runtimeNanos measured time
 * @param rampNanos   time before measuring (I/O runs, nothing is recorded)
 * @param size        bytes of the region each job works in (0: the namespace from offset to its end)
 * @param offset      first byte of the region
 * @param verify      crc32c verification: every written block carries a header and a CRC, read back and checked
 * @param percentiles the clat percentiles to report
 * @param rateIops    IOPS cap per job (0: none)
 * @param seed        random seed (offsets, mix, data)
 */
public record Workload(
        String name,
        String rw,
        int rwmixread,
        int bs,
        int iodepth,
        int numjobs,
        long runtimeNanos,
        long rampNanos,
        long size,
        long offset,
        boolean verify,
        double[] percentiles,
        long rateIops,
        long seed) {
    public static final double[] FIO_PERCENTILES = {
        1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99
    };
    public static final int MAX_IODEPTH = 1023;
    public static final int MAX_NUMJOBS = 64;

    public Workload {
        rw = rw.toLowerCase(Locale.ROOT);
        switch (rw) {
            case "read", "write", "randread", "randwrite", "rw", "randrw", "readwrite" -> {}
            default ->
                throw new IllegalArgumentException(
                        "invalid value '" + rw + "' for --rw: expected read, write, randread, randwrite, rw or randrw");
        }
        if ("readwrite".equals(rw)) {
            rw = "rw";
        }
        if (verify && !hasWrites(rw)) {
            throw new IllegalArgumentException(
                    "--verify needs a workload that writes (write, randwrite, rw or randrw): "
                            + "it writes blocks with a CRC32C header and checks them when they are read back");
        }
    }

    static boolean hasWrites(String rw) {
        return !rw.equals("read") && !rw.equals("randread");
    }

    public boolean random() {
        return rw.startsWith("rand");
    }

    /** Percentage of reads: 100 for read workloads, 0 for write workloads, rwmixread for mixes. */
    public int readPercent() {
        return switch (rw) {
            case "read", "randread" -> 100;
            case "write", "randwrite" -> 0;
            default -> rwmixread;
        };
    }

    public boolean reads() {
        return readPercent() > 0 || verify;
    }

    public boolean writes() {
        return readPercent() < 100;
    }

    /** A short label for tables: "randread 4k qd32". */
    public String label() {
        return rw + " " + Units.shortSize(bs) + " qd" + iodepth + (numjobs > 1 ? " x" + numjobs : "")
                + (rw.equals("rw") || rw.equals("randrw") ? " " + rwmixread + "%r" : "");
    }

    public Workload withPoint(int newBs, int newIodepth) {
        return new Workload(
                name,
                rw,
                rwmixread,
                newBs,
                newIodepth,
                numjobs,
                runtimeNanos,
                rampNanos,
                size,
                offset,
                verify,
                percentiles,
                rateIops,
                seed);
    }

    public Workload withJobs(int newNumjobs) {
        return new Workload(
                name,
                rw,
                rwmixread,
                bs,
                iodepth,
                newNumjobs,
                runtimeNanos,
                rampNanos,
                size,
                offset,
                verify,
                percentiles,
                rateIops,
                seed);
    }

    public Workload withRw(String newRw) {
        return new Workload(
                name,
                newRw,
                rwmixread,
                bs,
                iodepth,
                numjobs,
                runtimeNanos,
                rampNanos,
                size,
                offset,
                verify,
                percentiles,
                rateIops,
                seed);
    }
}

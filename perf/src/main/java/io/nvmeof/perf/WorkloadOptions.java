package io.nvmeof.perf;

import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The fio options both commands share, kept as the strings typed so every bad value gets one clear message (exit 2).
 * fio spellings: {@code --bs=4k} or {@code --bs 4k}; boolean flags also as {@code --time_based=1}.
 */
final class WorkloadOptions {
    @Option(
            names = "--target",
            paramLabel = "URI",
            description = "NVMe-oF target, e.g. nvme+tcp://192.0.2.10:4420/"
                    + "nqn.2024-01.io.nvmeof:disk1 (any target: ours, Linux nvmet, SPDK). Without it a RAM-backed target of ours "
                    + "is started in a separate process on 127.0.0.1 and stopped afterwards. The URI's reconnect options "
                    + "apply (e.g. ?ctrl_loss_tmo=30&reconnect_delay=1): a controller that comes back is counted in "
                    + "the report (reconnects=N); one lost for good ends the run at once (exit 1).")
    String target;

    @Option(names = "--name", paramLabel = "NAME", description = "Job name (default ${DEFAULT-VALUE}).")
    String name = "job";

    @Option(names = "--rwmixread", paramLabel = "PCT", description = "Percentage of reads in rw/randrw (default 50).")
    String rwmixread;

    @Option(names = "--rwmixwrite", paramLabel = "PCT", description = "Percentage of writes in rw/randrw.")
    String rwmixwrite;

    @Option(
            names = "--numjobs",
            paramLabel = "N",
            description = "Jobs: each its own thread, connection and I/O queue " + "(default 1).")
    String numjobs = "1";

    @Option(
            names = "--ramp_time",
            paramLabel = "TIME",
            description = "Run this long before measuring (fio: seconds " + "unless suffixed: 500ms, 2s, 1m).")
    String rampTime;

    @Option(names = "--runtime", paramLabel = "TIME", description = "Measure this long (seconds unless suffixed).")
    String runtime;

    @Option(
            names = "--size",
            paramLabel = "SIZE",
            description = "Bytes of the region the jobs use (4k, 1g, ...; "
                    + "default: the namespace from --offset; 1g for the target started here).")
    String size;

    @Option(names = "--offset", paramLabel = "SIZE", description = "First byte of the region (default 0).")
    String offset = "0";

    @Option(
            names = "--percentile_list",
            paramLabel = "P:P:...",
            description =
                    "Completion latency percentiles " + "to report, ':'-separated, at most 20 (default fio's list).")
    String percentileList;

    @Option(names = "--rate_iops", paramLabel = "N", description = "Cap each job at N IOPS.")
    String rateIops;

    @Option(names = "--randseed", paramLabel = "N", description = "Seed for offsets, read/write mix and data.")
    String randseed = "12345";

    @Option(
            names = "--time_based",
            arity = "0..1",
            fallbackValue = "1",
            paramLabel = "0|1",
            description = "Accepted for fio compatibility: runs are always time based.")
    String timeBased;

    @Option(
            names = "--direct",
            arity = "0..1",
            fallbackValue = "1",
            paramLabel = "1",
            description = "Accepted for fio compatibility: NVMe-oF I/O is always direct.")
    String direct;

    @Option(
            names = "--group_reporting",
            arity = "0..1",
            fallbackValue = "1",
            paramLabel = "0|1",
            description = "Report all jobs as one.")
    String groupReporting;

    @Option(
            names = "--hipri",
            arity = "0..1",
            fallbackValue = "1",
            paramLabel = "0|1",
            description = "Busy-poll completions (the -hipri variant of the setup(s)).")
    String hipri;

    @Option(names = "--output-format", paramLabel = "FORMAT", description = "normal (default) or json.")
    String outputFormat = "normal";

    @Option(names = "--output", paramLabel = "FILE", description = "Write the report to FILE instead of stdout.")
    String output;

    static boolean flag(String option, String value) {
        if (value == null) {
            return false;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "1", "true", "yes", "on" -> true;
            case "0", "false", "no", "off" -> false;
            default -> throw Units.bad(option, value, "0 or 1");
        };
    }

    void checkFixed() {
        flag("time_based", timeBased);
        if (direct != null && !flag("direct", direct)) {
            throw new IllegalArgumentException("--direct=0 is not possible: NVMe-oF I/O is always direct");
        }
        if (!outputFormat.equals("normal") && !outputFormat.equals("json")) {
            throw Units.bad("output-format", outputFormat, "normal or json");
        }
    }

    boolean json() {
        return outputFormat.equals("json");
    }

    int mix() {
        if (rwmixread != null && rwmixwrite != null) {
            int r = Units.integer("rwmixread", rwmixread, 0, 100);
            int w = Units.integer("rwmixwrite", rwmixwrite, 0, 100);
            if (r + w != 100) {
                throw new IllegalArgumentException(
                        "--rwmixread " + r + " and --rwmixwrite " + w + " do not add up to 100");
            }
            return r;
        }
        if (rwmixwrite != null) {
            return 100 - Units.integer("rwmixwrite", rwmixwrite, 0, 100);
        }
        return rwmixread == null ? 50 : Units.integer("rwmixread", rwmixread, 0, 100);
    }

    /** Builds the workload; defaults for runtime and ramp depend on the command. */
    Workload workload(String rw, String bs, String iodepth, String defaultRuntime, String defaultRamp, boolean verify) {
        checkFixed();
        if (name == null || name.isBlank()) {
            throw Units.bad("name", name, "a job name");
        }
        long bsBytes = Units.size("bs", bs);
        if (bsBytes < 512 || bsBytes > (64L << 20)) {
            throw Units.bad("bs", bs, "a block size from 512 to 64m");
        }
        int depth = Units.integer("iodepth", iodepth, 1, Workload.MAX_IODEPTH);
        int jobs = Units.integer("numjobs", numjobs, 1, Workload.MAX_NUMJOBS);
        long run = Units.timeNanos("runtime", runtime == null ? defaultRuntime : runtime);
        if (run < 100_000_000L && !verify) {
            throw Units.bad("runtime", runtime, "at least 100ms");
        }
        long ramp = Units.timeNanos("ramp_time", rampTime == null ? defaultRamp : rampTime);
        long sz = size == null ? 0 : Units.size("size", size);
        if (size != null && sz == 0) {
            throw Units.bad("size", size, "a size above 0");
        }
        long off = Units.size("offset", offset);
        double[] pcts = percentileList == null
                ? Workload.FIO_PERCENTILES
                : Units.percentiles("percentile_list", percentileList);
        long rate = rateIops == null ? 0 : Units.integer("rate_iops", rateIops, 1, Integer.MAX_VALUE);
        long seed;
        try {
            seed = Long.parseLong(randseed.trim());
        } catch (NumberFormatException e) {
            throw Units.bad("randseed", randseed, "an integer");
        }
        return new Workload(
                name,
                rw,
                mix(),
                (int) bsBytes,
                depth,
                jobs,
                verify && runtime == null ? 0 : run,
                ramp,
                sz,
                off,
                verify,
                pcts,
                rate,
                seed);
    }

    /** The namespace size of the target started here: enough for the region, at least 1 GiB (RAM used only as written). */
    long embeddedNamespaceBytes() {
        long sz = size == null ? 0 : Units.size("size", size);
        long off = Units.size("offset", offset);
        long need = off + (sz == 0 ? 1L << 30 : sz);
        long gib = 1L << 30;
        return Math.max(gib, (need + gib - 1) / gib * gib);
    }
}

package io.nvmeof.perf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** fio's output formats for a {@link RunResult}: "normal" (human) and "json" (fio's field names, plus "nvmeof"). */
public final class FioOutput {
    public static final String VERSION = "nvmeof-perf-0.1.0";
    static final ObjectMapper JSON = new ObjectMapper();
    private static final long[] LAT_NS_KEYS = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
    private static final long[] LAT_MS_KEYS = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000};

    private FioOutput() {}

    // ---- JSON ----

    public static ObjectNode json(RunResult r, boolean groupReporting, Machine machine) {
        ObjectNode root = JSON.createObjectNode();
        root.put("fio version", VERSION);
        root.put("timestamp", r.startMillis() / 1000);
        root.put("timestamp_ms", r.startMillis());
        root.put(
                "time", new SimpleDateFormat("EEE MMM d HH:mm:ss yyyy", Locale.ROOT).format(new Date(r.startMillis())));
        root.set("global options", jobOptions(r.workload()));
        ArrayNode jobs = root.putArray("jobs");
        if (groupReporting || r.jobs().size() == 1) {
            jobs.add(job(r, r.total(), r.jobs().get(0).name()));
        } else {
            for (RunResult.JobResult j : r.jobs()) {
                jobs.add(job(r, j, j.name()));
            }
        }
        root.set("nvmeof", nvmeof(r, machine));
        return root;
    }

    static ObjectNode jobOptions(Workload w) {
        ObjectNode o = JSON.createObjectNode();
        o.put("name", w.name());
        o.put("rw", w.rw());
        o.put("bs", Long.toString(w.bs()));
        o.put("iodepth", Integer.toString(w.iodepth()));
        o.put("numjobs", Integer.toString(w.numjobs()));
        if (w.rw().equals("rw") || w.rw().equals("randrw")) {
            o.put("rwmixread", Integer.toString(w.rwmixread()));
        }
        if (w.runtimeNanos() > 0) {
            o.put("runtime", Long.toString(w.runtimeNanos() / 1_000_000) + "ms");
            o.put("time_based", "1");
        }
        if (w.rampNanos() > 0) {
            o.put("ramp_time", Long.toString(w.rampNanos() / 1_000_000) + "ms");
        }
        if (w.size() > 0) {
            o.put("size", Long.toString(w.size()));
        }
        if (w.offset() > 0) {
            o.put("offset", Long.toString(w.offset()));
        }
        if (w.verify()) {
            o.put("verify", "crc32c");
        }
        if (w.rateIops() > 0) {
            o.put("rate_iops", Long.toString(w.rateIops()));
        }
        o.put("direct", "1");
        return o;
    }

    private static ObjectNode job(RunResult r, RunResult.JobResult j, String name) {
        ObjectNode o = JSON.createObjectNode();
        o.put("jobname", name);
        o.put("groupid", 0);
        o.put("error", r.failure() == null ? 0 : 1);
        o.put("eta", 0);
        o.put("elapsed", Math.round((r.windowNanos() + r.workload().rampNanos()) / 1e9));
        o.set("job options", jobOptions(r.workload()));
        double all = r.iops();
        o.set("read", dir(j.read(), r.workload().percentiles(), all));
        o.set("write", dir(j.write(), r.workload().percentiles(), all));
        o.set("trim", dir(new DirStats(), r.workload().percentiles(), all));
        o.put("job_runtime", r.windowNanos() / 1_000_000);
        // the initiator's process CPU, as a percentage of the window (fio: of one job's runtime)
        o.put("usr_cpu", pct(r.initiatorCpu().userNanos(), r.windowNanos()));
        o.put("sys_cpu", pct(r.initiatorCpu().systemNanos(), r.windowNanos()));
        o.put("ctx", 0);
        o.put("majf", 0);
        o.put("minf", 0);
        Histogram h = j.read().lat.copy();
        h.add(j.write().lat);
        o.set("latency_ns", buckets(h, LAT_NS_KEYS, 1, false));
        o.set("latency_us", buckets(h, LAT_NS_KEYS, 1_000, false));
        o.set("latency_ms", buckets(h, LAT_MS_KEYS, 1_000_000, true));
        return o;
    }

    private static double pct(long part, long whole) {
        return whole <= 0 ? 0 : round(100.0 * part / whole, 6);
    }

    private static double round(double v, int digits) {
        double m = Math.pow(10, digits);
        return Math.round(v * m) / m;
    }

    /**
     * fio's latency buckets: the percentage of I/Os whose latency is in (previous key, key] × unit; the first bucket
     * starts where the previous unit's table ended (0, 1 µs, 1 ms), and latency_ms ends with "&gt;=2000".
     */
    private static ObjectNode buckets(Histogram h, long[] keys, long unitNanos, boolean overflow) {
        ObjectNode o = JSON.createObjectNode();
        long n = h.getTotalCount();
        long prev = unitNanos == 1 ? 0 : unitNanos; // ns: from 0; µs: above 1000 ns; ms: above 1000 µs
        for (long k : keys) {
            long upper = k * unitNanos;
            long c = n == 0 || upper <= prev ? 0 : h.getCountBetweenValues(prev + 1, upper);
            o.put(Long.toString(k), n == 0 ? 0.0 : round(100.0 * c / n, 6));
            prev = Math.max(prev, upper);
        }
        if (overflow) {
            long c = n == 0 ? 0 : h.getCountBetweenValues(prev + 1, h.getHighestTrackableValue());
            o.put(">=2000", n == 0 ? 0.0 : round(100.0 * c / n, 6));
        }
        return o;
    }

    private static ObjectNode dir(DirStats d, double[] percentiles, double groupIops) {
        ObjectNode o = JSON.createObjectNode();
        o.put("io_bytes", d.bytes);
        o.put("io_kbytes", d.bytes / 1024);
        o.put("bw_bytes", Math.round(d.bytesPerSecond()));
        o.put("bw", Math.round(d.bytesPerSecond() / 1024));
        o.put("iops", round(d.iops(), 6));
        o.put("runtime", d.ios == 0 ? 0 : d.runtimeNanos / 1_000_000);
        o.put("total_ios", d.ios);
        o.put("short_ios", 0);
        o.put("drop_ios", 0);
        o.set("slat_ns", moments(d.slatM));
        ObjectNode clat = moments(d.clatM);
        ObjectNode pcts = clat.putObject("percentile");
        for (double p : percentiles) {
            pcts.put(String.format(Locale.ROOT, "%.6f", p), d.ios == 0 ? 0 : d.clat.getValueAtPercentile(p));
        }
        o.set("clat_ns", clat);
        o.set("lat_ns", moments(d.latM));
        double[] iops = d.ios == 0 ? new double[0] : d.iopsSamples();
        double[] bw = new double[iops.length];
        for (int i = 0; i < iops.length; i++) {
            bw[i] = iops[i] * (d.ios == 0 ? 0 : (double) d.bytes / d.ios) / 1024; // KiB/s
        }
        o.put("bw_min", Math.round(min(bw)));
        o.put("bw_max", Math.round(max(bw)));
        o.put("bw_agg", groupIops <= 0 ? 0.0 : round(100.0 * d.iops() / groupIops, 6));
        o.put("bw_mean", round(mean(bw), 6));
        o.put("bw_dev", round(stddev(bw), 6));
        o.put("bw_samples", bw.length);
        o.put("iops_min", Math.round(min(iops)));
        o.put("iops_max", Math.round(max(iops)));
        o.put("iops_mean", round(mean(iops), 6));
        o.put("iops_stddev", round(stddev(iops), 6));
        o.put("iops_samples", iops.length);
        return o;
    }

    private static ObjectNode moments(DirStats.Moments m) {
        ObjectNode o = JSON.createObjectNode();
        o.put("min", m.n == 0 ? 0 : m.min);
        o.put("max", m.n == 0 ? 0 : m.max);
        o.put("mean", round(m.mean(), 6));
        o.put("stddev", round(m.stddev(), 6));
        o.put("N", m.n);
        return o;
    }

    private static double min(double[] v) {
        double m = v.length == 0 ? 0 : Double.MAX_VALUE;
        for (double x : v) {
            m = Math.min(m, x);
        }
        return m;
    }

    private static double max(double[] v) {
        double m = 0;
        for (double x : v) {
            m = Math.max(m, x);
        }
        return m;
    }

    private static double mean(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return v.length == 0 ? 0 : s / v.length;
    }

    private static double stddev(double[] v) {
        if (v.length < 2) {
            return 0;
        }
        double m = mean(v);
        double s = 0;
        for (double x : v) {
            s += (x - m) * (x - m);
        }
        return Math.sqrt(s / (v.length - 1));
    }

    private static ObjectNode nvmeof(RunResult r, Machine machine) {
        ObjectNode o = JSON.createObjectNode();
        o.put("version", VERSION);
        o.put("setup", r.setup().name());
        o.put("setup_description", r.setup().description());
        o.put("transport", r.setup().transport());
        o.put("emulated", r.setup().emulated());
        o.put("target", r.targetUri());
        o.put("target_embedded", r.embeddedTarget());
        o.put("block_size", r.blockSize());
        o.put("window_ns", r.windowNanos());
        ObjectNode per = o.putObject("cpu_us_per_io");
        putNumber(per, "initiator", r.initiatorCpuPerIo());
        putNumber(per, "target", r.targetCpuPerIo());
        ObjectNode cpu = o.putObject("cpu");
        ObjectNode initiator = cpuNode(r.initiatorCpu(), r.windowNanos());
        initiator.put("jit_ms", r.initiatorJitMillis());
        cpu.set("initiator", initiator);
        if (r.targetCpu() != null) {
            ObjectNode t = cpuNode(r.targetCpu(), r.windowNanos());
            t.put("commands", r.targetCommands());
            t.put("cpus", r.targetCpus());
            cpu.set("target", t);
        } else {
            cpu.putNull("target");
            o.put("target_cpu_unknown", r.targetUnknown());
        }
        ObjectNode m = o.putObject("machine");
        m.put("cpu_model", machine.cpuModel());
        m.put("cores", machine.cores());
        m.put("os", machine.os());
        m.put("java", machine.java());
        o.put("reconnects", r.reconnects());
        o.put("failovers", r.failovers());
        ObjectNode q = o.putObject("queues");
        q.put("controllers", r.topology().controllers());
        q.put("io_queues_per_controller", r.topology().queuesPerController());
        q.put("io_queues", r.topology().queues());
        q.put("io_queues_with_io", r.queuesWithIo());
        if (r.idle() != null) {
            IdleResult i = r.idle();
            ObjectNode idle = o.putObject("idle");
            idle.put("window_ns", i.windowNanos());
            idle.set("initiator", cpuNode(i.initiatorCpu(), i.windowNanos()));
            putNumber(idle, "initiator_pct_of_core", i.initiatorPctOfCore());
            if (i.targetCpu() != null) {
                idle.set("target", cpuNode(i.targetCpu(), i.windowNanos()));
            } else {
                idle.putNull("target");
                idle.put("target_cpu_unknown", i.targetUnknown());
            }
            putNumber(idle, "target_pct_of_core", i.targetPctOfCore());
        }
        if (r.failure() != null) {
            o.put("failure", r.failure());
        }
        return o;
    }

    /**
     * The text report's line on the initiator's JIT: how long it compiled inside the window, with a hint when that
     * was more than 1 % of the window (the compiler threads then took the I/O threads' cores away from them).
     */
    static String jitLine(long jitMillis, long windowNanos) {
        if (jitMillis < 0) {
            return String.format(Locale.ROOT, "  jit          : unknown (this JVM does not time its compilers)%n");
        }
        String hint = JitTime.significant(jitMillis, windowNanos)
                ? " (more than 1 % of the window: the JIT was still warming up; a longer --ramp_time leaves it out)"
                : "";
        return String.format(Locale.ROOT, "  jit          : %d ms compiling in the window%s%n", jitMillis, hint);
    }

    private static ObjectNode cpuNode(CpuSample s, long window) {
        ObjectNode o = JSON.createObjectNode();
        o.put("user_ns", s.userNanos());
        o.put("sys_ns", s.systemNanos());
        o.put("total_ns", s.totalNanos());
        o.put("usr_pct", pct(s.userNanos(), window));
        o.put("sys_pct", pct(s.systemNanos(), window));
        o.put("cores_busy", window <= 0 ? 0 : round((double) s.totalNanos() / window, 4));
        return o;
    }

    static void putNumber(ObjectNode o, String key, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            o.putNull(key);
        } else {
            o.put(key, round(v, 4));
        }
    }

    // ---- human ("normal") ----

    public static String human(RunResult r, boolean groupReporting, Machine machine) {
        StringBuilder sb = new StringBuilder();
        String when = new SimpleDateFormat("EEE MMM d HH:mm:ss yyyy", Locale.ROOT).format(new Date(r.startMillis()));
        if (!groupReporting && r.jobs().size() > 1) {
            for (RunResult.JobResult j : r.jobs()) {
                jobText(sb, r, j, j.name() + "." + r.jobs().indexOf(j), when);
            }
        }
        jobText(
                sb,
                r,
                r.total(),
                r.jobs().size() > 1
                        ? r.jobs().get(0).name() + " (all jobs)"
                        : r.jobs().get(0).name(),
                when);
        sb.append(String.format(
                Locale.ROOT,
                "  cpu          : usr=%.2f%%, sys=%.2f%% (initiator process, %.2f cores busy)%n",
                100.0 * r.initiatorCpu().userNanos() / r.windowNanos(),
                100.0 * r.initiatorCpu().systemNanos() / r.windowNanos(),
                (double) r.initiatorCpu().totalNanos() / r.windowNanos()));
        sb.append(jitLine(r.initiatorJitMillis(), r.windowNanos()));
        sb.append(String.format(
                Locale.ROOT,
                "  nvmeof       : setup=%s (%s%s), target=%s%s%n",
                r.setup().name(),
                r.setup().description(),
                r.setup().emulated() ? ", EMULATED" : "",
                r.targetUri(),
                r.embeddedTarget() ? " (started by nvmeof-perf)" : ""));
        sb.append(String.format(
                Locale.ROOT, "  paths        : reconnects=%d, failovers=%d%n", r.reconnects(), r.failovers()));
        if (r.topology().queues() > 1) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  queues       : %d controller(s) x %d I/O queue(s) = %d, %d completed I/O in the window%n",
                    r.topology().controllers(),
                    r.topology().queuesPerController(),
                    r.topology().queues(),
                    r.queuesWithIo()));
        }
        if (r.idle() != null) {
            IdleResult i = r.idle();
            sb.append(String.format(
                    Locale.ROOT,
                    "  idle         : %.1f s with %d I/O queue(s) on %d controller(s) connected, no I/O: initiator "
                            + "%.2f%% of a core, target %s%n",
                    i.windowNanos() / 1e9,
                    i.queues(),
                    i.controllers(),
                    i.initiatorPctOfCore(),
                    i.targetCpu() != null
                            ? String.format(Locale.ROOT, "%.2f%% of a core", i.targetPctOfCore())
                            : "unknown (" + i.targetUnknown() + ")"));
        }
        String target;
        if (r.targetCpu() != null) {
            target = String.format(
                    Locale.ROOT,
                    "%.2f us (%.2f cores busy, %d commands)",
                    r.targetCpuPerIo(),
                    (double) r.targetCpu().totalNanos() / r.windowNanos(),
                    r.targetCommands());
        } else {
            target = "unknown (" + r.targetUnknown() + ")";
        }
        sb.append(String.format(
                Locale.ROOT, "  cpu per I/O  : initiator=%.2f us, target=%s%n", r.initiatorCpuPerIo(), target));
        sb.append(String.format("  machine      : %s%n", machine));
        sb.append(String.format("%nRun status group 0 (all jobs):%n"));
        for (int k = 0; k < 2; k++) {
            boolean isRead = k == 0;
            DirStats t = isRead ? r.total().read() : r.total().write();
            if (t.ios == 0) {
                continue;
            }
            double lo = Double.MAX_VALUE;
            double hi = 0;
            for (RunResult.JobResult j : r.jobs()) {
                double b = (isRead ? j.read() : j.write()).bytesPerSecond();
                lo = Math.min(lo, b);
                hi = Math.max(hi, b);
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "  %5s: bw=%s/s (%s/s), %s/s-%s/s (%s/s-%s/s), io=%s (%s), run=%d-%dmsec%n",
                    isRead ? "READ" : "WRITE",
                    Units.bytes(t.bytesPerSecond()),
                    Units.bytesSi(t.bytesPerSecond()),
                    Units.bytes(lo),
                    Units.bytes(hi),
                    Units.bytesSi(lo),
                    Units.bytesSi(hi),
                    Units.bytes(t.bytes),
                    Units.bytesSi(t.bytes),
                    t.runtimeNanos / 1_000_000,
                    t.runtimeNanos / 1_000_000));
        }
        if (r.failure() != null) {
            sb.append(String.format("%nERROR: %s%n", r.failure()));
        }
        return sb.toString();
    }

    private static void jobText(StringBuilder sb, RunResult r, RunResult.JobResult j, String name, String when) {
        sb.append(String.format(
                Locale.ROOT,
                "%s: (groupid=0, jobs=%d): err=%2d: pid=%d: %s%n",
                name,
                j.jobs(),
                r.failure() == null ? 0 : 1,
                ProcessHandle.current().pid(),
                when));
        for (int k = 0; k < 2; k++) {
            boolean isRead = k == 0;
            DirStats d = isRead ? j.read() : j.write();
            if (d.ios == 0) {
                continue;
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "  %s: IOPS=%s, BW=%s/s (%s/s)(%s/%dmsec)%n",
                    isRead ? "read" : "write",
                    Units.count(d.iops()),
                    Units.bytes(d.bytesPerSecond()),
                    Units.bytesSi(d.bytesPerSecond()),
                    Units.bytes(d.bytes),
                    d.runtimeNanos / 1_000_000));
            lat(sb, "    slat", d.slatM);
            lat(sb, "    clat", d.clatM);
            lat(sb, "     lat", d.latM);
            long unit = unitFor(ps0(d, r.workload().percentiles()));
            sb.append(String.format("    clat percentiles (%s):%n", unitName(unit)));
            double[] ps = r.workload().percentiles();
            for (int i = 0; i < ps.length; i += 4) {
                sb.append("     |");
                for (int c = i; c < Math.min(ps.length, i + 4); c++) {
                    sb.append(String.format(
                            Locale.ROOT,
                            " %6sth=[%6d]%s",
                            trimPct(ps[c]),
                            Math.round(d.clat.getValueAtPercentile(ps[c]) / (double) unit),
                            c + 1 < ps.length ? "," : ""));
                }
                sb.append('\n');
            }
            double[] iops = d.iopsSamples();
            if (iops.length > 0) {
                sb.append(String.format(
                        Locale.ROOT,
                        "   iops        : min=%d, max=%d, avg=%.2f, stdev=%.2f, samples=%d%n",
                        Math.round(min(iops)),
                        Math.round(max(iops)),
                        mean(iops),
                        stddev(iops),
                        iops.length));
            }
        }
    }

    /** The smallest reported percentile: fio scales the percentile table so the small values keep their digits. */
    private static long ps0(DirStats d, double[] ps) {
        double min = 100;
        for (double p : ps) {
            min = Math.min(min, p);
        }
        return d.clat.getValueAtPercentile(min);
    }

    private static String trimPct(double p) {
        return String.format(Locale.ROOT, "%.2f", p);
    }

    private static void lat(StringBuilder sb, String label, DirStats.Moments m) {
        long unit = unitFor((long) m.mean());
        sb.append(String.format(
                Locale.ROOT,
                "%s (%s): min=%s, max=%s, avg=%.2f, stdev=%.2f%n",
                label,
                unitName(unit),
                fmt(m.min, unit),
                fmt(m.max, unit),
                m.mean() / unit,
                m.stddev() / unit));
    }

    private static String fmt(long v, long unit) {
        return unit == 1 ? Long.toString(v) : String.format(Locale.ROOT, "%.0f", v / (double) unit);
    }

    static long unitFor(long maxNanos) {
        return maxNanos < 10_000 ? 1 : maxNanos < 10_000_000 ? 1_000 : 1_000_000;
    }

    static String unitName(long unit) {
        return unit == 1 ? "nsec" : unit == 1_000 ? "usec" : "msec";
    }
}

package io.nvmeof.perf;

import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.initiator.NvmeException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code nvmeof-perf compare}: the same workload points over several setups in one run, one side-by-side table, and
 * optionally a self-contained HTML report.
 */
@Command(
        name = "compare",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Run the same workloads over several setups (transports and their options) and print them side "
                    + "by side: IOPS, p50/p99 completion latency, CPU microseconds per I/O on the initiator and the target.",
            "",
            "With no options: 4k randread at iodepth 1 and 32 and 128k read at iodepth 8, over tcp, tcp-digest "
                    + "and rdma, 2 s ramp + 5 s each: a little over a minute.",
            "Setups: "
                    + "tcp, tcp-io_uring, tcp-digest, tcp-tls, tcp-tls-digest, rdma, and each with -hipri (busy polling). rdma runs "
                    + "over DiSNI when this machine has an RDMA device, else over the software RNIC, labelled "
                    + "EMULATED. A setup that cannot run here is shown as 'unavailable: <reason>'."
        })
public final class CompareCommand implements Callable<Integer> {
    @ParentCommand
    PerfCli parent;

    @Mixin
    WorkloadOptions common = new WorkloadOptions();

    @Option(
            names = "--setups",
            paramLabel = "LIST",
            description = "Comma-separated setups, or 'all' (default " + "${DEFAULT-VALUE}).")
    String setups = "tcp,tcp-digest,rdma";

    @Option(names = "--rw", paramLabel = "LIST", description = "Patterns to sweep, e.g. randread,randwrite.")
    String rw;

    @Option(names = "--bs", paramLabel = "LIST", description = "Block sizes to sweep, e.g. 4k,128k.")
    String bs;

    @Option(names = "--iodepth", paramLabel = "LIST", description = "Queue depths to sweep, e.g. 1,4,16,64.")
    String iodepth;

    @Option(
            names = "--report",
            paramLabel = "FILE.html",
            description = "Also write a self-contained HTML report with " + "plots (no network needed to view it).")
    String report;

    /** One cell: a result, or why there is none. */
    record Cell(RunResult result, String unavailable) {}

    /** Everything compare measured. */
    record Comparison(
            List<Workload> points,
            List<Setup> setups,
            Map<String, String> unavailable,
            Map<String, List<Cell>> cells,
            boolean embedded,
            String target,
            Machine machine,
            long startMillis) {
        Cell cell(Setup s, int point) {
            return cells.get(s.name()).get(point);
        }
    }

    @Override
    public Integer call() throws Exception {
        PrintStream out = parent.out;
        PrintStream err = parent.err;
        List<Workload> points = points();
        List<Setup> chosen = chosenSetups();
        if (common.target != null) {
            io.nvmeof.initiator.NvmeUri.parse(common.target);
        }
        if (report != null
                && Path.of(report).toAbsolutePath().getParent() != null
                && !Files.isDirectory(Path.of(report).toAbsolutePath().getParent())) {
            throw new IllegalArgumentException(
                    "invalid value '" + report + "' for --report: its directory does not exist");
        }
        Comparison c = run(points, chosen, err);
        String text;
        if (common.json()) {
            text = FioOutput.JSON
                            .writer()
                            .with(SerializationFeature.INDENT_OUTPUT)
                            .writeValueAsString(json(c)) + "\n";
        } else {
            text = table(c);
        }
        PerfCli.write(common.output, text, out);
        if (report != null) {
            Files.writeString(Path.of(report), HtmlReport.render(c), StandardCharsets.UTF_8);
            err.println("compare: report written to " + report);
        }
        for (List<Cell> cells : c.cells.values()) {
            for (Cell cell : cells) {
                if (cell.result != null && cell.result.failure() != null) {
                    return 1;
                }
            }
        }
        return 0;
    }

    List<Workload> points() {
        boolean defaults = rw == null && bs == null && iodepth == null;
        String ramp = "2";
        String runtime = "5";
        List<Workload> out = new ArrayList<>();
        if (defaults) {
            out.add(common.workload("randread", "4k", "1", runtime, ramp, false));
            out.add(common.workload("randread", "4k", "32", runtime, ramp, false));
            out.add(common.workload("read", "128k", "8", runtime, ramp, false));
            return out;
        }
        for (String r : Units.list("rw", rw == null ? "randread" : rw)) {
            for (String b : Units.list("bs", bs == null ? "4k" : bs)) {
                for (String d : Units.list("iodepth", iodepth == null ? "1,32" : iodepth)) {
                    out.add(common.workload(r, b, d, runtime, ramp, false));
                }
            }
        }
        if (out.size() > 200) {
            throw new IllegalArgumentException("the sweep has " + out.size() + " points; at most 200");
        }
        return out;
    }

    List<Setup> chosenSetups() {
        List<Setup> out = new ArrayList<>();
        List<String> names = setups.trim().equalsIgnoreCase("all")
                ? Setup.BASE.stream().map(Setup::name).toList()
                : Units.list("setups", setups);
        boolean hipri = WorkloadOptions.flag("hipri", common.hipri);
        for (String n : names) {
            Setup s = Setup.named(n);
            if (out.stream().noneMatch(x -> x.name().equals(s.name()))) {
                out.add(s);
            }
            if (hipri && !s.hipri()) {
                out.add(s.withHipri());
            }
        }
        return out;
    }

    private Comparison run(List<Workload> points, List<Setup> chosen, PrintStream err)
            throws IOException, InterruptedException {
        boolean embedded = common.target == null;
        Map<String, String> unavailable = new LinkedHashMap<>();
        Map<String, List<Cell>> cells = new LinkedHashMap<>();
        long start = System.currentTimeMillis();
        for (Setup s : chosen) {
            List<Cell> list = new ArrayList<>();
            cells.put(s.name(), list);
            String reason = s.unavailableReason(embedded);
            if (reason == null && !embedded) {
                reason = PerfCli.transportMismatch(s, common.target);
            }
            EmbeddedTarget t = null;
            try {
                String uri = common.target;
                if (reason == null && embedded) {
                    try {
                        t = EmbeddedTarget.start(
                                s.transport(), common.embeddedNamespaceBytes(), s.effectiveTargetArgs());
                        uri = t.uri();
                    } catch (IOException e) {
                        reason = "the target did not start: " + e.getMessage();
                    }
                }
                for (Workload w : points) {
                    if (reason != null) {
                        list.add(new Cell(null, reason));
                        continue;
                    }
                    err.printf(Locale.ROOT, "compare: %-16s %-24s ", s.name(), w.label());
                    err.flush();
                    try {
                        RunResult r = Runner.run(w, s, uri, embedded, null);
                        list.add(new Cell(r, null));
                        err.printf(
                                Locale.ROOT,
                                "%s IOPS, p99 %.1f us%s%s%n",
                                Units.count(r.iops()),
                                r.clatPercentile(99) / 1000.0,
                                JitTime.significant(r.initiatorJitMillis(), r.windowNanos())
                                        ? ", JIT compiling " + r.initiatorJitMillis() + " ms of it"
                                        : "",
                                r.failure() != null ? ", FAILED: " + r.failure() : "");
                    } catch (NvmeException e) {
                        // cannot connect with this setup (e.g. the engine is missing on this kernel): skip the rest
                        reason = e.getMessage();
                        list.add(new Cell(null, reason));
                        err.println("unavailable: " + reason);
                    }
                }
            } finally {
                if (t != null) {
                    t.close();
                }
            }
            if (reason != null) {
                unavailable.put(s.name(), reason);
            }
        }
        return new Comparison(
                points,
                chosen,
                unavailable,
                cells,
                embedded,
                embedded ? "started here" : common.target,
                Machine.here(),
                start);
    }

    // ---- outputs ----

    /**
     * The cells whose window held more than 1 % of JIT compiling (this process's compilers, which share the cores of
     * its I/O threads), or "" if none did.
     */
    static String jitNote(Comparison c) {
        StringBuilder cells = new StringBuilder();
        for (Setup s : c.setups) {
            List<Cell> list = c.cells.get(s.name());
            for (int i = 0; i < list.size(); i++) {
                RunResult r = list.get(i).result;
                if (r != null && JitTime.significant(r.initiatorJitMillis(), r.windowNanos())) {
                    cells.append(cells.length() == 0 ? "" : ", ")
                            .append(s.name())
                            .append(' ')
                            .append(c.points.get(i).label())
                            .append(" (")
                            .append(r.initiatorJitMillis())
                            .append(" ms)");
                }
            }
        }
        if (cells.length() == 0) {
            return "";
        }
        return "\nthe initiator's JIT compiled for more than 1 % of the window in: " + cells
                + "; those figures include its warm-up (a longer --ramp_time leaves it out)\n";
    }

    static String table(Comparison c) {
        StringBuilder sb = new StringBuilder();
        Workload first = c.points.get(0);
        sb.append(String.format(
                Locale.ROOT,
                "nvmeof-perf compare: %d workload point(s) x %d setup(s), %s ramp + %s "
                        + "measured each, %d job(s); target: %s%n",
                c.points.size(),
                c.setups.size(),
                secs(first.rampNanos()),
                secs(first.runtimeNanos()),
                first.numjobs(),
                c.embedded ? "ours, started in a separate process on 127.0.0.1" : c.target));
        sb.append("machine: ").append(c.machine).append('\n');
        sb.append("IOPS: all jobs; p50/p99: completion latency (clat) in us; CPU: microseconds of CPU per I/O "
                + "(ini = this process, tgt = the target process, read over the fabric)\n\n");
        int labelW = Math.max(
                16, c.points.stream().mapToInt(w -> w.label().length()).max().orElse(16));
        String groupFmt = "%8s %8s %8s %7s %7s";
        int groupW = String.format(groupFmt, "", "", "", "", "").length();
        StringBuilder h1 = new StringBuilder(pad("", labelW));
        StringBuilder h2 = new StringBuilder(pad("workload", labelW));
        for (Setup s : c.setups) {
            h1.append(" | ").append(pad(s.name() + (s.emulated() ? " (EMULATED)" : ""), groupW));
            h2.append(" | ").append(String.format(groupFmt, "IOPS", "p50 us", "p99 us", "CPU ini", "tgt"));
        }
        sb.append("setups: ");
        for (int i = 0; i < c.setups.size(); i++) {
            Setup s = c.setups.get(i);
            sb.append(i == 0 ? "" : "; ")
                    .append(s.name())
                    .append(" = ")
                    .append(s.description())
                    .append(s.emulated() && !s.description().contains("emulated") ? " (emulated)" : "");
        }
        sb.append("\n\n");
        sb.append(h1.toString().stripTrailing()).append('\n').append(h2).append('\n');
        sb.append("-".repeat(h2.length())).append('\n');
        for (int i = 0; i < c.points.size(); i++) {
            StringBuilder row = new StringBuilder(pad(c.points.get(i).label(), labelW));
            for (Setup s : c.setups) {
                Cell cell = c.cell(s, i);
                row.append(" | ");
                if (cell.result == null) {
                    row.append(pad(clip("unavailable: " + cell.unavailable, groupW), groupW));
                } else if (cell.result.failure() != null) {
                    row.append(pad(clip("failed: " + cell.result.failure(), groupW), groupW));
                } else {
                    RunResult r = cell.result;
                    row.append(String.format(
                            Locale.ROOT,
                            groupFmt,
                            Units.count(r.iops()),
                            us(r.clatPercentile(50)),
                            us(r.clatPercentile(99)),
                            num(r.initiatorCpuPerIo()),
                            num(r.targetCpuPerIo())));
                }
            }
            sb.append(row.toString().stripTrailing()).append('\n');
        }
        for (Map.Entry<String, String> u : c.unavailable.entrySet()) {
            sb.append("\n").append(u.getKey()).append(": unavailable: ").append(u.getValue());
        }
        if (!c.unavailable.isEmpty()) {
            sb.append('\n');
        }
        sb.append(jitNote(c));
        for (Setup s : c.setups) {
            for (Cell cell : c.cells.get(s.name())) {
                if (cell.result != null && cell.result.targetCpu() == null) {
                    sb.append("\ntarget CPU unknown: ")
                            .append(cell.result.targetUnknown())
                            .append('\n');
                    return sb.toString();
                }
            }
        }
        return sb.toString();
    }

    private static String secs(long nanos) {
        return nanos % 1_000_000_000L == 0
                ? nanos / 1_000_000_000L + " s"
                : String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }

    static String us(long nanos) {
        return String.format(Locale.ROOT, nanos < 100_000 ? "%.1f" : "%.0f", nanos / 1000.0);
    }

    static String num(double v) {
        return Double.isNaN(v) ? "?" : String.format(Locale.ROOT, v < 100 ? "%.2f" : "%.0f", v);
    }

    private static String pad(String s, int w) {
        return s.length() >= w ? s : s + " ".repeat(w - s.length());
    }

    private static String clip(String s, int w) {
        return s.length() <= w ? s : s.substring(0, w - 1) + "…";
    }

    static ObjectNode json(Comparison c) {
        ObjectNode root = FioOutput.JSON.createObjectNode();
        root.put("fio version", FioOutput.VERSION);
        root.put("timestamp", c.startMillis / 1000);
        ObjectNode cmp = root.putObject("nvmeof");
        cmp.put("command", "compare");
        cmp.put("target", c.target);
        cmp.put("target_embedded", c.embedded);
        ObjectNode m = cmp.putObject("machine");
        m.put("cpu_model", c.machine.cpuModel());
        m.put("cores", c.machine.cores());
        ArrayNode setups = cmp.putArray("setups");
        for (Setup s : c.setups) {
            ObjectNode o = setups.addObject();
            o.put("name", s.name());
            o.put("description", s.description());
            o.put("transport", s.transport());
            o.put("emulated", s.emulated());
            if (c.unavailable.containsKey(s.name())) {
                o.put("unavailable", c.unavailable.get(s.name()));
            }
        }
        ArrayNode points = cmp.putArray("points");
        for (int i = 0; i < c.points.size(); i++) {
            Workload w = c.points.get(i);
            ObjectNode p = points.addObject();
            p.put("workload", w.label());
            p.put("rw", w.rw());
            p.put("bs", w.bs());
            p.put("iodepth", w.iodepth());
            p.put("numjobs", w.numjobs());
            ObjectNode res = p.putObject("results");
            for (Setup s : c.setups) {
                Cell cell = c.cell(s, i);
                ObjectNode o = res.putObject(s.name());
                if (cell.result == null) {
                    o.put("unavailable", cell.unavailable);
                    continue;
                }
                RunResult r = cell.result;
                o.put("iops", Math.round(r.iops() * 100) / 100.0);
                o.put(
                        "bw_bytes",
                        Math.round(r.total().read().bytesPerSecond()
                                + r.total().write().bytesPerSecond()));
                o.put("clat_p50_ns", r.clatPercentile(50));
                o.put("clat_p99_ns", r.clatPercentile(99));
                ObjectNode cpu = o.putObject("cpu_us_per_io");
                FioOutput.putNumber(cpu, "initiator", r.initiatorCpuPerIo());
                FioOutput.putNumber(cpu, "target", r.targetCpuPerIo());
                if (r.failure() != null) {
                    o.put("failure", r.failure());
                }
                o.set("fio", FioOutput.json(r, true, c.machine));
            }
        }
        return root;
    }
}

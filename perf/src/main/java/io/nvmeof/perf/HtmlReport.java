package io.nvmeof.perf;

import static io.nvmeof.perf.ReportText.color;
import static io.nvmeof.perf.ReportText.esc;

import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The compare report as one self-contained HTML page: inline CSS and inline SVG ({@link LineChart},
 * {@link CpuChart}), no script, no network.
 * Plots: completion latency percentiles per setup (one chart per workload point), IOPS against queue depth, CPU
 * microseconds per I/O on the initiator and the target; then the table, the machine, the date and any "emulated" or
 * "unavailable" labels. This class writes the page and the table; the charts draw themselves and {@link ReportText}
 * writes numbers and names.
 */
public final class HtmlReport {
    static final double[] PERCENTILES = {50, 90, 99, 99.9, 99.99};

    private HtmlReport() {}

    public static String render(CompareCommand.Comparison c) {
        StringBuilder h = new StringBuilder();
        String date = new SimpleDateFormat("yyyy-MM-dd HH:mm:ss z", Locale.ROOT).format(new Date(c.startMillis()));
        h.append(
                        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>nvmeof-perf compare</title>\n")
                .append("<style>body{font-family:sans-serif;margin:24px;color:#222;max-width:1240px}"
                        + "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}"
                        + "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #bbb;padding:3px 8px;"
                        + "text-align:right}th{background:#eee}td.l{text-align:left}.u{color:#a00}.em{color:#a60;"
                        + "font-weight:bold}.meta{font-size:14px;line-height:1.5}.charts{display:flex;flex-wrap:wrap;"
                        + "gap:12px}svg{background:#fff;border:1px solid #ddd}</style>\n</head><body>\n");
        h.append("<h1>nvmeof-perf compare</h1>\n<div class=\"meta\">");
        h.append("<b>Date:</b> ").append(esc(date)).append("<br>\n");
        h.append("<b>Machine:</b> ")
                .append(esc(c.machine().cpuModel()))
                .append(", ")
                .append(c.machine().cores())
                .append(" cores; ")
                .append(esc(c.machine().os()))
                .append("; ")
                .append(esc(c.machine().java()))
                .append("<br>\n");
        h.append("<b>Target:</b> ")
                .append(
                        c.embedded()
                                ? "nvmeof-java RAM target started in a separate process on "
                                        + "127.0.0.1 (its CPU read over the fabric, log page 0xC0)"
                                : esc(c.target()))
                .append("<br>\n");
        Workload w0 = c.points().get(0);
        h.append("<b>Each point:</b> ")
                .append(w0.rampNanos() / 1e9)
                .append(" s ramp, ")
                .append(w0.runtimeNanos() / 1e9)
                .append(" s measured, ")
                .append(w0.numjobs())
                .append(" job(s)<br>\n");
        h.append("<b>Setups:</b><ul>");
        for (int i = 0; i < c.setups().size(); i++) {
            Setup s = c.setups().get(i);
            h.append("<li><span style=\"color:")
                    .append(color(i))
                    .append("\">&#9632;</span> <b>")
                    .append(esc(s.name()))
                    .append("</b>: ")
                    .append(esc(s.description()));
            if (s.emulated()) {
                h.append(" <span class=\"em\">EMULATED</span>");
            }
            String u = c.unavailable().get(s.name());
            if (u != null) {
                h.append(" <span class=\"u\">unavailable: ").append(esc(u)).append("</span>");
            }
            h.append("</li>");
        }
        h.append("</ul></div>\n");

        // 1. latency percentiles, one chart per point
        h.append("<h2>Completion latency percentiles</h2>\n<div class=\"charts\">\n");
        String[] px = new String[PERCENTILES.length];
        for (int i = 0; i < px.length; i++) {
            px[i] = "p"
                    + java.math.BigDecimal.valueOf(PERCENTILES[i])
                            .stripTrailingZeros()
                            .toPlainString();
        }
        for (int p = 0; p < c.points().size(); p++) {
            List<LineChart.Series> series = new ArrayList<>();
            for (int i = 0; i < c.setups().size(); i++) {
                Setup s = c.setups().get(i);
                RunResult r = ok(c.cell(s, p));
                double[] y = new double[PERCENTILES.length];
                for (int k = 0; k < y.length; k++) {
                    y[k] = r == null ? Double.NaN : r.clatPercentile(PERCENTILES[k]) / 1000.0;
                }
                series.add(new LineChart.Series(label(s), color(i), y));
            }
            h.append(LineChart.svg(
                    "latency-" + p,
                    c.points().get(p).label(),
                    "percentile",
                    "completion latency (µs, log)",
                    px,
                    series,
                    true,
                    400,
                    300));
        }
        h.append("</div>\n");

        // 2. IOPS against queue depth, one chart per (rw, bs, numjobs)
        h.append("<h2>IOPS against queue depth</h2>\n<div class=\"charts\">\n");
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int p = 0; p < c.points().size(); p++) {
            Workload w = c.points().get(p);
            groups.computeIfAbsent(
                            w.rw() + " " + Units.shortSize(w.bs()) + (w.numjobs() > 1 ? " x" + w.numjobs() : ""),
                            k -> new ArrayList<>())
                    .add(p);
        }
        for (Map.Entry<String, List<Integer>> g : groups.entrySet()) {
            TreeSet<Integer> depths = new TreeSet<>();
            for (int p : g.getValue()) {
                depths.add(c.points().get(p).iodepth());
            }
            List<Integer> ds = new ArrayList<>(depths);
            String[] xs = ds.stream().map(d -> "qd " + d).toArray(String[]::new);
            List<LineChart.Series> series = new ArrayList<>();
            for (int i = 0; i < c.setups().size(); i++) {
                Setup s = c.setups().get(i);
                double[] y = new double[ds.size()];
                java.util.Arrays.fill(y, Double.NaN);
                for (int p : g.getValue()) {
                    RunResult r = ok(c.cell(s, p));
                    if (r != null) {
                        y[ds.indexOf(c.points().get(p).iodepth())] = r.iops();
                    }
                }
                series.add(new LineChart.Series(label(s), color(i), y));
            }
            h.append(LineChart.svg(
                    "iops-" + g.getKey().replace(' ', '-'),
                    g.getKey(),
                    "queue depth (iodepth)",
                    "IOPS",
                    xs,
                    series,
                    false,
                    400,
                    300));
        }
        h.append("</div>\n");

        // 3. CPU per I/O
        h.append("<h2>CPU per I/O</h2>\n<p class=\"meta\">Microseconds of process CPU (user + system) per completed "
                + "I/O over the measured window: solid = initiator (this process), light = target (read over the "
                + "fabric; missing where the target's CPU is unknown).</p>\n");
        h.append(CpuChart.svg(c));

        // 4. table
        h.append("<h2>Table</h2>\n<table><tr><th class=\"l\" rowspan=\"2\">workload</th>");
        for (Setup s : c.setups()) {
            h.append("<th colspan=\"5\">").append(esc(label(s))).append("</th>");
        }
        h.append("</tr><tr>");
        for (int i = 0; i < c.setups().size(); i++) {
            h.append("<th>IOPS</th><th>p50 µs</th><th>p99 µs</th><th>CPU µs/IO ini</th><th>tgt</th>");
        }
        h.append("</tr>\n");
        for (int p = 0; p < c.points().size(); p++) {
            h.append("<tr><td class=\"l\">")
                    .append(esc(c.points().get(p).label()))
                    .append("</td>");
            for (Setup s : c.setups()) {
                CompareCommand.Cell cell = c.cell(s, p);
                if (cell.result() == null) {
                    h.append("<td colspan=\"5\" class=\"u l\">unavailable: ")
                            .append(esc(cell.unavailable()))
                            .append("</td>");
                } else if (cell.result().failure() != null) {
                    h.append("<td colspan=\"5\" class=\"u l\">failed: ")
                            .append(esc(cell.result().failure()))
                            .append("</td>");
                } else {
                    RunResult r = cell.result();
                    h.append("<td>")
                            .append(Units.count(r.iops()))
                            .append("</td><td>")
                            .append(CompareCommand.us(r.clatPercentile(50)))
                            .append("</td><td>")
                            .append(CompareCommand.us(r.clatPercentile(99)))
                            .append("</td><td>")
                            .append(CompareCommand.num(r.initiatorCpuPerIo()))
                            .append("</td><td>")
                            .append(CompareCommand.num(r.targetCpuPerIo()))
                            .append("</td>");
                }
            }
            h.append("</tr>\n");
        }
        h.append("</table>\n<p class=\"meta\">Generated by ")
                .append(FioOutput.VERSION)
                .append(". Latency is completion latency (clat: from submission to completion). Numbers from a busy or "
                        + "shared machine are only indicative.</p>\n</body></html>\n");
        return h.toString();
    }

    /** The cell's result if it ran and did not fail, else null (not plotted). */
    static RunResult ok(CompareCommand.Cell cell) {
        return cell.result() != null && cell.result().failure() == null ? cell.result() : null;
    }

    /** The setup's name as the charts and the table show it. */
    static String label(Setup s) {
        return s.name() + (s.emulated() ? " (emulated)" : "");
    }
}

package io.nvmeof.perf;

import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The compare report as one self-contained HTML page: inline CSS and inline SVG drawn here, no script, no network.
 * Plots: completion latency percentiles per setup (one chart per workload point), IOPS against queue depth, CPU
 * microseconds per I/O on the initiator and the target; then the table, the machine, the date and any "emulated" or
 * "unavailable" labels.
 */
public final class HtmlReport {
    static final String[] COLORS = {
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"
    };
    static final double[] PERCENTILES = {50, 90, 99, 99.9, 99.99};

    private HtmlReport() {}

    /** One plotted line: a label, a colour and y values (NaN: no point) at the chart's x positions. */
    record Series(String label, String color, double[] y) {}

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
            List<Series> series = new ArrayList<>();
            for (int i = 0; i < c.setups().size(); i++) {
                Setup s = c.setups().get(i);
                RunResult r = ok(c.cell(s, p));
                double[] y = new double[PERCENTILES.length];
                for (int k = 0; k < y.length; k++) {
                    y[k] = r == null ? Double.NaN : r.clatPercentile(PERCENTILES[k]) / 1000.0;
                }
                series.add(new Series(label(s), color(i), y));
            }
            h.append(lineChart(
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
            List<Series> series = new ArrayList<>();
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
                series.add(new Series(label(s), color(i), y));
            }
            h.append(lineChart(
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
        h.append(cpuChart(c));

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

    private static RunResult ok(CompareCommand.Cell cell) {
        return cell.result() != null && cell.result().failure() == null ? cell.result() : null;
    }

    private static String label(Setup s) {
        return s.name() + (s.emulated() ? " (emulated)" : "");
    }

    static String color(int i) {
        return COLORS[i % COLORS.length];
    }

    // ---- SVG ----

    /** A line chart over categorical x positions; y linear from 0 or logarithmic. */
    static String lineChart(
            String id,
            String title,
            String xLabel,
            String yLabel,
            String[] xs,
            List<Series> series,
            boolean logY,
            int width,
            int height) {
        int left = 70;
        int right = 16;
        int top = 34;
        int legendH = 18 * ((series.size() + 1) / 2);
        int pw = width - left - right;
        int ph = height - top - 48; // plot height; x labels and the legend go below it
        int totalH = height + legendH;
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (Series s : series) {
            for (double v : s.y()) {
                if (!Double.isNaN(v) && v > 0) {
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
            }
        }
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                Locale.ROOT,
                "<svg id=\"%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                        + "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
                esc(id),
                width,
                totalH,
                width,
                totalH));
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\" " + "text-anchor=\"middle\">%s</text>\n",
                width / 2,
                esc(title)));
        if (hi == 0) {
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#a00\">no data" + "</text>\n",
                    width / 2,
                    top + ph / 2));
            lo = 1;
            hi = 10;
        }
        double yMin;
        double yMax;
        List<Double> ticks = new ArrayList<>();
        if (logY) {
            yMin = Math.pow(10, Math.floor(Math.log10(lo)));
            yMax = Math.pow(10, Math.ceil(Math.log10(hi * 1.0001)));
            if (yMax / yMin < 10) {
                yMax = yMin * 10;
            }
            for (double d = yMin; d <= yMax * 1.0001; d *= 10) {
                ticks.add(d);
                if (yMax / yMin <= 100 && d * 2 < yMax) {
                    ticks.add(d * 2);
                    ticks.add(d * 5);
                }
            }
        } else {
            yMin = 0;
            double step = niceStep(hi / 5);
            yMax = Math.ceil(hi * 1.05 / step) * step;
            for (double d = 0; d <= yMax * 1.0001; d += step) {
                ticks.add(d);
            }
        }
        final double fMin = yMin;
        final double fMax = yMax;
        java.util.function.DoubleUnaryOperator ypos = v -> logY
                ? top + ph - ph * (Math.log10(v) - Math.log10(fMin)) / (Math.log10(fMax) - Math.log10(fMin))
                : top + ph - ph * (v - fMin) / (fMax - fMin);
        // plot area, grid and y ticks
        b.append(String.format(
                Locale.ROOT,
                "<rect class=\"plot-area\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                        + "fill=\"#fafafa\" stroke=\"#888\"/>\n",
                left,
                top,
                pw,
                ph));
        for (double t : ticks) {
            if (t < yMin || t > yMax * 1.0001) {
                continue;
            }
            double y = ypos.applyAsDouble(Math.max(t, logY ? yMin : 0));
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                            + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    left,
                    left + pw,
                    y,
                    y,
                    left - 5,
                    y + 4,
                    tick(t)));
        }
        // x positions
        int n = xs.length;
        double[] xp = new double[n];
        for (int i = 0; i < n; i++) {
            xp[i] = left + (n == 1 ? pw / 2.0 : 20 + (pw - 40) * i / (double) (n - 1));
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    xp[i],
                    top + ph + 16,
                    esc(xs[i])));
        }
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">%s</text>\n",
                left + pw / 2,
                top + ph + 34,
                esc(xLabel)));
        b.append(String.format(
                Locale.ROOT,
                "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\" "
                        + "font-size=\"12\">%s</text>\n",
                top + ph / 2,
                esc(yLabel)));
        // series
        for (Series s : series) {
            StringBuilder path = new StringBuilder();
            for (int i = 0; i < n; i++) {
                double v = s.y()[i];
                if (Double.isNaN(v) || v <= 0 && logY) {
                    continue;
                }
                double y = ypos.applyAsDouble(v);
                path.append(path.length() == 0 ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f", xp[i], y));
                b.append(String.format(
                        Locale.ROOT,
                        "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
                                + "fill=\"%s\"><title>%s %s: %s</title></circle>\n",
                        xp[i],
                        y,
                        s.color(),
                        esc(s.label()),
                        esc(xs[i]),
                        tick(v)));
            }
            if (path.length() > 0) {
                b.append(String.format(
                        "<path class=\"series\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                        path, s.color()));
            }
        }
        // legend
        int ly = top + ph + 50;
        for (int i = 0; i < series.size(); i++) {
            int lx = left + (i % 2) * (pw / 2);
            int yy = ly + (i / 2) * 18;
            b.append(String.format(
                    Locale.ROOT,
                    "<g class=\"legend\"><rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" "
                            + "fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text></g>\n",
                    lx,
                    yy - 4,
                    series.get(i).color(),
                    lx + 20,
                    yy,
                    esc(series.get(i).label())));
        }
        b.append("</svg>\n");
        return b.toString();
    }

    /** Grouped bars: per workload point, per setup, initiator (solid) and target (light) CPU µs per I/O. */
    static String cpuChart(CompareCommand.Comparison c) {
        int points = c.points().size();
        int setups = c.setups().size();
        int barW = 14;
        int groupW = setups * (2 * barW + 6) + 24;
        int left = 70;
        int top = 34;
        int ph = 260;
        int width = Math.max(600, left + 16 + points * groupW);
        int legendH = 18 * ((setups + 1) / 2) + 22;
        int height = top + ph + 70 + legendH;
        double hi = 0;
        for (Setup s : c.setups()) {
            for (int p = 0; p < points; p++) {
                RunResult r = ok(c.cell(s, p));
                if (r != null) {
                    hi = Math.max(hi, nz(r.initiatorCpuPerIo()));
                    hi = Math.max(hi, nz(r.targetCpuPerIo()));
                }
            }
        }
        if (hi == 0) {
            hi = 1;
        }
        double step = niceStep(hi / 5);
        double yMax = Math.ceil(hi * 1.05 / step) * step;
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                Locale.ROOT,
                "<svg id=\"cpu\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                        + "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
                width,
                height,
                width,
                height));
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\" "
                        + "text-anchor=\"middle\">CPU per I/O (µs): initiator and target</text>\n",
                width / 2));
        int pw = width - left - 16;
        b.append(String.format(
                Locale.ROOT,
                "<rect class=\"plot-area\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                        + "fill=\"#fafafa\" stroke=\"#888\"/>\n",
                left,
                top,
                pw,
                ph));
        for (double t = 0; t <= yMax * 1.0001; t += step) {
            double y = top + ph - ph * t / yMax;
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                            + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    left,
                    left + pw,
                    y,
                    y,
                    left - 5,
                    y + 4,
                    tick(t)));
        }
        b.append(String.format(
                Locale.ROOT,
                "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\" "
                        + "font-size=\"12\">CPU µs per I/O</text>\n",
                top + ph / 2));
        for (int p = 0; p < points; p++) {
            int gx = left + 12 + p * groupW;
            for (int i = 0; i < setups; i++) {
                Setup s = c.setups().get(i);
                RunResult r = ok(c.cell(s, p));
                int x = gx + i * (2 * barW + 6);
                if (r == null) {
                    b.append(String.format(
                            Locale.ROOT,
                            "<text x=\"%d\" y=\"%d\" fill=\"#a00\" text-anchor=\"middle\">" + "n/a</text>\n",
                            x + barW,
                            top + ph - 4));
                    continue;
                }
                double[] v = {r.initiatorCpuPerIo(), r.targetCpuPerIo()};
                for (int k = 0; k < 2; k++) {
                    int bx = x + k * barW;
                    if (Double.isNaN(v[k])) {
                        b.append(String.format(
                                Locale.ROOT,
                                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">?</text>\n",
                                bx + barW / 2,
                                top + ph - 4));
                        continue;
                    }
                    double bh = ph * v[k] / yMax;
                    b.append(String.format(
                            Locale.ROOT,
                            "<rect class=\"bar\" x=\"%d\" y=\"%.1f\" width=\"%d\" "
                                    + "height=\"%.1f\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"%s\"><title>%s %s %s: %.2f µs"
                                    + "</title></rect>\n",
                            bx,
                            top + ph - bh,
                            barW - 1,
                            bh,
                            color(i),
                            k == 0 ? "1" : "0.35",
                            color(i),
                            esc(s.name()),
                            esc(c.points().get(p).label()),
                            k == 0 ? "initiator" : "target",
                            v[k]));
                }
            }
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    gx + (groupW - 24) / 2,
                    top + ph + 16,
                    esc(c.points().get(p).label())));
        }
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">workload " + "point</text>\n",
                left + pw / 2,
                top + ph + 36));
        int ly = top + ph + 60;
        for (int i = 0; i < setups; i++) {
            int lx = left + (i % 2) * 300;
            int yy = ly + (i / 2) * 18;
            b.append(String.format(
                    Locale.ROOT,
                    "<g class=\"legend\"><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"10\" "
                            + "fill=\"%s\"/><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"10\" fill=\"%s\" fill-opacity=\"0.35\" "
                            + "stroke=\"%s\"/><text x=\"%d\" y=\"%d\">%s: initiator (solid), target (light)</text></g>\n",
                    lx,
                    yy - 9,
                    color(i),
                    lx + 14,
                    yy - 9,
                    color(i),
                    color(i),
                    lx + 32,
                    yy,
                    esc(label(c.setups().get(i)))));
        }
        b.append("</svg>\n");
        return b.toString();
    }

    private static double nz(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    static double niceStep(double raw) {
        if (raw <= 0) {
            return 1;
        }
        double mag = Math.pow(10, Math.floor(Math.log10(raw)));
        double f = raw / mag;
        return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
    }

    static String tick(double v) {
        if (v >= 1e6) {
            return trim(v / 1e6) + "M";
        }
        if (v >= 1e4) {
            return trim(v / 1e3) + "k";
        }
        return trim(v);
    }

    static String trim(double v) {
        if (v == Math.rint(v)) {
            return Long.toString((long) v);
        }
        String s = String.format(Locale.ROOT, v < 1 ? "%.3f" : v < 10 ? "%.2f" : "%.1f", v);
        return s.contains(".") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
    }

    static String esc(String s) {
        if (s == null) {
            return "";
        }
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}

package io.nvmeof.perf;

import static io.nvmeof.perf.HtmlReport.label;
import static io.nvmeof.perf.HtmlReport.ok;
import static io.nvmeof.perf.ReportText.color;
import static io.nvmeof.perf.ReportText.esc;
import static io.nvmeof.perf.ReportText.niceStep;

import java.util.Locale;

/** The compare report's SVG bar chart of CPU per I/O, initiator and target, per workload point and setup; stateless. */
final class CpuChart {
    private CpuChart() {}

    /** Grouped bars: per workload point, per setup, initiator (solid) and target (light) CPU µs per I/O. */
    static String svg(CompareCommand.Comparison c) {
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
        ChartFrame.plotArea(b, left, top, pw, ph);
        for (double t = 0; t <= yMax * 1.0001; t += step) {
            double y = top + ph - ph * t / yMax;
            ChartFrame.gridLine(b, left, pw, y, t);
        }
        ChartFrame.yAxisLabel(b, top, ph, "CPU µs per I/O");
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
}

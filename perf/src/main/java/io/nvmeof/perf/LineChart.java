package io.nvmeof.perf;

import static io.nvmeof.perf.ReportText.esc;
import static io.nvmeof.perf.ReportText.niceStep;
import static io.nvmeof.perf.ReportText.tick;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** An SVG line chart of the compare report (latency percentiles, IOPS against queue depth); stateless. */
final class LineChart {
    private LineChart() {}

    /** One plotted line: a label, a colour and y values (NaN: no point) at the chart's x positions. */
    record Series(String label, String color, double[] y) {}

    /** A line chart over categorical x positions; y linear from 0 or logarithmic. */
    static String svg(
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
        ChartFrame.plotArea(b, left, top, pw, ph);
        for (double t : ticks) {
            if (t < yMin || t > yMax * 1.0001) {
                continue;
            }
            double y = ypos.applyAsDouble(Math.max(t, logY ? yMin : 0));
            ChartFrame.gridLine(b, left, pw, y, t);
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
        ChartFrame.yAxisLabel(b, top, ph, yLabel);
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
}

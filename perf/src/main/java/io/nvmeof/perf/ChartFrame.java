package io.nvmeof.perf;

import static io.nvmeof.perf.ReportText.esc;
import static io.nvmeof.perf.ReportText.tick;

import java.util.Locale;

/**
 * The parts of a compare-report chart that {@link LineChart} and {@link CpuChart} draw the same way: the plot area, a
 * horizontal grid line with its y tick label, and the rotated y-axis label. Stateless; appends SVG to the caller's
 * builder.
 */
final class ChartFrame {
    private ChartFrame() {}

    /** The plot area's rectangle: {@code left}, {@code top}, {@code pw} × {@code ph}. */
    static void plotArea(StringBuilder b, int left, int top, int pw, int ph) {
        b.append(String.format(
                Locale.ROOT,
                "<rect class=\"plot-area\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                        + "fill=\"#fafafa\" stroke=\"#888\"/>\n",
                left,
                top,
                pw,
                ph));
    }

    /** A grid line across the plot area at height {@code y}, labelled with the value {@code t} left of the area. */
    static void gridLine(StringBuilder b, int left, int pw, double y, double t) {
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

    /** The y-axis label, rotated, left of a plot area that starts at {@code top} and is {@code ph} high. */
    static void yAxisLabel(StringBuilder b, int top, int ph, String label) {
        b.append(String.format(
                Locale.ROOT,
                "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\" "
                        + "font-size=\"12\">%s</text>\n",
                top + ph / 2,
                esc(label)));
    }
}

package io.nvmeof.perf;

import java.util.Locale;

/**
 * How the compare report writes things: HTML/SVG escaping, axis steps and tick labels, the setups' colours. Shared by
 * {@link HtmlReport}, {@link LineChart} and {@link CpuChart}; stateless.
 */
final class ReportText {
    static final String[] COLORS = {
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"
    };

    private ReportText() {}

    static String color(int i) {
        return COLORS[i % COLORS.length];
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

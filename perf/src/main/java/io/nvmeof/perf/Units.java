package io.nvmeof.perf;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * fio's value syntax: sizes with k/m/g/t suffixes (powers of 1024, as fio's default kb_base=1024), times in seconds
 * unless suffixed (us, ms, s, m, h), colon-separated percentile lists. Every bad value is an
 * {@link IllegalArgumentException} naming the option and the value.
 */
public final class Units {
    private Units() {}

    /** A size: {@code 4096}, {@code 4k}, {@code 4K}, {@code 4KiB}, {@code 4kb}, {@code 1m}, {@code 2g}, {@code 1t}. */
    public static long size(String option, String value) {
        String v = value == null ? "" : value.trim();
        if (v.isEmpty()) {
            throw bad(option, value, "a size such as 4096, 4k, 128k, 1m or 1g");
        }
        String lower = v.toLowerCase(Locale.ROOT);
        int end = lower.length();
        // strip an optional "b", "ib" or "iB" after the unit letter
        if (lower.endsWith("ib")) {
            end -= 2;
        } else if (lower.endsWith("b") && end >= 2 && Character.isLetter(lower.charAt(end - 2))) {
            end -= 1;
        } else if (lower.endsWith("b") && end == 1) {
            throw bad(option, value, "a size such as 4096, 4k, 128k, 1m or 1g");
        }
        String body = lower.substring(0, end);
        long mult = 1;
        if (!body.isEmpty()) {
            char u = body.charAt(body.length() - 1);
            int shift = switch (u) {
                case 'k' -> 10;
                case 'm' -> 20;
                case 'g' -> 30;
                case 't' -> 40;
                case 'p' -> 50;
                default -> -1;
            };
            if (shift > 0) {
                mult = 1L << shift;
                body = body.substring(0, body.length() - 1);
            } else if (!Character.isDigit(u)) {
                throw bad(option, value, "a size such as 4096, 4k, 128k, 1m or 1g (unknown unit '" + u + "')");
            }
        }
        if (body.isEmpty() || !body.chars().allMatch(Character::isDigit)) {
            throw bad(option, value, "a size such as 4096, 4k, 128k, 1m or 1g");
        }
        try {
            return Math.multiplyExact(Long.parseLong(body), mult);
        } catch (ArithmeticException | NumberFormatException e) {
            throw bad(option, value, "a size that fits in 63 bits");
        }
    }

    /** A duration in nanoseconds: {@code 10} (seconds), {@code 10s}, {@code 500ms}, {@code 250us}, {@code 2m}, {@code 1h}. */
    public static long timeNanos(String option, String value) {
        String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < v.length() && (Character.isDigit(v.charAt(i)) || v.charAt(i) == '.')) {
            i++;
        }
        String num = v.substring(0, i);
        String unit = v.substring(i);
        if (num.isEmpty() || num.chars().filter(c -> c == '.').count() > 1) {
            throw bad(option, value, "a time such as 10 (seconds), 10s, 500ms or 2m");
        }
        double scale = switch (unit) {
            case "", "s", "sec" -> 1e9;
            case "ms", "msec" -> 1e6;
            case "us", "usec" -> 1e3;
            case "m", "min" -> 60e9;
            case "h" -> 3600e9;
            default ->
                throw bad(option, value, "a time such as 10 (seconds), 10s, 500ms or 2m (unknown unit '" + unit + "')");
        };
        double n = Double.parseDouble(num) * scale;
        if (n > 366 * 24 * 3600e9) {
            throw bad(option, value, "a time of at most a year");
        }
        return (long) n;
    }

    /** An integer in {@code [min, max]}. */
    public static int integer(String option, String value, int min, int max) {
        long v;
        try {
            v = Long.parseLong(value == null ? "" : value.trim());
        } catch (NumberFormatException e) {
            throw bad(option, value, "an integer from " + min + " to " + max);
        }
        if (v < min || v > max) {
            throw bad(option, value, "an integer from " + min + " to " + max);
        }
        return (int) v;
    }

    /** fio's percentile_list: up to 20 values in (0, 100], separated by ':' (',' also accepted). */
    public static double[] percentiles(String option, String value) {
        String v = value == null ? "" : value.trim();
        String[] parts = v.split("[:,]");
        if (v.isEmpty() || parts.length > 20) {
            throw bad(option, value, "1 to 20 percentiles separated by ':', e.g. 50:99:99.9");
        }
        double[] out = new double[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                out[i] = Double.parseDouble(parts[i]);
            } catch (NumberFormatException e) {
                throw bad(
                        option,
                        value,
                        "percentiles separated by ':', each a number in (0, 100]; '" + parts[i] + "' is not a number");
            }
            if (!(out[i] > 0 && out[i] <= 100)) {
                throw bad(option, value, "percentiles in (0, 100]; " + parts[i] + " is outside");
            }
        }
        return out;
    }

    /** A comma-separated list, for compare's sweeps ({@code --iodepth 1,4,16}); each item parsed by the caller. */
    public static List<String> list(String option, String value) {
        List<String> out = new ArrayList<>();
        for (String s : (value == null ? "" : value).split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        if (out.isEmpty()) {
            throw bad(option, value, "one value or a comma-separated list");
        }
        return out;
    }

    static IllegalArgumentException bad(String option, String value, String expected) {
        return new IllegalArgumentException("invalid value '" + value + "' for --" + option + ": expected " + expected);
    }

    /** Human size with binary units, fio style: 4KiB, 1.5MiB. */
    public static String bytes(double b) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        int u = 0;
        while (b >= 1024 && u < units.length - 1) {
            b /= 1024;
            u++;
        }
        return (b == Math.rint(b) ? String.format(Locale.ROOT, "%d", (long) b) : String.format(Locale.ROOT, "%.1f", b))
                + units[u];
    }

    /** Decimal size, as fio prints in parentheses: "185MB". */
    public static String bytesSi(double b) {
        String[] units = {"B", "kB", "MB", "GB", "TB"};
        int u = 0;
        while (b >= 1000 && u < units.length - 1) {
            b /= 1000;
            u++;
        }
        return (b == Math.rint(b) ? String.format(Locale.ROOT, "%d", (long) b) : String.format(Locale.ROOT, "%.1f", b))
                + units[u];
    }

    /** IOPS as fio prints them: 45.2k, 1234. */
    public static String count(double n) {
        if (n >= 1e6) {
            return String.format(Locale.ROOT, "%.2fM", n / 1e6);
        }
        if (n >= 1e4) {
            return String.format(Locale.ROOT, "%.1fk", n / 1e3);
        }
        return String.format(Locale.ROOT, "%d", Math.round(n));
    }

    /** A short duration label: 4k, 128k, 1m for block sizes. */
    public static String shortSize(long b) {
        if (b % (1L << 30) == 0) {
            return (b >> 30) + "g";
        }
        if (b % (1L << 20) == 0) {
            return (b >> 20) + "m";
        }
        if (b % 1024 == 0) {
            return (b >> 10) + "k";
        }
        return Long.toString(b);
    }
}

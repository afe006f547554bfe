package io.nvmeof.target.config;

import java.util.Locale;

/** Parses and prints byte sizes the way storage people write them: 512, 4k, 1G, 1TiB (powers of 1024). */
public final class Sizes {
    private Sizes() {}

    /**
     * Parses a size such as {@code 4096}, {@code 4k}, {@code 1G}, {@code 2TiB}. Suffixes k/m/g/t/p (with optional
     * "i" and "b") are powers of 1024.
     *
     * @throws IllegalArgumentException with a readable message for anything else
     */
    public static long parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("a size is required (e.g. 1G, 512M, 4096)");
        }
        String s = text.trim().toLowerCase(Locale.ROOT);
        int end = s.length();
        if (s.endsWith("ib")) {
            end -= 2;
        } else if (s.endsWith("b")) {
            end -= 1;
        }
        int shift = 0;
        if (end > 0) {
            switch (s.charAt(end - 1)) {
                case 'k':
                    shift = 10;
                    end--;
                    break;
                case 'm':
                    shift = 20;
                    end--;
                    break;
                case 'g':
                    shift = 30;
                    end--;
                    break;
                case 't':
                    shift = 40;
                    end--;
                    break;
                case 'p':
                    shift = 50;
                    end--;
                    break;
                default:
                    break;
            }
        }
        String digits = s.substring(0, end).trim();
        long value;
        try {
            value = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a size: '" + text + "' (use e.g. 1G, 512M, 4k or a byte count)");
        }
        if (value < 0) {
            throw new IllegalArgumentException("a size cannot be negative: '" + text + "'");
        }
        if (shift > 0 && value > (Long.MAX_VALUE >>> shift)) {
            throw new IllegalArgumentException("size too large: '" + text + "'");
        }
        return value << shift;
    }

    /** E.g. 1073741824 → "1 GiB", 1536 → "1.5 KiB", 12638255104 → "11.8 GiB", 100 → "100 B". */
    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int u = 0;
        double v = bytes;
        while (u < units.length - 1 && v >= 1024) {
            v /= 1024;
            u++;
        }
        if (v == Math.rint(v)) {
            return (long) v + " " + units[u];
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}

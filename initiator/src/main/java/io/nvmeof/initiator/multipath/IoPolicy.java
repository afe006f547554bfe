package io.nvmeof.initiator.multipath;

import java.util.Locale;

/**
 * How a {@link MultipathNamespace} picks the path of each command, with the Linux host's names and rules
 * (nvme_core's {@code iopolicy}, drivers/nvme/host/multipath.c). Every policy uses only usable paths (controller
 * connected, namespace active, ANA state known) and prefers ANA optimized paths to non-optimized ones; it never uses
 * a path whose ANA state is inaccessible, persistent loss or change.
 */
public enum IoPolicy {
    /**
     * The first optimized path in the order the paths were given, else the first non-optimized one. Linux's default:
     * there it is the nearest path by NUMA distance; a Java process has one node here, and Linux then takes the first
     * path of its list too. When a path earlier in the list becomes optimized again, I/O moves back to it (failback).
     */
    NUMA("numa"),
    /**
     * The next optimized path after the one used last; if no other path is optimized, the last one again if it is;
     * else a non-optimized path (Linux's {@code round-robin}).
     */
    ROUND_ROBIN("round-robin"),
    /**
     * The optimized path with the fewest commands in flight, else the non-optimized one with the fewest (Linux's
     * {@code queue-depth}, which counts per controller; here per path, which is one controller).
     */
    QUEUE_DEPTH("queue-depth");

    private final String linuxName;

    IoPolicy(String linuxName) {
        this.linuxName = linuxName;
    }

    /** The name Linux uses ({@code /sys/module/nvme_core/parameters/iopolicy}) and the URI's {@code iopolicy=}. */
    public String linuxName() {
        return linuxName;
    }

    /**
     * Parses a Linux name ({@code numa}, {@code round-robin}, {@code queue-depth}; case does not matter).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static IoPolicy parse(String name) {
        if (name != null) {
            String n = name.trim().toLowerCase(Locale.ROOT);
            for (IoPolicy p : values()) {
                if (p.linuxName.equals(n)) {
                    return p;
                }
            }
        }
        throw new IllegalArgumentException("iopolicy must be numa, round-robin or queue-depth, not '" + name + "'");
    }
}

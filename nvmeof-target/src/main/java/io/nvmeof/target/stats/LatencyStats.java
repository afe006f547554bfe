package io.nvmeof.target.stats;

import java.util.Arrays;

/**
 * A latency histogram at one moment: the count of completions in each fixed bucket ({@link #UPPER_BOUNDS_NANOS}, then
 * one bucket for everything slower) and the sum of their latencies. Latency runs from the command capsule's arrival to
 * its completion being handed to the transport. The counts are per bucket, not cumulative.
 */
public record LatencyStats(long[] bucketCounts, long sumNanos) {
    /** The buckets' upper bounds, inclusive: 10 µs to 1 s. */
    public static final long[] UPPER_BOUNDS_NANOS = {
        10_000L,
        25_000L,
        50_000L,
        100_000L,
        250_000L,
        500_000L,
        1_000_000L,
        2_500_000L,
        5_000_000L,
        10_000_000L,
        25_000_000L,
        50_000_000L,
        100_000_000L,
        250_000_000L,
        1_000_000_000L
    };

    public LatencyStats {
        bucketCounts = bucketCounts.clone();
        if (bucketCounts.length != UPPER_BOUNDS_NANOS.length + 1) {
            throw new IllegalArgumentException("a histogram has " + (UPPER_BOUNDS_NANOS.length + 1) + " buckets");
        }
    }

    /** The bucket of a latency: a short scan of a constant array (no allocation; used on the I/O path). */
    public static int bucketOf(long nanos) {
        for (int i = 0; i < UPPER_BOUNDS_NANOS.length; i++) {
            if (nanos <= UPPER_BOUNDS_NANOS[i]) {
                return i;
            }
        }
        return UPPER_BOUNDS_NANOS.length;
    }

    /** Completions counted. */
    public long count() {
        return Arrays.stream(bucketCounts).sum();
    }

    @Override
    public long[] bucketCounts() {
        return bucketCounts.clone();
    }

    /** The sum of two histograms. */
    public LatencyStats plus(LatencyStats other) {
        long[] sum = bucketCounts.clone();
        for (int i = 0; i < sum.length; i++) {
            sum[i] += other.bucketCounts[i];
        }
        return new LatencyStats(sum, sumNanos + other.sumNanos);
    }

    public static LatencyStats empty() {
        return new LatencyStats(new long[UPPER_BOUNDS_NANOS.length + 1], 0);
    }
}

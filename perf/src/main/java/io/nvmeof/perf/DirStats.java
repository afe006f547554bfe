package io.nvmeof.perf;

import org.HdrHistogram.Histogram;

/**
 * Statistics of one direction (read or write) of one job: submission, completion and total latency, exact min/max/mean/
 * stddev, an HdrHistogram for percentiles, and per-interval IOPS samples. Written only by the job's own thread;
 * {@link #record} allocates nothing.
 */
public final class DirStats {
    /** Largest latency recorded exactly; longer ones count as this (100 s). */
    static final long MAX_NANOS = 100_000_000_000L;
    /** fio's bandwidth/IOPS sampling interval (log_avg_msec default 500). */
    static final long SAMPLE_NANOS = 500_000_000L;

    final Histogram clat = new Histogram(1, MAX_NANOS, 3);
    final Histogram lat = new Histogram(1, MAX_NANOS, 2);
    final Moments slatM = new Moments();
    final Moments clatM = new Moments();
    final Moments latM = new Moments();
    long ios;
    long bytes;
    /** Measured time of this direction, set when the job ends. */
    long runtimeNanos;

    private long[] samples = new long[64];
    int sampleCount;
    private long sampleEnd;
    private long sampleIos;

    /** Exact min, max, mean and standard deviation of a stream of values. */
    static final class Moments {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        long n;
        double sum;
        double sumSq;

        void add(long v) {
            if (v < min) {
                min = v;
            }
            if (v > max) {
                max = v;
            }
            n++;
            sum += v;
            sumSq += (double) v * v;
        }

        void add(Moments o) {
            if (o.n == 0) {
                return;
            }
            min = Math.min(min, o.min);
            max = Math.max(max, o.max);
            n += o.n;
            sum += o.sum;
            sumSq += o.sumSq;
        }

        double mean() {
            return n == 0 ? 0 : sum / n;
        }

        double stddev() {
            if (n < 2) {
                return 0;
            }
            double m = sum / n;
            return Math.sqrt(Math.max(0, (sumSq - n * m * m) / (n - 1)));
        }
    }

    /** Starts the IOPS sampling clock (at the start of the measured window). */
    void startSampling(long nowNanos, int expectedSamples) {
        sampleEnd = nowNanos + SAMPLE_NANOS;
        if (samples.length < expectedSamples + 2) {
            samples = new long[expectedSamples + 2];
        }
    }

    void record(long slat, long clat, long lat, int bytesMoved, long completionNanos) {
        slatM.add(slat);
        clatM.add(clat);
        latM.add(lat);
        this.clat.recordValue(clamp(clat));
        this.lat.recordValue(clamp(lat));
        ios++;
        bytes += bytesMoved;
        tick(completionNanos);
        sampleIos++;
    }

    /** Closes sampling intervals that ended before {@code nowNanos}. */
    void tick(long nowNanos) {
        while (sampleEnd != 0 && nowNanos >= sampleEnd) {
            if (sampleCount < samples.length) {
                samples[sampleCount++] = sampleIos;
            }
            sampleIos = 0;
            sampleEnd += SAMPLE_NANOS;
        }
    }

    private static long clamp(long v) {
        return v < 1 ? 1 : Math.min(v, MAX_NANOS);
    }

    /** IOPS of each full sampling interval. */
    double[] iopsSamples() {
        double[] out = new double[sampleCount];
        for (int i = 0; i < sampleCount; i++) {
            out[i] = samples[i] * 1e9 / SAMPLE_NANOS;
        }
        return out;
    }

    double iops() {
        return runtimeNanos <= 0 ? 0 : ios * 1e9 / runtimeNanos;
    }

    double bytesPerSecond() {
        return runtimeNanos <= 0 ? 0 : bytes * 1e9 / runtimeNanos;
    }

    /** Adds another job's statistics (for the "all jobs" total); runtime is the longest. */
    void add(DirStats o) {
        clat.add(o.clat);
        lat.add(o.lat);
        slatM.add(o.slatM);
        clatM.add(o.clatM);
        latM.add(o.latM);
        ios += o.ios;
        bytes += o.bytes;
        runtimeNanos = Math.max(runtimeNanos, o.runtimeNanos);
        // per-interval totals: sum the jobs' samples index by index
        int n = Math.max(sampleCount, o.sampleCount);
        if (samples.length < n) {
            samples = java.util.Arrays.copyOf(samples, n);
        }
        for (int i = 0; i < o.sampleCount; i++) {
            samples[i] += o.samples[i];
        }
        sampleCount = n;
    }
}

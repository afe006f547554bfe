package io.nvmeof.target;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.target.stats.LatencyStats;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.TreeMap;

/**
 * The statistics of one connected queue: commands, bytes, errors by status, in-flight commands and completion latency
 * in fixed buckets. Written only by the queue's thread ({@link QueueSession}) with opaque stores into preallocated
 * arrays (no lock, no allocation per I/O: the per-namespace array is allocated once per namespace the queue touches,
 * the error counts at the first error, so an idle queue holds about 1 KiB here);
 * read by any thread at scrape time ({@link StatsRegistry}) with opaque loads, so a reader sees each counter whole,
 * possibly a few I/Os late. Fabrics commands (Connect, Property Get/Set, Disconnect) are not counted.
 */
final class QueueCounters {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle ARRAYS = MethodHandles.arrayElementVarHandle(long[][].class);

    static final int READS = 0;
    static final int WRITES = 1;
    static final int BYTES_READ = 2;
    static final int BYTES_WRITTEN = 3;
    static final int OTHER = 4;
    static final int ARRIVED = 5;
    static final int COMPLETED = 6;
    private static final int COUNTS = 7;

    /** Latency kinds: one histogram each. */
    static final int LATENCY_READ = 0;

    static final int LATENCY_WRITE = 1;
    static final int LATENCY_OTHER = 2;
    private static final int KINDS = 3;
    private static final int BUCKETS = LatencyStats.UPPER_BOUNDS_NANOS.length + 1; // + the +Inf bucket
    /** Status SCT (3 bits) and SC (8 bits): 2048 codes. */
    private static final int STATUS_CODES = 1 << 11;

    /** Per namespace: reads, writes, bytes read, bytes written (the first four of the counts above). */
    static final int NAMESPACE_COUNTS = 4;

    private static final int MAX_NSID = 1024;

    final Subsystem subsystem;
    final Controller controller;
    final int qid;

    private final long[] counts = new long[COUNTS];
    /**
     * Counts by status code, allocated at the first error (16 KiB): most queues never see one, and an idle target
     * with hundreds of queues would otherwise hold this much per queue for nothing. Written by the queue's thread;
     * read by others through the volatile field.
     */
    private volatile long[] errors;

    private final long[] latencyBuckets = new long[KINDS * BUCKETS];
    private final long[] latencySumNanos = new long[KINDS];
    /**
     * Indexed by NSID; an entry is allocated the first time this queue touches that namespace, and the table grows to
     * the highest NSID touched (at most {@value #MAX_NSID}) instead of being allocated for all of them up front.
     * Written by the queue's thread; read by others through the volatile field.
     */
    private volatile long[][] namespaces = new long[0][];

    QueueCounters(Subsystem subsystem, Controller controller, int qid) {
        this.subsystem = subsystem;
        this.controller = controller;
        this.qid = qid;
    }

    private static void add(long[] a, int i, long delta) {
        LONGS.setOpaque(a, i, (long) LONGS.getOpaque(a, i) + delta);
    }

    private static long get(long[] a, int i) {
        return (long) LONGS.getOpaque(a, i);
    }

    /** A command (not a fabrics command) arrived on this queue. */
    void arrived() {
        add(counts, ARRIVED, 1);
    }

    /** A command that {@link #arrived()} completes with {@code status}. */
    void completed(int opcode, int nsid, int status, int dataLength, long arrivalNanos) {
        add(counts, COMPLETED, 1);
        int kind = LATENCY_OTHER;
        boolean success = Status.isSuccess(status);
        if (!success) {
            long[] e = errors;
            if (e == null) {
                e = new long[STATUS_CODES]; // once per queue, at its first error
                errors = e;
            }
            add(e, (status >>> 1) & (STATUS_CODES - 1), 1);
        }
        if (qid > 0 && (opcode == NvmOpcode.READ.code() || opcode == NvmOpcode.WRITE.code())) {
            boolean read = opcode == NvmOpcode.READ.code();
            kind = read ? LATENCY_READ : LATENCY_WRITE;
            if (success) {
                add(counts, read ? READS : WRITES, 1);
                add(counts, read ? BYTES_READ : BYTES_WRITTEN, dataLength);
                if (nsid > 0 && nsid <= MAX_NSID) {
                    long[][] table = namespaces;
                    if (nsid >= table.length) {
                        // once per higher NSID this queue touches, never per I/O; the old table's entries carry over
                        table = java.util.Arrays.copyOf(table, nsid + 1);
                        namespaces = table;
                    }
                    long[] ns = table[nsid];
                    if (ns == null) {
                        ns = new long[NAMESPACE_COUNTS]; // once per namespace and queue, never per I/O
                        ARRAYS.setRelease(table, nsid, ns);
                    }
                    add(ns, read ? READS : WRITES, 1);
                    add(ns, read ? BYTES_READ : BYTES_WRITTEN, dataLength);
                }
            }
        } else {
            add(counts, OTHER, 1);
        }
        if (arrivalNanos != 0) {
            long nanos = System.nanoTime() - arrivalNanos;
            add(latencyBuckets, kind * BUCKETS + LatencyStats.bucketOf(nanos), 1);
            add(latencySumNanos, kind, nanos);
        }
    }

    long count(int which) {
        return get(counts, which);
    }

    long inFlight() {
        return Math.max(0, get(counts, ARRIVED) - get(counts, COMPLETED));
    }

    /** Non-zero error counts by status (SCT/SC as {@link Status#of}, no DNR/More). */
    Map<Integer, Long> errorsByStatus() {
        Map<Integer, Long> out = new TreeMap<>();
        long[] e = errors;
        if (e == null) {
            return out;
        }
        for (int i = 0; i < STATUS_CODES; i++) {
            long n = get(e, i);
            if (n != 0) {
                out.put(i << 1, n);
            }
        }
        return out;
    }

    LatencyStats latency(int kind) {
        long[] buckets = new long[BUCKETS];
        for (int i = 0; i < BUCKETS; i++) {
            buckets[i] = get(latencyBuckets, kind * BUCKETS + i);
        }
        return new LatencyStats(buckets, get(latencySumNanos, kind));
    }

    /** The counts of namespace {@code nsid} on this queue (reads, writes, bytes read, bytes written), or null. */
    long[] namespace(int nsid) {
        long[][] table = namespaces;
        if (nsid <= 0 || nsid >= table.length) {
            return null;
        }
        long[] ns = (long[]) ARRAYS.getAcquire(table, nsid);
        if (ns == null) {
            return null;
        }
        long[] out = new long[NAMESPACE_COUNTS];
        for (int i = 0; i < NAMESPACE_COUNTS; i++) {
            out[i] = get(ns, i);
        }
        return out;
    }

    /** The highest NSID this queue has counts for so far (0: none). */
    int maxNsid() {
        return Math.max(0, namespaces.length - 1);
    }
}

package io.nvmeof.perf.jmh;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * What NVMe/TCP digests (nvmeof-protocol.md §5.8) add per 4 KiB read on each side, in <em>thread CPU time</em>
 * rather than JMH's wall time, so that a machine shared with other busy processes still gives usable figures
 * (preemption stops the thread's CPU clock; it does not stop the wall clock). It runs {@link PduCodecBenchmark}'s
 * two operations with digests off and on, alternated in rounds on one {@code FastThreadLocalThread} (as an event
 * loop), and prints CPU nanoseconds per operation:
 * <ul>
 *   <li>host: {@code decodeReadCompletion} (C2HData header and data digests, CapsuleResp header digest);</li>
 *   <li>target: {@code encodeReadCompletion} (C2HData HDGST, the 4 KiB DDGST, CapsuleResp HDGST).</li>
 * </ul>
 * Usage: {@code java -cp <perf jar>:<perf/build/lib/*> io.nvmeof.perf.jmh.DigestCpuCost [operations per round]};
 * pin it with {@code taskset -c 0}. Results are in perf/README.md ("Digests").
 */
public final class DigestCpuCost {
    private DigestCpuCost() {}

    public static void main(String[] args) throws InterruptedException {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        Thread t = new FastThreadLocalThread(() -> run(n), "digest-cpu-cost");
        t.start();
        t.join();
    }

    private static void run(int n) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        PduCodecBenchmark off = new PduCodecBenchmark();
        off.digests = false;
        off.setUp();
        PduCodecBenchmark on = new PduCodecBenchmark();
        on.digests = true;
        on.setUp();
        long sink = 0;
        System.out.println("CPU ns per 4 KiB read completion (round: host decode off / on, target encode off / on)");
        for (int round = 1; round <= 7; round++) {
            long t0 = mx.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                sink += off.decodeReadCompletion();
            }
            long t1 = mx.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                sink += on.decodeReadCompletion();
            }
            long t2 = mx.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                sink += off.encodeReadCompletion();
            }
            long t3 = mx.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                sink += on.encodeReadCompletion();
            }
            long t4 = mx.getCurrentThreadCpuTime();
            System.out.printf(
                    "round %d%s: host %.0f / %.0f (+%.0f), target %.0f / %.0f (+%.0f)%n",
                    round,
                    round <= 2 ? " (warm-up)" : "",
                    (t1 - t0) / (double) n,
                    (t2 - t1) / (double) n,
                    (t2 - t1 - (t1 - t0)) / (double) n,
                    (t3 - t2) / (double) n,
                    (t4 - t3) / (double) n,
                    (t4 - t3 - (t3 - t2)) / (double) n);
        }
        off.tearDown();
        on.tearDown();
        if (sink == 42) {
            System.out.println(); // keeps the results live for the JIT
        }
    }
}

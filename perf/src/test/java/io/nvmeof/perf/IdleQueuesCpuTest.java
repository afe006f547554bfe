package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * With 32 I/O queues (8 controllers x 4, plus 8 admin queues) connected and no I/O, the NVMe/TCP event loops of the
 * target and of the host sleep: their CPU time over a second, from {@link ThreadMXBean}, stays far below what one
 * spinning thread uses in that second. Only Keep Alive (every KATO/2 = 2.5 s per controller) wakes them. Functional,
 * not a speed test: the bound is 15 % of a core for all loop threads of a side together, and a single loop that kept
 * polling (the spin-then-sleep window never ending, or a busy-poll loop that never stops) takes several times that.
 */
class IdleQueuesCpuTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").blockSize(4096).build();

    private static final long BOUND_NANOS = 150_000_000L; // 15 % of a core over 1 s

    /** CPU nanoseconds of every live thread whose name starts with {@code prefix}. */
    private static Map<Long, Long> cpu(ThreadMXBean mx, String prefix) {
        Map<Long, Long> out = new HashMap<>();
        for (ThreadInfo t : mx.dumpAllThreads(false, false)) {
            if (t.getThreadName().startsWith(prefix)) {
                long ns = mx.getThreadCpuTime(t.getThreadId());
                if (ns >= 0) {
                    out.put(t.getThreadId(), ns);
                }
            }
        }
        return out;
    }

    private static long used(Map<Long, Long> before, Map<Long, Long> after) {
        long sum = 0;
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        return sum;
    }

    @Test
    void idleQueuesLeaveTheEventLoopsAsleep() throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        assertTrue(mx.isThreadCpuTimeSupported());
        mx.setThreadCpuTimeEnabled(true);
        List<Controller> ctrls = new ArrayList<>();
        try {
            ByteBuffer buf = ByteBuffer.allocateDirect(4096);
            for (int c = 0; c < 8; c++) {
                Controller ctrl = Nvme.connect(target.uri("queues=4&depth=4"));
                ctrls.add(ctrl);
                for (int q = 0; q < 4; q++) {
                    Namespace ns = ctrl.namespace().onQueue(q);
                    ns.read(q, 1, buf); // every connection has had traffic: each loop started its spin window
                }
            }
            assertEquals(8, ctrls.size());
            Thread.sleep(500); // the spin windows (200 µs) are long over
            Map<Long, Long> t0 = cpu(mx, "nvme-tcp-io-");
            Map<Long, Long> h0 = cpu(mx, "nvme-tcp-host-");
            long start = System.nanoTime();
            Thread.sleep(1000);
            Map<Long, Long> t1 = cpu(mx, "nvme-tcp-io-");
            Map<Long, Long> h1 = cpu(mx, "nvme-tcp-host-");
            long window = System.nanoTime() - start;
            long targetNs = used(t0, t1);
            long hostNs = used(h0, h1);
            System.out.printf(
                    "idle 32 I/O queues over %.2f s: target loops %.2f ms CPU (%d threads), host loops %.2f ms (%d)%n",
                    window / 1e9, targetNs / 1e6, t1.size(), hostNs / 1e6, h1.size());
            assertTrue(t1.size() > 0 && h1.size() > 0, "found the loop threads of both sides");
            assertTrue(targetNs < BOUND_NANOS, "the target's loops used " + targetNs / 1e6 + " ms of CPU in 1 s idle");
            assertTrue(hostNs < BOUND_NANOS, "the host's loops used " + hostNs / 1e6 + " ms of CPU in 1 s idle");
        } finally {
            for (Controller c : ctrls) {
                c.close();
            }
        }
    }
}

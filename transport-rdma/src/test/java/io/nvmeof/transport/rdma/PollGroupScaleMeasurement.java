package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.transport.rdma.soft.SoftRdmaProvider;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A measurement, not a test (it asserts nothing, and runs only with {@code -Dpollgroups.measure=true}): CONTROLLERS ×
 * (admin + 4 I/O queues) connected over the software RNIC (emulated) to one listener with 2 poll groups, hosts in
 * this JVM (the perf tool's host, one thread per queue, cannot keep 320 queues alive on one core); prints the poll-group
 * threads' CPU over 10 s with every queue idle, and the target's thread count. Run:
 * {@code mvn -pl transport-rdma test -Dtest=PollGroupScaleMeasurement -Dpollgroups.measure=true}.
 */
@EnabledIfSystemProperty(named = "pollgroups.measure", matches = "true")
class PollGroupScaleMeasurement {
    @Test
    void idleGroupsWith64x4Queues() throws Exception {
        int controllers = Integer.getInteger("pollgroups.controllers", 64);
        RdmaTransport transport = new RdmaTransport(new SoftRdmaProvider());
        FakeCore core = new FakeCore();
        RdmaTargetListener listener = (RdmaTargetListener) transport.listen(
                new ListenerOptions(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, 128, 4096, 2, false),
                core);
        List<RdmaHostQueue> hosts = new ArrayList<>();
        try {
            for (int c = 0; c < controllers; c++) {
                for (int q = 0; q <= 4; q++) {
                    int size = q == 0 ? 32 : 2;
                    RdmaHostQueue h = (RdmaHostQueue) transport.connect(new HostQueueOptions(
                            listener.localAddress(), q, size, q == 0 ? 0 : 1, false, false, Duration.ofSeconds(120)));
                    hosts.add(h);
                    TestCommand cc = TestCommand.connect(0, q, size - 1);
                    h.submit(cc);
                    cc.status();
                }
            }
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            List<Thread> groups = new ArrayList<>();
            int cm = 0;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("nvme-rdma-pg")) {
                    groups.add(t);
                } else if (t.getName()
                        .startsWith("softrnic-cm-" + listener.localAddress().getPort())) {
                    cm++;
                }
            }
            Thread.sleep(2000);
            long before = 0;
            for (Thread t : groups) {
                before += mx.getThreadCpuTime(t.getId());
            }
            long t0 = System.nanoTime();
            Thread.sleep(10_000);
            long wall = System.nanoTime() - t0;
            long cpu = -before;
            for (Thread t : groups) {
                cpu += mx.getThreadCpuTime(t.getId());
            }
            System.out.printf(
                    "MEASURE %d queues (%d controllers x (admin + 4 I/O)), %d poll-group threads, %d soft-RNIC CM"
                            + " reader threads on the target side (blocked in socket reads): poll groups used %.2f%%"
                            + " of one core over %.1f s idle (software RNIC, emulated; load %s)%n",
                    listener.openQueues(),
                    controllers,
                    groups.size(),
                    cm,
                    100.0 * cpu / wall,
                    wall / 1e9,
                    java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
                            .trim());
        } finally {
            for (RdmaHostQueue h : hosts) {
                h.close();
            }
            listener.close();
        }
    }
}

package io.nvmeof.transport.rdma;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;

/**
 * The CPU time some threads use over a window of wall time, after a pause to let them settle (past any spin window
 * and work in flight). Tests use it only to tell a sleeping thread from a spinning one, with a bound far from both;
 * never to assert speed.
 *
 * @param wallNanos the window's wall time
 * @param cpuNanos each thread's CPU time in the window, in the order given
 */
record ThreadCpu(long wallNanos, long[] cpuNanos) {
    static ThreadCpu over(List<Thread> threads, long settleMillis, long windowMillis) throws InterruptedException {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread.sleep(settleMillis);
        long[] cpu = new long[threads.size()];
        for (int i = 0; i < cpu.length; i++) {
            cpu[i] = -mx.getThreadCpuTime(threads.get(i).getId());
        }
        long t0 = System.nanoTime();
        Thread.sleep(windowMillis);
        long wall = System.nanoTime() - t0;
        for (int i = 0; i < cpu.length; i++) {
            cpu[i] += mx.getThreadCpuTime(threads.get(i).getId());
        }
        return new ThreadCpu(wall, cpu);
    }

    long totalCpuNanos() {
        long sum = 0;
        for (long c : cpuNanos) {
            sum += c;
        }
        return sum;
    }
}

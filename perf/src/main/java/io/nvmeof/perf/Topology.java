package io.nvmeof.perf;

/**
 * How a run's I/O queues are laid out on the target: {@code controllers} connections (controllers), each with
 * {@code queuesPerController} I/O queues, one job (one thread, {@code iodepth} I/Os in flight) per queue; and an idle
 * phase before the I/O. The default is fio's: one controller with one I/O queue per job ({@code --numjobs}).
 *
 * @param controllers         controllers opened to the same target ({@code --controllers})
 * @param queuesPerController I/O queues per controller, each driven by its own job ({@code --nr_io_queues}, named
 *                            after nvme-cli's {@code connect --nr-io-queues}; SPDK's {@code spdk_nvme_perf -P})
 * @param idleNanos           how long every queue stays connected with no I/O before the jobs start; the CPU of both
 *                            sides over that time is reported ({@code --idle_seconds}; 0: no idle phase)
 */
public record Topology(int controllers, int queuesPerController, long idleNanos) {
    public static final int MAX_CONTROLLERS = 256;
    /** The most queues (= jobs) of one run. */
    public static final int MAX_QUEUES = 1024;

    public Topology {
        if (controllers < 1 || queuesPerController < 1 || idleNanos < 0) {
            throw new IllegalArgumentException("controllers and queues must be at least 1, idle time not negative");
        }
    }

    /** fio's layout: one controller with one I/O queue per job. */
    public static Topology perJob(int numjobs) {
        return new Topology(numjobs, 1, 0);
    }

    /** All I/O queues, i.e. jobs. */
    public int queues() {
        return controllers * queuesPerController;
    }

    /** The controller of job {@code job}. */
    public int controllerOf(int job) {
        return job / queuesPerController;
    }

    /** The I/O queue (0-based, within its controller) of job {@code job}. */
    public int queueOf(int job) {
        return job % queuesPerController;
    }
}

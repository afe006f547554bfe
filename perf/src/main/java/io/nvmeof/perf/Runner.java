package io.nvmeof.perf;

import io.nvmeof.initiator.BlockNamespace;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.ControllerState;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.initiator.multipath.MultipathNamespace;
import io.nvmeof.initiator.multipath.PathStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/** Runs one workload over one setup against one target URI: connects the jobs, ramps, measures, collects. */
public final class Runner {
    /** A job's {@code end} before the runner has set it: run on (System.nanoTime values never get this far). */
    static final long UNTIL_TOLD = Long.MAX_VALUE / 2;

    /** Thrown for values that only the target can judge (bs vs. block size, region vs. namespace size): exit 2. */
    public static final class BadWorkloadException extends IllegalArgumentException {
        public BadWorkloadException(String message) {
            super(message);
        }
    }

    private Runner() {}

    /**
     * The URI of one job: the base URI's options, the setup's, one I/O queue of iodepth+1 entries.
     */
    static String jobUri(String base, Setup setup, int iodepth) {
        return jobUri(base, setup, iodepth, 1);
    }

    /** The URI of one controller: the base URI's options, the setup's, {@code queues} I/O queues of iodepth+1. */
    static String jobUri(String base, Setup setup, int iodepth, int queues) {
        int q = base.indexOf('?');
        String head = q < 0 ? base : base.substring(0, q);
        Map<String, String> opts = new LinkedHashMap<>();
        if (q >= 0) {
            for (String kv : base.substring(q + 1).split("&")) {
                if (kv.isEmpty()) {
                    continue;
                }
                int eq = kv.indexOf('=');
                opts.put(eq < 0 ? kv : kv.substring(0, eq), eq < 0 ? "" : kv.substring(eq + 1));
            }
        }
        opts.putAll(setup.effectiveUriOptions());
        opts.put("queues", Integer.toString(queues));
        opts.put("depth", Integer.toString(Math.min(NvmeUri.MAX_DEPTH, Math.max(2, iodepth + 1))));
        StringBuilder sb = new StringBuilder(head);
        char sep = '?';
        for (Map.Entry<String, String> e : opts.entrySet()) {
            sb.append(sep).append(e.getKey()).append('=').append(e.getValue());
            sep = '&';
        }
        return sb.toString();
    }

    /**
     * Runs the workload. I/O errors and verify failures are in {@link RunResult#failure()}; a target that cannot be
     * reached throws {@link NvmeException}; a workload that does not fit the namespace throws
     * {@link BadWorkloadException}.
     *
     * @param progress called about every second with a status line while running (may be null)
     */
    public static RunResult run(Workload w, Setup setup, String targetUri, boolean embedded, Consumer<String> progress)
            throws NvmeException, InterruptedException {
        return run(w, Topology.perJob(w.numjobs()), setup, targetUri, embedded, progress);
    }

    /**
     * Runs the workload with the jobs laid out as {@code topo} says: {@code topo.controllers()} controllers of
     * {@code topo.queuesPerController()} I/O queues each, one job per queue ({@code w.numjobs()} must be
     * {@code topo.queues()}), after an idle phase of {@code topo.idleNanos()} if that is not 0.
     */
    public static RunResult run(
            Workload w, Topology topo, Setup setup, String targetUri, boolean embedded, Consumer<String> progress)
            throws NvmeException, InterruptedException {
        if (w.numjobs() != topo.queues()) {
            throw new IllegalArgumentException(
                    "numjobs " + w.numjobs() + " is not the " + topo.queues() + " queues of the topology");
        }
        String uri = jobUri(targetUri, setup, w.iodepth(), topo.queuesPerController());
        boolean multipath = NvmeUri.parse(uri).isMultipath();
        if (multipath && topo.queuesPerController() > 1) {
            throw new IllegalArgumentException(
                    "--nr_io_queues above 1 is for one address: a target URI with several addresses (multipath) "
                            + "gets one multipath namespace per job");
        }
        IdleResult idle = null;
        List<Controller> ctrls = new ArrayList<>();
        List<MultipathNamespace> multi = new ArrayList<>();
        List<BlockNamespace> namespaces = new ArrayList<>();
        List<Job> jobs = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicReference<String> lost = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        try {
            // Each job its own controller, or with several addresses its own multipath namespace over all of them.
            List<BlockNamespace> perController = new ArrayList<>();
            for (int i = 0; i < topo.controllers(); i++) {
                if (multipath) {
                    // Its paths reconnect on their own; a command with no usable path fails after the no-path timeout
                    // and ends the job.
                    MultipathNamespace m = MultipathNamespace.connect(uri);
                    multi.add(m);
                    perController.add(m);
                    continue;
                }
                // A controller lost for good (ctrl_loss_tmo passed) stops every job at once: the run ends with the
                // reason instead of waiting out its runtime.
                Controller c = Nvme.connect(
                        NvmeUri.parse(uri),
                        ConnectOptions.builder()
                                .stateListener(e -> {
                                    if (e.state() == ControllerState.FAILED) {
                                        lost.compareAndSet(null, "the controller was lost: " + e.reason());
                                        for (Job j : jobs) {
                                            j.stop = true;
                                        }
                                    }
                                })
                                .build());
                ctrls.add(c);
                perController.add(
                        perController.isEmpty()
                                ? c.namespace()
                                : c.namespace(perController.get(0).nsid()));
            }
            for (int i = 0; i < w.numjobs(); i++) {
                BlockNamespace n = perController.get(topo.controllerOf(i));
                // several queues per controller: each job's commands go to its own queue, from whichever thread
                namespaces.add(
                        topo.queuesPerController() > 1
                                ? ((io.nvmeof.initiator.Namespace) n).onQueue(topo.queueOf(i))
                                : n);
            }
            BlockNamespace ns0 = namespaces.get(0);
            int blockSize = ns0.blockSize();
            long nsBytes = ns0.sizeBytes();
            if (w.bs() % blockSize != 0) {
                throw new BadWorkloadException(
                        "--bs " + w.bs() + " is not a multiple of the namespace's block size " + blockSize);
            }
            if (w.bs() / blockSize > ns0.maxBlocksPerCommand()) {
                throw new BadWorkloadException("--bs " + w.bs() + " is larger than one command can move ("
                        + (long) ns0.maxBlocksPerCommand() * blockSize + " bytes)");
            }
            if (w.offset() % blockSize != 0) {
                throw new BadWorkloadException(
                        "--offset " + w.offset() + " is not a multiple of the block size " + blockSize);
            }
            if (w.offset() >= nsBytes) {
                throw new BadWorkloadException(
                        "--offset " + w.offset() + " is beyond the namespace (" + nsBytes + " bytes)");
            }
            long size = w.size() == 0 ? nsBytes - w.offset() : w.size();
            if (w.offset() + size > nsBytes) {
                throw new BadWorkloadException("--offset + --size (" + (w.offset() + size) + " bytes) is beyond the "
                        + "namespace (" + nsBytes + " bytes)");
            }
            // fio: each job works over the whole region; with --verify the jobs split it so their blocks never overlap
            long perJob = w.verify() ? size / w.numjobs() : size;
            perJob -= perJob % w.bs();
            if (perJob < w.bs()) {
                throw new BadWorkloadException("the region (--size " + size
                        + (w.verify() && w.numjobs() > 1 ? " split over " + w.numjobs() + " jobs" : "")
                        + ") is smaller than --bs " + w.bs());
            }
            for (int i = 0; i < w.numjobs(); i++) {
                Controller c = multipath ? firstConnected(multi.get(i)) : ctrls.get(topo.controllerOf(i));
                if (c != null && c.ioQueueDepth() < w.iodepth()) {
                    throw new BadWorkloadException("--iodepth " + w.iodepth() + " is deeper than the I/O queue the "
                            + "target grants (" + c.ioQueueDepth() + " entries)");
                }
                long start = w.offset() + (w.verify() ? i * perJob : 0);
                jobs.add(new Job(i, w, namespaces.get(i), start, perJob, w.seed() * 31 + i));
            }
            java.util.function.Supplier<Controller> admin =
                    multipath ? () -> firstConnected(multi.get(0)) : () -> ctrls.get(0);
            if (topo.idleNanos() > 0) {
                idle = idlePhase(topo, admin, jobs, lost);
            }
            long startMillis = System.currentTimeMillis();
            long now = System.nanoTime();
            long ramp = w.verify() ? 0 : w.rampNanos();
            long rampEnd = now + 20_000_000L + ramp;
            // a timed run's window starts once both sides' CPU is sampled and lasts the runtime from there: until then
            // the jobs run on (over an emulated RNIC the target's sample has outlasted a whole runtime)
            long end = w.verify() ? (w.runtimeNanos() > 0 ? rampEnd + w.runtimeNanos() : UNTIL_TOLD) : UNTIL_TOLD;
            for (Job j : jobs) {
                j.rampEnd = rampEnd;
                j.end = end;
                Thread t = new Thread(j, "nvmeof-perf-job-" + j.index);
                t.setDaemon(true);
                threads.add(t);
            }
            TargetStats.Reading tBefore = null;
            CpuSample iBefore = null;
            long jitBefore = -1;
            for (Thread t : threads) {
                t.start();
            }
            Progress prog = progress == null ? null : new Progress(w, jobs, rampEnd, progress);
            if (prog != null) {
                prog.start();
            }
            try {
                sleepUntil(rampEnd, jobs, lost);
                tBefore = readStats(admin);
                iBefore = CpuSample.self();
                jitBefore = JitTime.millis();
                if (!w.verify()) {
                    end = iBefore.clockNanos() + w.runtimeNanos();
                }
                for (Job j : jobs) {
                    j.openWindow(iBefore.clockNanos(), end); // count only I/Os issued after both samples
                }
                CpuSample iAfter;
                long jitAfter;
                TargetStats.Reading tAfter;
                if (!w.verify()) {
                    sleepUntil(end, jobs, lost); // the window ends now (or a job failed): sample, let the jobs drain
                    iAfter = CpuSample.self();
                    jitAfter = JitTime.millis();
                    tAfter = readStats(admin);
                    for (Thread t : threads) {
                        t.join(Math.max(1000, ns0.commandTimeout().toMillis() + 5000));
                    }
                } else {
                    for (Thread t : threads) {
                        t.join();
                    }
                    iAfter = CpuSample.self();
                    jitAfter = JitTime.millis();
                    tAfter = readStats(admin);
                }
                String failure = lost.get();
                for (Job j : jobs) {
                    if (j.failure != null && failure == null) {
                        failure = w.numjobs() > 1 ? "job " + j.index + ": " + j.failure : j.failure;
                    }
                }
                for (Thread t : threads) {
                    if (t.isAlive()) {
                        failure = failure != null ? failure : "a job did not finish within the command timeout";
                    }
                }
                List<RunResult.JobResult> results = new ArrayList<>();
                DirStats tr = new DirStats();
                DirStats tw = new DirStats();
                for (Job j : jobs) {
                    results.add(new RunResult.JobResult(j.name, 1, j.read, j.write));
                    tr.add(j.read);
                    tw.add(j.write);
                }
                CpuSample iCpu = iAfter.minus(iBefore);
                CpuSample tCpu = null;
                long tCommands = -1;
                String unknown = tBefore.unknown();
                int tCpus = 0;
                if (tBefore.known() && tAfter.known()) {
                    tCpu = tAfter.cpu().minus(tBefore.cpu());
                    tCommands = tAfter.commands() - tBefore.commands();
                    tCpus = tAfter.cpus();
                } else if (unknown == null) {
                    unknown = tAfter.unknown();
                }
                long window =
                        Math.max(1, w.verify() || failure != null ? iCpu.clockNanos() : end - iBefore.clockNanos());
                long reconnects = 0;
                for (Controller c : ctrls) {
                    reconnects += c.reconnectCount();
                }
                long failovers = 0;
                for (MultipathNamespace m : multi) {
                    failovers += m.failovers();
                    for (PathStatus p : m.paths()) {
                        reconnects += p.reconnects();
                    }
                }
                return new RunResult(
                        w,
                        setup,
                        uri,
                        embedded,
                        results,
                        new RunResult.JobResult("All jobs", w.numjobs(), tr, tw),
                        iCpu,
                        JitTime.between(jitBefore, jitAfter),
                        tCpu,
                        tCommands,
                        unknown,
                        window,
                        startMillis,
                        failure,
                        blockSize,
                        tCpus,
                        reconnects,
                        failovers,
                        topo,
                        idle);
            } finally {
                for (Job j : jobs) {
                    j.stop = true;
                }
                if (prog != null) {
                    prog.finish();
                }
            }
        } finally {
            for (Thread t : threads) {
                t.join(10_000);
            }
            for (Controller c : ctrls) {
                c.close();
            }
            for (MultipathNamespace m : multi) {
                m.close();
            }
        }
    }

    /**
     * Every queue connected, no I/O: the CPU of both sides over {@code topo.idleNanos()}. Only this thread runs here
     * (the jobs have not started); it sleeps, so it adds nothing but the two samples.
     */
    private static IdleResult idlePhase(
            Topology topo, java.util.function.Supplier<Controller> admin, List<Job> jobs, AtomicReference<String> lost)
            throws InterruptedException {
        TargetStats.Reading tBefore = readStats(admin);
        CpuSample iBefore = CpuSample.self();
        // for scripts that sample the target from outside over the same window (perf/scale.sh waits for this line)
        System.err.printf(
                java.util.Locale.ROOT,
                "nvmeof-perf: idle: %d I/O queue(s) on %d controller(s) connected, no I/O for %.1f s%n",
                topo.queues(),
                topo.controllers(),
                topo.idleNanos() / 1e9);
        System.err.flush();
        sleepUntil(iBefore.clockNanos() + topo.idleNanos(), jobs, lost);
        CpuSample iCpu = CpuSample.self().minus(iBefore);
        TargetStats.Reading tAfter = readStats(admin);
        CpuSample tCpu = null;
        String unknown = tBefore.unknown() != null ? tBefore.unknown() : tAfter.unknown();
        if (unknown == null) {
            tCpu = tAfter.cpu().minus(tBefore.cpu());
        }
        return new IdleResult(topo.controllers(), topo.queues(), iCpu.clockNanos(), iCpu, tCpu, unknown);
    }

    /** The controller of the first connected path of {@code m}, or null if none is connected now. */
    private static Controller firstConnected(MultipathNamespace m) {
        for (int i = 0; i < m.paths().size(); i++) {
            Controller c = m.controller(i);
            if (c != null && c.isOpen()) {
                return c;
            }
        }
        return null;
    }

    private static TargetStats.Reading readStats(java.util.function.Supplier<Controller> admin) {
        Controller c = admin.get();
        return c != null
                ? TargetStats.read(c)
                : new TargetStats.Reading(null, 0, 0, "no path to the target is connected");
    }

    /** Sleeps until {@code nanoTime}, or until a job failed or the controller was lost (the run ends early). */
    private static void sleepUntil(long nanoTime, List<Job> jobs, AtomicReference<String> lost)
            throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            if (lost.get() != null) {
                return;
            }
            for (Job j : jobs) {
                if (j.failure != null) {
                    return;
                }
            }
            Thread.sleep(Math.max(1, Math.min(left / 1_000_000, 200)), 0);
        }
    }
}

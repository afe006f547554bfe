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
        opts.put("queues", "1");
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
        String uri = jobUri(targetUri, setup, w.iodepth());
        boolean multipath = NvmeUri.parse(uri).isMultipath();
        List<Controller> ctrls = new ArrayList<>();
        List<MultipathNamespace> multi = new ArrayList<>();
        List<BlockNamespace> namespaces = new ArrayList<>();
        List<Job> jobs = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicReference<String> lost = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        try {
            // Each job its own controller, or with several addresses its own multipath namespace over all of them.
            for (int i = 0; i < w.numjobs(); i++) {
                if (multipath) {
                    // Its paths reconnect on their own; a command with no usable path fails after the no-path timeout
                    // and ends the job.
                    MultipathNamespace m = MultipathNamespace.connect(uri);
                    multi.add(m);
                    namespaces.add(m);
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
                namespaces.add(
                        namespaces.isEmpty()
                                ? c.namespace()
                                : c.namespace(namespaces.get(0).nsid()));
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
                Controller c = multipath ? firstConnected(multi.get(i)) : ctrls.get(i);
                if (c != null && c.ioQueueDepth() < w.iodepth()) {
                    throw new BadWorkloadException("--iodepth " + w.iodepth() + " is deeper than the I/O queue the "
                            + "target grants (" + c.ioQueueDepth() + " entries)");
                }
                long start = w.offset() + (w.verify() ? i * perJob : 0);
                jobs.add(new Job(i, w, namespaces.get(i), start, perJob, w.seed() * 31 + i));
            }
            java.util.function.Supplier<Controller> admin =
                    multipath ? () -> firstConnected(multi.get(0)) : () -> ctrls.get(0);
            long startMillis = System.currentTimeMillis();
            long now = System.nanoTime();
            long ramp = w.verify() ? 0 : w.rampNanos();
            long rampEnd = now + 20_000_000L + ramp;
            long end = w.verify()
                    ? (w.runtimeNanos() > 0 ? rampEnd + w.runtimeNanos() : Long.MAX_VALUE / 2)
                    : rampEnd + w.runtimeNanos();
            for (Job j : jobs) {
                j.rampEnd = rampEnd;
                j.end = end;
                Thread t = new Thread(j, "nvmeof-perf-job-" + j.index);
                t.setDaemon(true);
                threads.add(t);
            }
            TargetStats.Reading tBefore = null;
            CpuSample iBefore = null;
            for (Thread t : threads) {
                t.start();
            }
            Progress prog = progress == null ? null : new Progress(w, jobs, rampEnd, end, progress);
            if (prog != null) {
                prog.start();
            }
            try {
                sleepUntil(rampEnd, jobs, lost);
                tBefore = readStats(admin);
                iBefore = CpuSample.self();
                for (Job j : jobs) {
                    j.measureStart = iBefore.clockNanos(); // count only I/Os issued after both samples
                }
                CpuSample iAfter;
                TargetStats.Reading tAfter;
                if (!w.verify()) {
                    sleepUntil(end, jobs, lost); // the window ends now (or a job failed): sample, let the jobs drain
                    iAfter = CpuSample.self();
                    tAfter = readStats(admin);
                    for (Thread t : threads) {
                        t.join(Math.max(1000, ns0.commandTimeout().toMillis() + 5000));
                    }
                } else {
                    for (Thread t : threads) {
                        t.join();
                    }
                    iAfter = CpuSample.self();
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
                        tCpu,
                        tCommands,
                        unknown,
                        window,
                        startMillis,
                        failure,
                        blockSize,
                        tCpus,
                        reconnects,
                        failovers);
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

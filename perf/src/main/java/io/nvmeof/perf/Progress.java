package io.nvmeof.perf;

import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/** The live status line: one update a second from a daemon thread, like fio's "Jobs: 1 (f=1): [r(1)][40.0%]..." */
final class Progress extends Thread {
    private final Workload w;
    private final List<Job> jobs;
    private final long rampEnd;
    private final Consumer<String> out;
    private volatile boolean done;

    Progress(Workload w, List<Job> jobs, long rampEnd, Consumer<String> out) {
        super("nvmeof-perf-progress");
        setDaemon(true);
        this.w = w;
        this.jobs = jobs;
        this.rampEnd = rampEnd;
        this.out = out;
    }

    @Override
    public void run() {
        long lastIos = 0;
        long lastBytes = 0;
        long last = System.nanoTime();
        while (!done) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
            if (done) {
                return;
            }
            long ios = 0;
            long bytes = 0;
            for (Job j : jobs) {
                ios += j.progressIos.get();
                bytes += j.progressBytes.get();
            }
            long now = System.nanoTime();
            double secs = (now - last) / 1e9;
            String phase;
            if (w.verify()) {
                phase = "verify";
            } else if (now < rampEnd) {
                phase = String.format(Locale.ROOT, "ramp, %ds left", (rampEnd - now) / 1_000_000_000L + 1);
            } else if (jobs.get(0).end >= Runner.UNTIL_TOLD) {
                phase = "sampling the target";
            } else {
                long start = jobs.get(0).measureStart;
                long end = jobs.get(0).end;
                double pct = Math.min(100, 100.0 * (now - start) / Math.max(1, end - start));
                phase = String.format(Locale.ROOT, "%.1f%%, eta %ds", pct, Math.max(0, (end - now) / 1_000_000_000L));
            }
            out.accept(String.format(
                    Locale.ROOT,
                    "Jobs: %d [%s][%s][%s IOPS][%s/s]",
                    jobs.size(),
                    w.rw(),
                    phase,
                    Units.count((ios - lastIos) / secs),
                    Units.bytes((bytes - lastBytes) / secs)));
            lastIos = ios;
            lastBytes = bytes;
            last = now;
        }
    }

    void finish() {
        done = true;
        interrupt();
    }
}

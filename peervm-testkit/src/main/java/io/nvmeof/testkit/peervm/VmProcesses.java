package io.nvmeof.testkit.peervm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The peer VMs' processes on this machine: killing the process tree of a run.sh we started (and nothing else), and
 * one VM at a time (waiting while another QEMU runs). Stateless.
 */
final class VmProcesses {
    private VmProcesses() {}

    /**
     * Kills what we started and nothing else: first what runs below run.sh (its timeout(1) and QEMU); then run.sh
     * itself if it has not ended by itself within {@code grace} (it normally does, printing the guest output and its
     * {@code run.sh: ...} lines).
     */
    static void kill(Process p, Duration grace) throws InterruptedException {
        List<ProcessHandle> below = new ArrayList<>(p.descendants().toList());
        below.forEach(ProcessHandle::destroyForcibly);
        if (!p.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            List<ProcessHandle> more = p.descendants().toList();
            more.forEach(ProcessHandle::destroyForcibly);
            below.addAll(more);
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
        // A killed QEMU takes a moment to go (its guest memory, its threads): wait, so that the next VM neither finds
        // it running nor its hostfwd port taken.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (ProcessHandle h : below) {
            try {
                h.onExit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException e) {
                System.err.println("peer VM: process " + h.pid() + " still there 60 s after SIGKILL");
            }
        }
    }

    /**
     * One VM at a time on this host: waits (at most {@code max}; zero: not at all) while a {@code qemu-system-*}
     * process runs, then returns (after {@code max}, with a warning: the VMs then share the cores).
     */
    static void waitForOtherVms(Duration max) throws InterruptedException {
        if (max.isZero() || max.isNegative()) {
            return;
        }
        long t0 = System.nanoTime();
        long lastSaid = 0;
        while (true) {
            List<String> others = otherVms();
            if (others.isEmpty()) {
                return;
            }
            long waited = System.nanoTime() - t0;
            if (waited > max.toNanos()) {
                System.out.println("peer VM: another VM still runs after " + max + "; starting anyway: " + others);
                return;
            }
            if (lastSaid == 0 || waited - lastSaid > TimeUnit.MINUTES.toNanos(1)) {
                System.out.printf(
                        Locale.ROOT,
                        "peer VM: waiting for another peer VM to finish (one at a time on this "
                                + "host; %.0f s so far): %s%n",
                        waited / 1e9,
                        others);
                lastSaid = Math.max(1, waited);
            }
            Thread.sleep(5000);
        }
    }

    /**
     * The QEMU processes on this machine: {@code pgrep -l qemu-system} matches the process name, not the command line
     * (with -f, any shell whose command mentions qemu-system would count).
     */
    static List<String> otherVms() throws InterruptedException {
        try {
            Process pg = new ProcessBuilder("pgrep", "-l", "qemu-system")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(pg.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (pg.waitFor() != 0) {
                return List.of();
            }
            return out.lines().filter(l -> !l.isBlank()).toList();
        } catch (IOException e) {
            return List.of(); // no pgrep: nothing to go by
        }
    }
}

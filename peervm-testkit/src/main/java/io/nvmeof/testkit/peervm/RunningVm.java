package io.nvmeof.testkit.peervm;

import static io.nvmeof.testkit.peervm.PeerVm.read;
import static io.nvmeof.testkit.peervm.PeerVm.tail;

import io.nvmeof.testkit.peervm.PeerVm.Boot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A peer VM running a serving script in the background, from {@link PeerVm#start} or {@link PeerVm#startServing}: its
 * output, a wait for a line of it, and the stop. Owns run.sh's process (and through it QEMU) until {@link #close}.
 * Used by one test thread.
 */
public final class RunningVm implements AutoCloseable {
    private final Process process;
    private final Path jobDir;
    private final Path runLog;
    private final Duration timeout;
    private final long started;
    private final Boot boot;
    private boolean stopped;

    RunningVm(Process process, Path jobDir, Path runLog, Duration timeout, long started, Boot boot) {
        this.process = process;
        this.jobDir = jobDir;
        this.runLog = runLog;
        this.timeout = timeout;
        this.started = started;
        this.boot = boot;
    }

    public Path jobDir() {
        return jobDir;
    }

    public Boot boot() {
        return boot;
    }

    public Duration timeout() {
        return timeout;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The guest script's output so far (output.log, written live through 9p). */
    public String output() {
        return read(jobDir.resolve("output.log"));
    }

    /** run.sh's own output: after the VM ended, the guest output followed by {@code run.sh: rc=N wall=..}. */
    public String runLog() {
        return read(runLog);
    }

    public String consoleTail(int lines) {
        return tail(read(jobDir.resolve("console.log")), lines);
    }

    /**
     * Waits until the guest output has a line matching {@code regex} (multi-line mode) and returns the match.
     * Not retried: the VM booted, so what follows is the test's own failure.
     *
     * @throws IllegalStateException if the VM ends first or {@code max} passes, with what it printed
     */
    public Matcher await(String regex, Duration max) throws InterruptedException {
        Pattern p = Pattern.compile(regex, Pattern.MULTILINE);
        long deadline = System.nanoTime() + max.toNanos();
        while (true) {
            Matcher m = p.matcher(output());
            if (m.find()) {
                return m;
            }
            if (!process.isAlive()) {
                Matcher last = p.matcher(output());
                if (last.find()) {
                    return last;
                }
                throw new IllegalStateException("the peer VM ended (rc " + process.exitValue()
                        + ") before printing /"
                        + regex + "/\n--- run.sh output ---\n" + tail(runLog(), 60) + "\n--- console tail ---\n"
                        + consoleTail(30));
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no /" + regex + "/ from the peer VM within " + max
                        + " (it booted: " + boot + ")\n--- guest output ---\n" + tail(output(), 60)
                        + "\n--- console tail ---\n" + consoleTail(30));
            }
            Thread.sleep(250);
        }
    }

    /** Seconds since the VM (the attempt that booted) was started. */
    public double uptime() {
        return (System.nanoTime() - started) / 1e9;
    }

    /** Creates the job dir's {@code stop} file and waits for the VM to power off; returns run.sh's exit status. */
    public int stop(Duration max) throws IOException, InterruptedException {
        if (stopped) {
            return process.isAlive() ? -1 : process.exitValue();
        }
        stopped = true;
        if (process.isAlive()) {
            Files.writeString(jobDir.resolve("stop"), "");
        }
        if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
            VmProcesses.kill(process, Duration.ZERO);
            return 124;
        }
        return process.exitValue();
    }

    /** Stops the VM if the test did not (60 s for an orderly power-off, then kills it). */
    @Override
    public void close() throws IOException, InterruptedException {
        if (!stopped) {
            stop(Duration.ofSeconds(60));
        } else if (process.isAlive()) {
            VmProcesses.kill(process, Duration.ZERO);
        }
    }
}

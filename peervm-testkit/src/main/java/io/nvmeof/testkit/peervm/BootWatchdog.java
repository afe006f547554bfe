package io.nvmeof.testkit.peervm;

import static io.nvmeof.testkit.peervm.PeerVm.BOOT_TIMEOUT_PROPERTY;
import static io.nvmeof.testkit.peervm.PeerVm.RETRY_APPEND;
import static io.nvmeof.testkit.peervm.PeerVm.deleteRecursively;
import static io.nvmeof.testkit.peervm.PeerVm.read;
import static io.nvmeof.testkit.peervm.PeerVm.tail;
import static io.nvmeof.testkit.peervm.VmProcesses.kill;
import static io.nvmeof.testkit.peervm.VmProcesses.waitForOtherVms;

import io.nvmeof.testkit.peervm.PeerVm.Boot;
import io.nvmeof.testkit.peervm.PeerVm.BootFailure;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The boot watchdog of a {@link PeerVm} (see its class comment): starts run.sh, waits for peer-init's {@code boot done}
 * on the serial console, and on a stall kills the attempt, keeps its job dir aside with the diagnostics and starts once
 * more with the kernel's messages on the console. Owned by one PeerVm (immutable, like it); each {@link #boot} owns
 * the processes it starts until it returns one that booted.
 */
final class BootWatchdog {
    /** What peer-init writes to the console once the root file system is up, before it runs the job. */
    static final Pattern BOOT_DONE = Pattern.compile("peer-init\\[([0-9.]+)s\\]: boot done");

    static final int ATTEMPTS = 2;

    private final Path dir;
    private final Path cache;
    private final Duration bootTimeout;
    private final Duration otherVmWait;

    BootWatchdog(Path dir, Path cache, Duration bootTimeout, Duration otherVmWait) {
        this.dir = dir;
        this.cache = cache;
        this.bootTimeout = bootTimeout;
        this.otherVmWait = otherVmWait;
    }

    /** A VM whose guest booted: run.sh's process, when the attempt that booted started, how it came up. */
    record Started(Process process, long startNanos, Boot boot) {}

    /**
     * Starts {@code cmd} (run.sh) and waits for the guest's {@code boot done}; kills and retries once with
     * {@link PeerVm#RETRY_APPEND} if it does not come.
     *
     * @throws BootFailure if the VM did not boot twice
     */
    Started boot(List<String> cmd, Path jobDir, Path runLog) throws IOException, InterruptedException {
        List<String> failures = new ArrayList<>();
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            waitForOtherVms(otherVmWait);
            clearOldJobDir(jobDir);
            Files.deleteIfExists(runLog);
            ProcessBuilder pb =
                    new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(runLog.toFile());
            pb.environment().put("PEERVM_CACHE", cache.toString());
            if (attempt > 1) {
                pb.environment()
                        .merge("PEERVM_APPEND", RETRY_APPEND, (old, add) -> old.isBlank() ? add : old + " " + add);
            }
            String append = pb.environment().getOrDefault("PEERVM_APPEND", "");
            long t0 = System.nanoTime();
            Process p = pb.start();
            String why = awaitBootDone(p, jobDir, t0);
            if (why == null) {
                double secs = (System.nanoTime() - t0) / 1e9;
                Matcher m = BOOT_DONE.matcher(read(jobDir.resolve("console.log")));
                Boot boot = new Boot(secs, m.find() ? m.group(1) : "?", List.copyOf(failures));
                System.out.println("peer VM: " + boot + (append.isEmpty() ? "" : " (PEERVM_APPEND=" + append + ")"));
                return new Started(p, t0, boot);
            }
            long pid = p.pid();
            kill(p, Duration.ofSeconds(15));
            Path kept = keepFailedAttempt(jobDir, runLog, attempt);
            String diag = diagnostics(attempt, why, cmd, append, pid, kept);
            failures.add(diag);
            System.out.println(diag);
            System.err.println("peer VM " + dir + ": attempt " + attempt + " of " + ATTEMPTS + " DID NOT BOOT: " + why
                    + (attempt < ATTEMPTS ? "; retrying with PEERVM_APPEND=" + RETRY_APPEND : "; giving up")
                    + " (details on stdout)");
        }
        throw new BootFailure(failures);
    }

    /** Null once console.log has peer-init's {@code boot done}; else why not (run.sh ended, or the deadline). */
    private String awaitBootDone(Process p, Path jobDir, long t0) throws InterruptedException {
        Path console = jobDir.resolve("console.log");
        long deadline = t0 + bootTimeout.toNanos();
        while (true) {
            if (BOOT_DONE.matcher(read(console)).find()) {
                return null;
            }
            if (!p.isAlive()) {
                if (BOOT_DONE.matcher(read(console)).find()) {
                    return null;
                }
                return String.format(
                        Locale.ROOT,
                        "run.sh ended (rc %d) %.1f s after the start, before the guest's "
                                + "peer-init wrote 'boot done' to console.log",
                        p.exitValue(),
                        (System.nanoTime() - t0) / 1e9);
            }
            if (System.nanoTime() - deadline > 0) {
                return "no 'peer-init[..]: boot done' in console.log within " + bootTimeout.toSeconds() + " s (-D"
                        + BOOT_TIMEOUT_PROPERTY + "): the guest kernel or initramfs stalled";
            }
            Thread.sleep(200);
        }
    }

    private String diagnostics(int attempt, String why, List<String> cmd, String append, long pid, Path kept) {
        String console = read(kept.resolve("console.log")).replace("\r", "");
        StringBuilder sb = new StringBuilder();
        sb.append("===== PEER VM DID NOT BOOT (attempt ")
                .append(attempt)
                .append(" of ")
                .append(ATTEMPTS)
                .append("): ")
                .append(why)
                .append('\n');
        sb.append("killed run.sh (pid ")
                .append(pid)
                .append(") with its timeout and qemu; command: ")
                .append(String.join(" ", cmd))
                .append(append.isEmpty() ? "" : "; PEERVM_APPEND=" + append)
                .append('\n');
        sb.append("kept in ").append(kept).append('\n');
        sb.append("--- console.log (")
                .append(console.length())
                .append(" chars, last 60 lines) ---\n")
                .append(console.isEmpty() ? "(empty)" : tail(console, 60))
                .append('\n');
        String qemu = read(kept.resolve("qemu.log"));
        sb.append("--- qemu.log ---\n")
                .append(qemu.isEmpty() ? "(empty)" : tail(qemu, 40))
                .append('\n');
        String run = read(kept.resolve("run.log"));
        sb.append("--- run.sh output ---\n")
                .append(run.isEmpty() ? "(empty)" : tail(run, 40))
                .append('\n');
        sb.append("===== end of attempt ").append(attempt);
        return sb.toString();
    }

    /** Moves a failed attempt's job dir aside ({@code <jobDir>.boot-failure-N}, with run.sh's output as run.log). */
    private static Path keepFailedAttempt(Path jobDir, Path runLog, int attempt) throws IOException {
        Path kept = jobDir.resolveSibling(jobDir.getFileName() + ".boot-failure-" + attempt);
        deleteRecursively(kept);
        if (Files.isDirectory(jobDir)) {
            Files.move(jobDir, kept);
        } else {
            Files.createDirectories(kept);
        }
        if (Files.exists(runLog)) {
            Files.move(runLog, kept.resolve("run.log"), StandardCopyOption.REPLACE_EXISTING);
        }
        return kept;
    }

    /**
     * An old job dir (run.sh's: console.log or job.sh in it) would let the watchdog read a stale {@code boot done}
     * before run.sh wipes it: remove it first. Anything else is left for run.sh to refuse.
     */
    private static void clearOldJobDir(Path jobDir) {
        if (Files.exists(jobDir.resolve("console.log")) || Files.exists(jobDir.resolve("job.sh"))) {
            deleteRecursively(jobDir);
        }
    }

    static Path runLogOf(Path jobDir) {
        return jobDir.resolveSibling(jobDir.getFileName() + "-run.log");
    }
}

package io.nvmeof.testkit.peervm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The peer VM ({@code interop/peer-vm/run.sh} of this repository: QEMU/TCG, a Debian kernel with nvmet,
 * nvme-tcp/-rdma, nvme-cli, fio, Soft-RoCE, a JRE) for the interop tests of every module. It has more than one guest
 * ({@link Guest}, recipes in {@code interop/peer-vm/guests/}): {@link Guest#LINUX_6_1} by default,
 * {@link #guest(Guest)} picks another; each guest's image is built on first use ({@link #ensureImage}) and cached by
 * the content of its recipe. Two ways to use it:
 * <ul>
 *   <li>{@link #run}: boot a VM, run a script in it to completion, get its exit status and output (the guest
 *       is the host side of the test, or runs JVMs of ours itself);</li>
 *   <li>{@link #start}: boot a VM in the background that serves something (nvmet) through a hostfwd port; the script
 *       prints a line the test waits for ({@link Running#await}, e.g. {@code PEERVM READY}) and ends when the test
 *       creates {@code stop} in the job dir ({@link Running#stop}, {@link Running#close}).</li>
 * </ul>
 *
 * <p><b>Boot watchdog.</b> Every start waits for the guest's PID 1 ({@code peer-vm/guest/peer-init}) to write
 * {@code peer-init[<uptime>s]: boot done} to the serial console ({@code console.log} in the job dir; normally ~6 s
 * after the start). If that line is missing after {@link #bootTimeout()} (default 150 s, system property
 * {@value #BOOT_TIMEOUT_PROPERTY}), or run.sh ends before it, this VM (only our own process tree: run.sh, its
 * timeout(1) and QEMU) is killed, the tail of console.log, qemu.log and run.sh's output are printed, and the VM is
 * started once more with {@code PEERVM_APPEND=loglevel=7} (the kernel's messages on the console, so a second stall
 * shows where). A second boot failure throws {@link BootFailure} with both attempts' diagnostics. What goes wrong
 * after the boot (no READY line, a failing script) is never retried: that is the test's failure.
 *
 * <p><b>One VM at a time.</b> A VM takes both cores of the CI host, so every start first waits (up to
 * {@link #otherVmWait()}, default 20 min) while any {@code qemu-system-*} process runs on this machine.
 *
 * <p>For tests only: the modules take this with {@code <scope>test</scope>}. A directory holding a stand-in
 * {@code run.sh} ({@link #at}) and another image cache ({@link #withCache}) let the watchdog be tested without QEMU.
 */
public final class PeerVm {
    /** The guests of {@code interop/peer-vm/guests/} the tests name; {@link #guest(String)} takes any other recipe. */
    public enum Guest {
        /** Debian 12 userland, Debian's 6.1 kernel, siw; OpenJDK 17: the default, and the one for RDMA. */
        LINUX_6_1("linux-6.1"),
        /**
         * Debian 13 userland (nvme-cli with {@code --tls}, tlshd, OpenJDK 21) on Debian's 6.12 kernel: NVMe in-band
         * authentication (DH-HMAC-CHAP) and NVMe/TCP TLS on both sides; no siw.
         */
        LINUX_6_12("linux-6.12");

        private final String recipe;

        Guest(String recipe) {
            this.recipe = recipe;
        }

        /** The recipe's directory name under {@code guests/}, as {@code build.sh/run.sh --guest} take it. */
        public String recipe() {
            return recipe;
        }
    }

    /** Where the harness lives in the repository (a directory with run.sh, build.sh, guests/). */
    public static final String REPO_PATH = "interop/peer-vm";

    /** The guest of {@link #locate()} and {@link #at}, as build.sh and run.sh default to it. */
    public static final String DEFAULT_GUEST = Guest.LINUX_6_1.recipe();

    /**
     * The image cache {@code build.sh} fills ({@code <guest>-<recipe hash>/} per image); PEERVM_CACHE moves it (as it
     * does for run.sh and build.sh).
     */
    public static final Path DEFAULT_CACHE =
            Path.of(System.getenv().getOrDefault("PEERVM_CACHE", "/var/cache/peer-vm"));
    /** System property: seconds the guest has to print {@code boot done} before the VM is killed and retried. */
    public static final String BOOT_TIMEOUT_PROPERTY = "peervm.bootTimeoutSec";

    public static final Duration DEFAULT_BOOT_TIMEOUT = Duration.ofSeconds(150);
    /** Appended to the kernel command line of the retry: overrides run.sh's {@code quiet loglevel=3}. */
    public static final String RETRY_APPEND = "loglevel=7";

    public static final Duration DEFAULT_OTHER_VM_WAIT = Duration.ofMinutes(20);
    /** What peer-init writes to the console once the root file system is up, before it runs the job. */
    static final Pattern BOOT_DONE = Pattern.compile("peer-init\\[([0-9.]+)s\\]: boot done");

    static final int ATTEMPTS = 2;

    private static final Pattern GUEST_NAME = Pattern.compile("[A-Za-z0-9._-]+");

    private final Path dir;
    private final String guest;
    private final Path cache;
    private final Duration bootTimeout;
    private final Duration otherVmWait;

    private PeerVm(Path dir, String guest, Path cache, Duration bootTimeout, Duration otherVmWait) {
        this.dir = dir;
        this.guest = guest;
        this.cache = cache;
        this.bootTimeout = bootTimeout;
        this.otherVmWait = otherVmWait;
    }

    /**
     * Finds the repository's {@code interop/peer-vm}: PEERVM_DIR if set, else the first ancestor of the working
     * directory (a module's directory under Maven) that has {@code interop/peer-vm/run.sh}, i.e. the repository root.
     * The guest is {@link #DEFAULT_GUEST}.
     *
     * @throws IllegalStateException naming where it looked
     */
    public static PeerVm locate() {
        List<Path> tried = new ArrayList<>();
        return find(tried)
                .orElseThrow(() -> new IllegalStateException("no peer VM: " + REPO_PATH + "/run.sh not found above "
                        + Path.of("").toAbsolutePath() + " (looked in " + tried
                        + "); run from inside the repository or set PEERVM_DIR to the peer-vm directory"));
    }

    /** As {@link #locate()}, empty where there is no peer VM (for tests that skip then). */
    public static Optional<PeerVm> find() {
        return find(new ArrayList<>());
    }

    private static Optional<PeerVm> find(List<Path> tried) {
        String env = System.getenv("PEERVM_DIR");
        if (env != null && !env.isBlank()) {
            tried.add(Path.of(env));
            if (Files.isExecutable(Path.of(env, "run.sh"))) {
                return Optional.of(at(Path.of(env)));
            }
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve(REPO_PATH);
            tried.add(candidate);
            if (Files.isExecutable(candidate.resolve("run.sh"))) {
                return Optional.of(at(candidate));
            }
        }
        return Optional.empty();
    }

    /**
     * The peer VM in {@code dir} (PEERVM_DIR style: a directory with an executable {@code run.sh}, and
     * {@code build.sh} for {@link #ensureImage}), with the default guest, cache, boot timeout and wait for other VMs.
     */
    public static PeerVm at(Path dir) {
        if (!Files.isExecutable(dir.resolve("run.sh"))) {
            throw new IllegalArgumentException("no executable run.sh in " + dir);
        }
        return new PeerVm(
                dir.toAbsolutePath().normalize(),
                DEFAULT_GUEST,
                DEFAULT_CACHE,
                bootTimeoutFromProperty(),
                DEFAULT_OTHER_VM_WAIT);
    }

    static Duration bootTimeoutFromProperty() {
        String s = System.getProperty(BOOT_TIMEOUT_PROPERTY);
        if (s == null || s.isBlank()) {
            return DEFAULT_BOOT_TIMEOUT;
        }
        try {
            long secs = Long.parseLong(s.trim());
            if (secs > 0) {
                return Duration.ofSeconds(secs);
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("-D" + BOOT_TIMEOUT_PROPERTY + "=" + s + ": expected whole seconds > 0");
    }

    /**
     * The same launcher for another guest: {@code --guest NAME} to build.sh ({@link #ensureImage}) and run.sh. Only
     * the name is checked here; run.sh and build.sh refuse a recipe that does not exist.
     */
    public PeerVm guest(String name) {
        if (!GUEST_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("guest name " + name);
        }
        return new PeerVm(dir, name, cache, bootTimeout, otherVmWait);
    }

    /** {@link #guest(String)} for a guest of {@link Guest}. */
    public PeerVm guest(Guest g) {
        return guest(g.recipe());
    }

    /** The same VM with another image cache (passed to run.sh and build.sh as PEERVM_CACHE). */
    public PeerVm withCache(Path cache) {
        return new PeerVm(dir, guest, cache.toAbsolutePath(), bootTimeout, otherVmWait);
    }

    /** The same VM with another boot deadline (instead of {@value #BOOT_TIMEOUT_PROPERTY} or 150 s). */
    public PeerVm withBootTimeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("boot timeout " + timeout);
        }
        return new PeerVm(dir, guest, cache, timeout, otherVmWait);
    }

    /** The same VM waiting at most {@code max} for other VMs on this machine to end; zero: do not look. */
    public PeerVm withOtherVmWait(Duration max) {
        return new PeerVm(dir, guest, cache, bootTimeout, max);
    }

    public Path dir() {
        return dir;
    }

    /** The guest recipe's name ({@code guests/NAME}). */
    public String guestName() {
        return guest;
    }

    public Path cache() {
        return cache;
    }

    public Duration bootTimeout() {
        return bootTimeout;
    }

    public Duration otherVmWait() {
        return otherVmWait;
    }

    /**
     * Builds this guest's image if the cache has none for the current recipe ({@code build.sh --guest G --check},
     * then {@code build.sh --guest G}; a build from nothing takes 2–3 minutes). The build's output goes to stdout
     * as it comes.
     */
    public void ensureImage(Duration timeout) throws IOException, InterruptedException {
        ProcessBuilder check = new ProcessBuilder(dir.resolve("build.sh").toString(), "--guest", guest, "--check")
                .redirectErrorStream(true);
        check.environment().put("PEERVM_CACHE", cache.toString());
        Process c = check.start();
        String where = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!c.waitFor(60, TimeUnit.SECONDS)) {
            kill(c, Duration.ZERO);
            throw new IllegalStateException("build.sh --check did not answer within 60 s");
        }
        if (c.exitValue() == 0) {
            return;
        }
        if (c.exitValue() != 1) {
            throw new IllegalStateException(
                    "build.sh --guest " + guest + " --check: rc " + c.exitValue() + ": " + where);
        }
        System.out.println("peer VM image of guest " + guest + " missing (" + where + "): running "
                + dir.resolve("build.sh") + " --guest " + guest);
        ProcessBuilder pb =
                new ProcessBuilder(dir.resolve("build.sh").toString(), "--guest", guest).redirectErrorStream(true);
        pb.environment().put("PEERVM_CACHE", cache.toString());
        Process p = pb.start();
        Deque<String> last = new ArrayDeque<>();
        Thread pump = new Thread(
                () -> {
                    try (BufferedReader r =
                            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line; (line = r.readLine()) != null; ) {
                            System.out.println(line);
                            synchronized (last) {
                                last.addLast(line);
                                if (last.size() > 60) {
                                    last.removeFirst();
                                }
                            }
                        }
                    } catch (IOException ignored) {
                        // the process is gone
                    }
                },
                "peer-vm-build-output");
        pump.setDaemon(true);
        pump.start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            kill(p, Duration.ZERO);
            throw new IllegalStateException("peer VM build did not finish within " + timeout);
        }
        pump.join(10_000);
        if (p.exitValue() != 0) {
            synchronized (last) {
                throw new IllegalStateException(
                        "peer VM build failed (rc " + p.exitValue() + "):\n" + String.join("\n", last));
            }
        }
    }

    /** A free TCP port on 127.0.0.1 for a hostfwd (QEMU fails with exit 125 if it is taken meanwhile). */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    // ------------------------------------------------------------------------------------------ run to completion

    /** What a run produced. {@code output} is the guest script's stdout+stderr followed by run.sh's own lines. */
    public record Result(int rc, String output, Path jobDir, Duration wall, Boot boot) {
        /** The guest's console log (peer-init's lines, the job's output; kernel messages only on a retry). */
        public String console() {
            try {
                return Files.readString(jobDir.resolve("console.log"));
            } catch (IOException e) {
                return "(no console.log: " + e.getMessage() + ")";
            }
        }
    }

    /**
     * Boots a VM and runs {@code script ARGS} in it: {@code run.sh --guest G --no-fwd --timeout N --out jobDir [extra]
     * script ARGS}, under the boot watchdog. run.sh enforces the timeout itself (exit 124); this waits 60 s longer
     * before killing it. run.sh's output is also kept next to the job dir ({@code <jobDir>-run.log}).
     *
     * @throws BootFailure if the VM did not boot twice
     */
    public Result run(Path script, List<String> args, Duration timeout, Path jobDir, List<String> extraOptions)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(
                dir.resolve("run.sh").toString(),
                "--guest",
                guest,
                "--no-fwd",
                "--timeout",
                Long.toString(timeout.toSeconds()),
                "--out",
                jobDir.toString()));
        cmd.addAll(extraOptions);
        cmd.add(script.toString());
        cmd.addAll(args);
        long t0 = System.nanoTime();
        Path runLog = runLogOf(jobDir);
        Started s = boot(cmd, jobDir, runLog);
        long waitNanos = timeout.plusSeconds(60).toNanos() - (System.nanoTime() - s.startNanos);
        int rc;
        if (s.process.waitFor(Math.max(0, waitNanos), TimeUnit.NANOSECONDS)) {
            rc = s.process.exitValue();
        } else {
            kill(s.process, Duration.ofSeconds(10));
            rc = 124;
        }
        return new Result(rc, read(runLog), jobDir, Duration.ofNanos(System.nanoTime() - t0), s.boot);
    }

    // ------------------------------------------------------------------------------------------ serve in the
    // background

    /**
     * Boots a VM in the background forwarding host 127.0.0.1:{@code hostPort} to guest port {@code guestPort}:
     * {@code run.sh --fwd HOSTPORT:GUESTPORT --timeout N --out jobDir script ARGS}, and returns once it booted.
     *
     * @throws BootFailure if the VM did not boot twice
     */
    public Running start(Path script, List<String> args, int hostPort, int guestPort, Duration timeout, Path jobDir)
            throws IOException, InterruptedException {
        return start(script, args, List.of("--fwd", hostPort + ":" + guestPort), timeout, jobDir);
    }

    /**
     * {@link #start(Path, List, int, int, Duration, Path) start}, then {@link Running#await await} the line
     * {@code ready} (e.g. {@code ^PEERVM READY}) for at most {@code readyMax}; prints the job dir, how long the
     * service took and what the guest printed so far. A VM that does not get ready is closed before the exception.
     */
    public Running startServing(
            Path script,
            List<String> args,
            int hostPort,
            int guestPort,
            Duration timeout,
            Path jobDir,
            String ready,
            Duration readyMax)
            throws IOException, InterruptedException {
        Running vm = start(script, args, hostPort, guestPort, timeout, jobDir);
        System.out.println(
                "peer VM " + dir + ": job " + vm.jobDir() + ", hostfwd 127.0.0.1:" + hostPort + " -> " + guestPort);
        try {
            vm.await(ready, readyMax);
        } catch (RuntimeException | InterruptedException e) {
            try {
                vm.close();
                System.out.println("--- run.sh ---\n" + tail(vm.runLog(), 5));
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        System.out.printf(
                Locale.ROOT, "peer VM: /%s/ %.1f s after the VM started (%s)%n", ready, vm.uptime(), vm.boot());
        System.out.println("--- guest setup ---\n" + vm.output());
        return vm;
    }

    /**
     * Boots a VM in the background: {@code run.sh --guest G [options] --timeout N --out jobDir script ARGS}, and
     * returns once it booted (the boot watchdog). run.sh's stdout+stderr go to {@code <jobDir>-run.log} next to the
     * job dir (run.sh wipes the job dir itself).
     */
    public Running start(Path script, List<String> args, List<String> options, Duration timeout, Path jobDir)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(dir.resolve("run.sh").toString(), "--guest", guest));
        cmd.addAll(options);
        cmd.addAll(List.of(
                "--timeout", Long.toString(timeout.toSeconds()), "--out", jobDir.toString(), script.toString()));
        cmd.addAll(args);
        Path runLog = runLogOf(jobDir);
        Started s = boot(cmd, jobDir, runLog);
        return new Running(s.process, jobDir, runLog, timeout, s.startNanos, s.boot);
    }

    /** A VM running a serving script. */
    public static final class Running implements AutoCloseable {
        private final Process process;
        private final Path jobDir;
        private final Path runLog;
        private final Duration timeout;
        private final long started;
        private final Boot boot;
        private boolean stopped;

        Running(Process process, Path jobDir, Path runLog, Duration timeout, long started, Boot boot) {
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
                kill(process, Duration.ZERO);
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
                kill(process, Duration.ZERO);
            }
        }
    }

    // ------------------------------------------------------------------------------------------ the boot watchdog

    /**
     * How the VM came up: seconds from the start of the attempt that booted to its {@code boot done} line, the
     * guest's uptime in that line, and the diagnostics of each attempt that did not boot (empty normally).
     */
    public record Boot(double seconds, String guestUptime, List<String> failures) {
        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "boot done %.1f s after the start, guest uptime %ss%s",
                    seconds,
                    guestUptime,
                    failures.isEmpty() ? "" : ", after " + failures.size() + " failed boot(s)");
        }
    }

    /** The VM did not boot, twice; the message has both attempts' console tail, qemu.log and run.sh output. */
    public static final class BootFailure extends IllegalStateException {
        private static final long serialVersionUID = 1L;
        private final List<String> attempts;

        BootFailure(List<String> attempts) {
            super("the peer VM did not boot in " + attempts.size() + " attempts (the second with PEERVM_APPEND="
                    + RETRY_APPEND + ")\n" + String.join("\n", attempts));
            this.attempts = List.copyOf(attempts);
        }

        public List<String> attempts() {
            return attempts;
        }
    }

    private record Started(Process process, long startNanos, Boot boot) {}

    private Started boot(List<String> cmd, Path jobDir, Path runLog) throws IOException, InterruptedException {
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

    // ------------------------------------------------------------------------------------------ one VM at a time

    /**
     * One VM at a time on this host: waits (at most {@code max}; zero: not at all) while a {@code qemu-system-*}
     * process runs, then returns (after {@code max}, with a warning: the VMs then share the cores).
     */
    public static void waitForOtherVms(Duration max) throws InterruptedException {
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

    // ------------------------------------------------------------------------------------------ helpers for the tests

    private static final Pattern KERNEL_LOG =
            Pattern.compile("(?s)----- kernel log \\(since READY\\)\n(.*?)----- end of kernel log");
    private static final Pattern COMPLAINT =
            Pattern.compile("(?i).*(error|fail|expired|unexpected|invalid|bad |digest|fatal|warn|bug|call trace).*");

    /**
     * The guest kernel log a serving script printed at its end between {@code ----- kernel log (since READY)} and
     * {@code ----- end of kernel log} (what {@code dmesg} shows after the script's {@code dmesg -c} at READY).
     */
    public static String kernelLog(String output) {
        Matcher k = KERNEL_LOG.matcher(output);
        return k.find() ? k.group(1) : "(no kernel log in the guest output)";
    }

    /**
     * The lines of a guest kernel log that complain (error, fail, expired, unexpected, invalid, bad, digest, fatal,
     * warn, bug, call trace), except those {@code expected} accepts (it sees every complaint once, in order).
     */
    public static List<String> complaints(String kernelLog, Predicate<String> expected) {
        List<String> bad = new ArrayList<>();
        for (String line : kernelLog.split("\n")) {
            if (COMPLAINT.matcher(line).matches() && !expected.test(line)) {
                bad.add(line);
            }
        }
        return bad;
    }

    /** The file's text, or "" if it cannot be read (yet). */
    public static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** The last {@code lines} lines of {@code text}. */
    public static String tail(String text, int lines) {
        String[] all = text.split("\n", -1);
        int from = Math.max(0, all.length - lines);
        return String.join("\n", Arrays.copyOfRange(all, from, all.length));
    }

    /** Copies the class path resource {@code name} (as {@code anchor.getResourceAsStream} finds it) into {@code dir}. */
    public static Path copyResource(Class<?> anchor, String name, Path dir) throws IOException {
        Path out = dir.resolve(Path.of(name).getFileName().toString());
        try (InputStream in = anchor.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("test resource " + name + " missing");
            }
            Files.copy(in, out);
        }
        return out;
    }

    /** Copies the tree {@code from} to {@code to} (e.g. class directories into a {@code --share} dir). */
    public static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    public static void deleteRecursively(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not delete " + root + ": " + e);
        }
    }
}

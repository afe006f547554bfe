package io.nvmeof.testkit.peervm;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
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
 *       prints a line the test waits for ({@link RunningVm#await}, e.g. {@code PEERVM READY}) and ends when the test
 *       creates {@code stop} in the job dir ({@link RunningVm#stop}, {@link RunningVm#close}).</li>
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
 *
 * <p>This class is the launcher the tests see (which VM, run, start, the test helpers) and owns its settings; the
 * boot watchdog is {@link BootWatchdog}, the image build {@link ImageBuild}, killing our processes and waiting for
 * other VMs {@link VmProcesses}.
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

    private static final Pattern GUEST_NAME = Pattern.compile("[A-Za-z0-9._-]+");

    private final Path dir;
    private final String guest;
    private final Path cache;
    private final Duration bootTimeout;
    private final Duration otherVmWait;
    private final BootWatchdog watchdog;

    private PeerVm(Path dir, String guest, Path cache, Duration bootTimeout, Duration otherVmWait) {
        this.dir = dir;
        this.guest = guest;
        this.cache = cache;
        this.bootTimeout = bootTimeout;
        this.otherVmWait = otherVmWait;
        this.watchdog = new BootWatchdog(dir, cache, bootTimeout, otherVmWait);
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
        ImageBuild.ensure(dir, guest, cache, timeout);
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
        Path runLog = BootWatchdog.runLogOf(jobDir);
        BootWatchdog.Started s = watchdog.boot(cmd, jobDir, runLog);
        long waitNanos = timeout.plusSeconds(60).toNanos() - (System.nanoTime() - s.startNanos());
        int rc;
        if (s.process().waitFor(Math.max(0, waitNanos), TimeUnit.NANOSECONDS)) {
            rc = s.process().exitValue();
        } else {
            VmProcesses.kill(s.process(), Duration.ofSeconds(10));
            rc = 124;
        }
        return new Result(rc, read(runLog), jobDir, Duration.ofNanos(System.nanoTime() - t0), s.boot());
    }

    // ------------------------------------------------------------------------------------------ serve in the
    // background

    /**
     * Boots a VM in the background forwarding host 127.0.0.1:{@code hostPort} to guest port {@code guestPort}:
     * {@code run.sh --fwd HOSTPORT:GUESTPORT --timeout N --out jobDir script ARGS}, and returns once it booted.
     *
     * @throws BootFailure if the VM did not boot twice
     */
    public RunningVm start(Path script, List<String> args, int hostPort, int guestPort, Duration timeout, Path jobDir)
            throws IOException, InterruptedException {
        return start(script, args, List.of("--fwd", hostPort + ":" + guestPort), timeout, jobDir);
    }

    /**
     * {@link #start(Path, List, int, int, Duration, Path) start}, then {@link RunningVm#await await} the line
     * {@code ready} (e.g. {@code ^PEERVM READY}) for at most {@code readyMax}; prints the job dir, how long the
     * service took and what the guest printed so far. A VM that does not get ready is closed before the exception.
     */
    public RunningVm startServing(
            Path script,
            List<String> args,
            int hostPort,
            int guestPort,
            Duration timeout,
            Path jobDir,
            String ready,
            Duration readyMax)
            throws IOException, InterruptedException {
        RunningVm vm = start(script, args, hostPort, guestPort, timeout, jobDir);
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
    public RunningVm start(Path script, List<String> args, List<String> options, Duration timeout, Path jobDir)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(dir.resolve("run.sh").toString(), "--guest", guest));
        cmd.addAll(options);
        cmd.addAll(List.of(
                "--timeout", Long.toString(timeout.toSeconds()), "--out", jobDir.toString(), script.toString()));
        cmd.addAll(args);
        Path runLog = BootWatchdog.runLogOf(jobDir);
        BootWatchdog.Started s = watchdog.boot(cmd, jobDir, runLog);
        return new RunningVm(s.process(), jobDir, runLog, timeout, s.startNanos(), s.boot());
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
    // ------------------------------------------------------------------------------------------ one VM at a time

    /**
     * One VM at a time on this host: waits (at most {@code max}; zero: not at all) while a {@code qemu-system-*}
     * process runs, then returns (after {@code max}, with a warning: the VMs then share the cores).
     */
    public static void waitForOtherVms(Duration max) throws InterruptedException {
        VmProcesses.waitForOtherVms(max);
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

package io.nvmeof.initiator.interop;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The shared peer VM ({@code shared/peer-vm/run.sh}: QEMU/TCG, Debian's 6.1 kernel with nvmet, nvme-cli, fio) run in
 * the background, serving a target to this JVM through a hostfwd port. Adapted from the target module's
 * {@code io.nvmeof.target.interop.PeerVm} (which runs a guest script to completion) — copied, not shared, so the
 * initiator's tests do not depend on the target's test classes.
 *
 * <p>One VM at a time: a VM takes both cores of the CI host. The guest script writes {@code PEERVM READY} to its
 * output (the job dir's {@code output.log}, written live through 9p) once the target listens, and ends when the host
 * creates {@code stop} in the job dir. hostfwd accepts connections before the guest listens: wait for READY.
 */
final class PeerVm {
    /** The image that {@code build.sh} produces; the cache directory can be moved with PEERVM_CACHE. */
    static final Path CACHE = Path.of(System.getenv().getOrDefault("PEERVM_CACHE", "/var/cache/peer-vm"));

    private final Path dir;

    private PeerVm(Path dir) {
        this.dir = dir;
    }

    /**
     * Finds {@code shared/peer-vm}: PEERVM_DIR if set, else the first ancestor of the working directory that has a
     * {@code shared/peer-vm/run.sh}.
     *
     * @throws IllegalStateException naming where it looked
     */
    static PeerVm locate() {
        String env = System.getenv("PEERVM_DIR");
        if (env != null && Files.isExecutable(Path.of(env, "run.sh"))) {
            return new PeerVm(Path.of(env).toAbsolutePath());
        }
        List<Path> tried = new ArrayList<>();
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("shared/peer-vm");
            tried.add(candidate);
            if (Files.isExecutable(candidate.resolve("run.sh"))) {
                return new PeerVm(candidate);
            }
        }
        throw new IllegalStateException("no peer VM: shared/peer-vm/run.sh not found above " + Path.of("").toAbsolutePath()
                + " (looked in " + tried + "); set PEERVM_DIR to the peer-vm directory");
    }

    Path dir() {
        return dir;
    }

    /** Runs build.sh if the image is missing (a build from nothing takes 2–3 minutes; it is idempotent). */
    void ensureImage(Duration timeout) throws IOException, InterruptedException {
        if (Files.exists(CACHE.resolve("rootfs.ext4"))) {
            return;
        }
        System.out.println("peer VM image missing in " + CACHE + ": running " + dir.resolve("build.sh"));
        Process p = new ProcessBuilder(dir.resolve("build.sh").toString()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new IllegalStateException("peer VM build did not finish within " + timeout);
        }
        if (p.exitValue() != 0 || !Files.exists(CACHE.resolve("rootfs.ext4"))) {
            throw new IllegalStateException("peer VM build failed (rc " + p.exitValue() + ")");
        }
    }

    /** A free TCP port on 127.0.0.1 for a hostfwd (QEMU fails with exit 125 if it is taken meanwhile). */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    /**
     * Boots a VM in the background: {@code run.sh --fwd HOSTPORT:GUESTPORT --timeout N --out jobDir script ARGS}.
     * run.sh's stdout+stderr go to {@code jobDir/../run.log} (run.sh wipes jobDir itself).
     */
    Running start(Path script, List<String> args, int hostPort, int guestPort, Duration timeout, Path jobDir)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(dir.resolve("run.sh").toString(), "--fwd", hostPort + ":" + guestPort,
                "--timeout", Long.toString(timeout.toSeconds()), "--out", jobDir.toString(), script.toString()));
        cmd.addAll(args);
        Path runLog = jobDir.resolveSibling(jobDir.getFileName() + "-run.log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(runLog.toFile()).start();
        return new Running(p, jobDir, runLog, timeout, System.nanoTime());
    }

    /** A VM running a serving script. */
    static final class Running implements AutoCloseable {
        private final Process process;
        private final Path jobDir;
        private final Path runLog;
        private final Duration timeout;
        private final long started;
        private boolean stopped;

        Running(Process process, Path jobDir, Path runLog, Duration timeout, long started) {
            this.process = process;
            this.jobDir = jobDir;
            this.runLog = runLog;
            this.timeout = timeout;
            this.started = started;
        }

        Path jobDir() {
            return jobDir;
        }

        boolean isAlive() {
            return process.isAlive();
        }

        /** The guest script's output so far (output.log, written live through 9p). */
        String output() {
            return read(jobDir.resolve("output.log"));
        }

        /** run.sh's own output: after the VM ended, the guest output followed by {@code run.sh: rc=N wall=..}. */
        String runLog() {
            return read(runLog);
        }

        String consoleTail(int lines) {
            return tail(read(jobDir.resolve("console.log")), lines);
        }

        /**
         * Waits until the guest output has a line matching {@code regex} and returns the match.
         *
         * @throws IllegalStateException if the VM ends first or {@code max} passes, with what it printed
         */
        Matcher await(String regex, Duration max) throws InterruptedException {
            Pattern p = Pattern.compile(regex, Pattern.MULTILINE);
            long deadline = System.nanoTime() + max.toNanos();
            while (true) {
                Matcher m = p.matcher(output());
                if (m.find()) {
                    return m;
                }
                if (!process.isAlive()) {
                    throw new IllegalStateException("the peer VM ended (rc " + process.exitValue() + ") before printing /"
                            + regex + "/\n--- run.sh output ---\n" + tail(runLog(), 60) + "\n--- console tail ---\n"
                            + consoleTail(30));
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("no /" + regex + "/ from the peer VM within " + max
                            + "\n--- guest output ---\n" + tail(output(), 60) + "\n--- console tail ---\n" + consoleTail(30));
                }
                Thread.sleep(250);
            }
        }

        /** Seconds since the VM was started. */
        double uptime() {
            return (System.nanoTime() - started) / 1e9;
        }

        /** Creates the job dir's {@code stop} file and waits for the VM to power off; returns run.sh's exit status. */
        int stop(Duration max) throws IOException, InterruptedException {
            if (stopped) {
                return process.isAlive() ? -1 : process.exitValue();
            }
            stopped = true;
            if (process.isAlive()) {
                Files.writeString(jobDir.resolve("stop"), "");
            }
            if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
                kill();
                return 124;
            }
            return process.exitValue();
        }

        /** Only what we started: run.sh, its timeout(1) and QEMU below it. */
        private void kill() throws InterruptedException {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }

        /** Stops the VM if the test did not (60 s for an orderly power-off, then kills it). */
        @Override
        public void close() throws IOException, InterruptedException {
            if (!stopped) {
                stop(Duration.ofSeconds(60));
            } else if (process.isAlive()) {
                kill();
            }
        }

        Duration timeout() {
            return timeout;
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    static Path copyResource(Class<?> anchor, String name, Path dir) throws IOException {
        Path out = dir.resolve(Path.of(name).getFileName().toString());
        try (InputStream in = anchor.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("test resource " + name + " missing");
            }
            Files.copy(in, out);
        }
        return out;
    }

    static void deleteRecursively(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not delete " + root + ": " + e);
        }
    }

    static String tail(String text, int lines) {
        String[] all = text.split("\n", -1);
        int from = Math.max(0, all.length - lines);
        return String.join("\n", java.util.Arrays.copyOfRange(all, from, all.length));
    }
}

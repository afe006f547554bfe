package io.nvmeof.target.interop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs a script as root in a fresh peer VM (the shared {@code peer-vm/run.sh}: QEMU, Debian kernel with the real
 * nvme-tcp host, nvme-cli, fio). In the guest, 10.0.2.2 is the host's 127.0.0.1. One VM at a time: it takes both
 * cores of the CI host.
 */
final class PeerVm {
    /** The image that {@code build.sh} produces; the cache directory can be moved with PEERVM_CACHE. */
    static final Path CACHE = Path.of(System.getenv().getOrDefault("PEERVM_CACHE", "/var/cache/peer-vm"));

    /** What a run produced. {@code output} is the guest script's stdout+stderr followed by run.sh's own lines. */
    record Result(int rc, String output, Path jobDir, Duration wall) {
        /** The guest's console log (kernel messages), useful when the VM itself failed. */
        String console() {
            try {
                return Files.readString(jobDir.resolve("console.log"));
            } catch (IOException e) {
                return "(no console.log: " + e.getMessage() + ")";
            }
        }
    }

    private final Path dir;

    private PeerVm(Path dir) {
        this.dir = dir;
    }

    /**
     * Finds {@code shared/peer-vm}: PEERVM_DIR if set, else the first ancestor of the working directory that has a
     * {@code shared/peer-vm/run.sh} (the repository is checked out next to {@code shared/}).
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
        Result r = exec(List.of(dir.resolve("build.sh").toString()), timeout, null);
        if (r.rc != 0 || !Files.exists(CACHE.resolve("rootfs.ext4"))) {
            throw new IllegalStateException("peer VM build failed (rc " + r.rc + "):\n" + tail(r.output, 60));
        }
    }

    /**
     * Boots a VM and runs {@code script ARGS} in it: {@code run.sh --no-fwd --timeout N --out jobDir [extra] script
     * ARGS}. run.sh enforces the timeout itself (exit 124); this waits 60 s longer before killing it.
     */
    Result run(Path script, List<String> args, Duration timeout, Path jobDir, List<String> extraOptions)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(dir.resolve("run.sh").toString(), "--no-fwd",
                "--timeout", Long.toString(timeout.toSeconds()), "--out", jobDir.toString()));
        cmd.addAll(extraOptions);
        cmd.add(script.toString());
        cmd.addAll(args);
        return exec(cmd, timeout.plusSeconds(60), jobDir);
    }

    private static Result exec(List<String> cmd, Duration timeout, Path jobDir) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        StringBuilder out = new StringBuilder();
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (out) {
                        out.append(line).append('\n');
                    }
                }
            } catch (IOException ignored) {
                // the process is gone
            }
        }, "peer-vm-output");
        pump.start();
        int rc;
        if (p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            rc = p.exitValue();
        } else {
            // Only what we started: run.sh, its timeout(1) and QEMU below it.
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
            rc = 124;
        }
        pump.join(10_000);
        synchronized (out) {
            return new Result(rc, out.toString(), jobDir, Duration.ofNanos(System.nanoTime() - t0));
        }
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

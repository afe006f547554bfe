package io.nvmeof.testkit.peervm;

import static io.nvmeof.testkit.peervm.VmProcesses.kill;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;

/**
 * A guest's image, built by {@code build.sh} when the cache has none for the current recipe ({@link
 * PeerVm#ensureImage}). Stateless; {@link #ensure} owns the build process and its output pump until it returns.
 */
final class ImageBuild {
    private ImageBuild() {}

    /** {@code build.sh --guest G --check}, then {@code build.sh --guest G} if the image is missing. */
    static void ensure(Path dir, String guest, Path cache, Duration timeout) throws IOException, InterruptedException {
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
}

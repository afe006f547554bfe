package io.nvmeof.initiator.container;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The repository's Dockerfile: builds the image, runs it with its NVMe/TCP and metrics ports published on loopback,
 * connects with our initiator, writes and reads back, and scrapes the metrics. Runs in the default {@code mvn verify}
 * and skips, saying why on standard output, where no container engine answers ({@code docker info} fails: no client,
 * or a client without an engine) or where the base images cannot be pulled.
 */
@Tag("container")
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class ContainerImageTest {
    private static final String IMAGE = "nvmeof-target:container-test";
    private static final String NQN = "nqn.2024-01.io.nvmeof:container";

    /** Runs a command; returns its exit code and output (stdout and stderr together). */
    private record Result(int code, String output) {}

    private static Result exec(long timeoutSeconds, String... command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command)
                    .directory(repositoryRoot().toFile())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            return new Result(127, String.valueOf(e.getMessage()));
        }
        Path out = Files.createTempFile("container-test", ".log");
        try {
            Thread drain = new Thread(() -> {
                try {
                    Files.copy(p.getInputStream(), out, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                } catch (IOException ignored) {
                    // the process's output is lost; the exit code still tells
                }
            });
            drain.start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            drain.join(10_000);
            return new Result(p.isAlive() ? -1 : p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static Path repositoryRoot() {
        Path here = Path.of("").toAbsolutePath();
        return Files.exists(here.resolve("Dockerfile")) ? here : here.getParent();
    }

    private static void skip(String why) {
        System.out.println("[container] SKIPPED ContainerImageTest: " + why);
        assumeTrue(false, why);
    }

    @Test
    void imageRunsTheDaemonAndOurInitiatorConnects() throws Exception {
        Result info = exec(60, "docker", "info", "--format", "{{.ServerVersion}}");
        if (info.code() != 0) {
            skip("no container engine answers `docker info` (" + firstLine(info.output()) + ")");
        }
        Result build = exec(1500, "docker", "build", "-t", IMAGE, ".");
        if (build.code() != 0) {
            String o = build.output();
            if (o.contains("pull")
                    || o.contains("resolve")
                    || o.contains("dial tcp")
                    || o.contains("TLS")
                    || o.contains("registry")
                    || o.contains("manifest")) {
                skip("the base images cannot be pulled here (" + lastLines(o) + ")");
            }
        }
        assertEquals(0, build.code(), "docker build failed:\n" + lastLines(build.output()));
        Result run = exec(
                120,
                "docker",
                "run",
                "-d",
                "--rm",
                "-p",
                "127.0.0.1::4420",
                "-p",
                "127.0.0.1::9464",
                IMAGE,
                "--listen",
                "tcp://0.0.0.0:4420",
                "--nqn",
                NQN,
                "--namespace",
                "size=64M",
                "--memory-budget",
                "256M",
                "--metrics",
                "0.0.0.0:9464",
                "--metrics-allow-remote",
                "--log-format",
                "json");
        assertEquals(0, run.code(), run.output());
        String id = run.output().strip().lines().reduce((a, b) -> b).orElseThrow();
        try {
            waitForReady(id);
            int nvmePort = hostPort(id, "4420/tcp");
            int metricsPort = hostPort(id, "9464/tcp");
            try (Controller c = Nvme.connect("nvme+tcp://127.0.0.1:" + nvmePort + "/" + NQN)) {
                Namespace ns = c.namespace(1);
                ByteBuffer w = ByteBuffer.allocateDirect(8192);
                for (int i = 0; i < w.capacity(); i++) {
                    w.put(i, (byte) (i * 13));
                }
                ns.write(10, 2, w);
                ByteBuffer r = ByteBuffer.allocateDirect(8192);
                ns.read(10, 2, r);
                assertEquals(w, r);
            }
            HttpResponse<String> m = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertEquals(200, m.statusCode());
            assertTrue(
                    m.body().contains("nvmeof_namespace_writes_total{nsid=\"1\",subsystem=\"" + NQN + "\"} 1"),
                    m.body());
        } finally {
            exec(60, "docker", "rm", "-f", id);
        }
    }

    private static void waitForReady(String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String logs = "";
        while (System.nanoTime() < deadline) {
            logs = exec(30, "docker", "logs", id).output();
            if (logs.contains("ready")) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("the daemon in the container did not get ready:\n" + logs);
    }

    private static int hostPort(String id, String containerPort) throws Exception {
        String out = exec(30, "docker", "port", id, containerPort).output().strip();
        String first = out.lines().findFirst().orElseThrow(() -> new AssertionError("no port " + containerPort));
        return Integer.parseInt(first.substring(first.lastIndexOf(':') + 1));
    }

    private static String firstLine(String s) {
        return s.strip().lines().findFirst().orElse("no output");
    }

    private static String lastLines(String s) {
        List<String> lines = new ArrayList<>(s.strip().lines().toList());
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    }
}

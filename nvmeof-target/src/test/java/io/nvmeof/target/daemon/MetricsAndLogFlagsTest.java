package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** --metrics, --metrics-allow-remote and --log-format on the daemon, and the JSON log line format. */
class MetricsAndLogFlagsTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(TargetDaemon daemon, String... args) {
        CommandLine cl = TargetDaemon.commandLine(daemon);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void daemonServesMetricsOnLoopbackAndStopsServingWhenStopped() throws Exception {
        TargetDaemon d = new TargetDaemon();
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(
                () -> run(d, "--listen", "tcp://127.0.0.1:0", "--namespace", "size=1G", "--metrics", "127.0.0.1:0"));
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            while (!out.toString().contains("ready")) {
                Thread.sleep(20);
            }
        });
        InetSocketAddress at = d.metricsEndpoint().address();
        assertTrue(at.getAddress().isLoopbackAddress());
        assertTrue(out.toString().contains("metrics on http://127.0.0.1:" + at.getPort() + "/metrics"), out.toString());
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + at.getPort() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        assertTrue(r.body().contains("nvmeof_memory_budget_bytes "), r.body());
        assertTrue(
                r.body()
                        .contains("nvmeof_namespace_reads_total{nsid=\"1\",subsystem=\"" + TargetDaemon.DEFAULT_NQN
                                + "\"} 0"),
                r.body());
        d.stop();
        assertEquals(0, exit.get(20, TimeUnit.SECONDS));
        assertThrows(
                java.io.IOException.class,
                () -> new java.net.Socket(at.getAddress(), at.getPort()).close(),
                "the endpoint closed with the daemon");
    }

    @Test
    void aNonLoopbackMetricsAddressNeedsToBeAllowed() {
        assertEquals(
                2,
                run(
                        new TargetDaemon(),
                        "--listen",
                        "tcp://127.0.0.1:0",
                        "--namespace",
                        "size=1M",
                        "--metrics",
                        "0.0.0.0:0"));
        assertTrue(err.toString().contains("not a loopback address"), err.toString());
        assertFalse(out.toString().contains("ready"), out.toString());
    }

    @Test
    void badMetricsAndLogFormatValuesExitTwo() {
        assertEquals(2, run(new TargetDaemon(), "--namespace", "size=1M", "--metrics", "127.0.0.1:http"));
        assertTrue(err.toString().contains("is not a number"), err.toString());
        assertEquals(2, run(new TargetDaemon(), "--namespace", "size=1M", "--metrics", "127.0.0.1:70000"));
        assertTrue(err.toString().contains("0..65535"), err.toString());
        assertEquals(2, run(new TargetDaemon(), "--namespace", "size=1M", "--log-format", "xml"));
        assertTrue(err.toString().contains("--log-format must be text or json"), err.toString());
        assertFalse(out.toString().contains("ready"), out.toString());
    }

    @Test
    void logFormatJsonFormatsTheConsoleHandler() throws Exception {
        java.util.logging.Handler[] handlers =
                java.util.logging.Logger.getLogger("").getHandlers();
        java.util.logging.Formatter[] before = new java.util.logging.Formatter[handlers.length];
        for (int i = 0; i < handlers.length; i++) {
            before[i] = handlers[i].getFormatter();
        }
        try {
            TargetDaemon d = new TargetDaemon();
            CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(
                    () -> run(d, "--listen", "tcp://127.0.0.1:0", "--namespace", "size=1M", "--log-format", "json"));
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                while (!out.toString().contains("ready")) {
                    Thread.sleep(20);
                }
            });
            assertTrue(handlers.length > 0);
            for (java.util.logging.Handler h : handlers) {
                assertTrue(h.getFormatter() instanceof JsonLogFormatter, String.valueOf(h.getFormatter()));
            }
            d.stop();
            assertEquals(0, exit.get(20, TimeUnit.SECONDS));
        } finally {
            for (int i = 0; i < handlers.length; i++) {
                handlers[i].setFormatter(before[i]);
            }
        }
    }

    @Test
    void metricsAddressForms() {
        assertEquals(new MetricsAddress("127.0.0.1", 9464), MetricsAddress.parse("9464"));
        assertEquals(new MetricsAddress("::1", 9464), MetricsAddress.parse("[::1]:9464"));
        assertEquals(new MetricsAddress("localhost", 0), MetricsAddress.parse("localhost:0"));
        assertThrows(IllegalArgumentException.class, () -> MetricsAddress.parse(":9464"));
    }

    @Test
    void jsonLogLinesAreOneObjectEach() throws Exception {
        LogRecord rec = new LogRecord(Level.WARNING, "refused \"{0}\"\nsecond line");
        rec.setParameters(new Object[] {"host-a"});
        rec.setLoggerName("io.nvmeof.target");
        rec.setThrown(new IllegalStateException("boom"));
        String line = new JsonLogFormatter().format(rec);
        assertTrue(line.endsWith(System.lineSeparator()));
        assertEquals(1, line.strip().lines().count(), line);
        JsonNode j = new ObjectMapper().readTree(line);
        assertEquals("WARNING", j.get("level").asText());
        assertEquals("io.nvmeof.target", j.get("logger").asText());
        assertEquals("refused \"host-a\"\nsecond line", j.get("message").asText());
        assertTrue(j.get("thrown").asText().contains("IllegalStateException: boom"));
        assertTrue(j.get("time").asText().endsWith("Z"), j.get("time").asText());

        LogRecord plain = new LogRecord(Level.INFO, "ready");
        plain.setLoggerName("x");
        JsonNode p = new ObjectMapper().readTree(new JsonLogFormatter().format(plain));
        assertFalse(p.has("thrown"));
    }
}

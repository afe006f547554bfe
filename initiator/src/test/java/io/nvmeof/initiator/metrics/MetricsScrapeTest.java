package io.nvmeof.initiator.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.target.metrics.MetricsEndpoint;
import io.nvmeof.target.stats.QueueStats;
import io.nvmeof.target.stats.TargetStats;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Prometheus endpoint scraped while our initiator does I/O over NVMe/TCP: the counters move during the I/O and,
 * once it is done, match it exactly (reads, writes, bytes per namespace, subsystem and queue), the latency histogram
 * has its buckets, an LBA Out of Range read is counted by status, and the memory gauge shows what was written.
 */
@Timeout(120)
class MetricsScrapeTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("16M").build();

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    static String scrape(MetricsEndpoint m) throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(
                                URI.create("http://127.0.0.1:" + m.address().getPort() + "/metrics"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(
                r.headers().firstValue("content-type").orElse("").startsWith("text/plain"),
                r.headers().toString());
        return r.body();
    }

    /** The sum of the samples named {@code name} whose labels contain every one of {@code labels}. */
    static double value(String text, String name, String... labels) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("#") || !(line.startsWith(name + "{") || line.startsWith(name + " "))) {
                continue;
            }
            boolean all = true;
            for (String l : labels) {
                all &= line.contains(l);
            }
            if (all) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    @Test
    void countersMoveDuringIoAndMatchItAfterwards() throws Exception {
        try (MetricsEndpoint m = MetricsEndpoint.start(target.target(), "127.0.0.1", 0, false);
                Controller c = Nvme.connect(target.uri("queues=2&depth=16"))) {
            Namespace ns = c.namespace(1);
            String sub = "subsystem=\"" + target.nqn() + "\"";
            String before = scrape(m);
            double reads0 = value(before, "nvmeof_namespace_reads_total", sub, "nsid=\"1\"");
            double writes0 = value(before, "nvmeof_namespace_writes_total", sub, "nsid=\"1\"");

            int writes = 300;
            int reads = 500;
            int blocks = 2; // 8 KiB each
            AtomicBoolean done = new AtomicBoolean();
            CompletableFuture<Void> io = CompletableFuture.runAsync(() -> {
                try {
                    ByteBuffer w = ByteBuffer.allocateDirect(blocks * 4096);
                    ByteBuffer r = ByteBuffer.allocateDirect(blocks * 4096);
                    for (int i = 0; i < writes; i++) {
                        ns.write(i * blocks, blocks, w);
                    }
                    for (int i = 0; i < reads; i++) {
                        ns.read((i % writes) * blocks, blocks, r);
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                } finally {
                    done.set(true);
                }
            });
            // Scrape while the I/O runs: the counts only go up.
            double last = writes0 + reads0;
            int scrapes = 0;
            while (!done.get()) {
                String t = scrape(m);
                double now = value(t, "nvmeof_namespace_writes_total", sub, "nsid=\"1\"")
                        + value(t, "nvmeof_namespace_reads_total", sub, "nsid=\"1\"");
                assertTrue(now >= last, "counters went back: " + last + " -> " + now);
                last = now;
                scrapes++;
            }
            io.get();
            assertTrue(scrapes >= 1);

            // One read beyond the namespace: LBA Out of Range.
            long end = ns.blockCount();
            NvmeStatusException e =
                    assertThrows(NvmeStatusException.class, () -> ns.read(end - 1, 2, ByteBuffer.allocateDirect(8192)));
            assertTrue(Status.is(e.status(), Status.LBA_OUT_OF_RANGE));

            String after = scrape(m);
            long bytes = blocks * 4096L;
            assertEquals(reads, value(after, "nvmeof_namespace_reads_total", sub, "nsid=\"1\"") - reads0, after);
            assertEquals(writes, value(after, "nvmeof_namespace_writes_total", sub, "nsid=\"1\"") - writes0);
            assertEquals(
                    reads * bytes,
                    value(after, "nvmeof_namespace_read_bytes_total", sub, "nsid=\"1\"") - reads0 * bytes);
            assertEquals(
                    writes * bytes,
                    value(after, "nvmeof_namespace_written_bytes_total", sub, "nsid=\"1\"") - writes0 * bytes);
            // the same through the subsystem and the queues of this controller (all of its I/O is ours)
            String ctrl = "cntlid=\"" + c.cntlid() + "\"";
            assertEquals(reads, value(after, "nvmeof_queue_reads_total", sub, ctrl));
            assertEquals(writes, value(after, "nvmeof_queue_writes_total", sub, ctrl));
            assertEquals(writes * bytes, value(after, "nvmeof_queue_written_bytes_total", sub, ctrl));
            assertTrue(value(after, "nvmeof_subsystem_reads_total", sub) >= reads);
            // the error, by status, on the queue and the subsystem
            String lbaOutOfRange = "status=\"" + Status.name(Status.LBA_OUT_OF_RANGE) + "\"";
            assertEquals(1, value(after, "nvmeof_queue_errors_total", sub, ctrl, lbaOutOfRange, "sc=\"0x80\""), after);
            assertTrue(value(after, "nvmeof_subsystem_errors_total", sub, lbaOutOfRange) >= 1);
            // the latency histogram: every bucket, +Inf counting every read (and the failed one)
            assertTrue(after.contains("# TYPE nvmeof_queue_latency_seconds histogram"), after);
            assertEquals(
                    reads + 1,
                    value(after, "nvmeof_queue_latency_seconds_bucket", sub, ctrl, "op=\"read\"", "le=\"+Inf\""));
            assertEquals(reads + 1, value(after, "nvmeof_queue_latency_seconds_count", sub, ctrl, "op=\"read\""));
            assertTrue(value(after, "nvmeof_queue_latency_seconds_sum", sub, ctrl, "op=\"read\"") > 0);
            assertEquals(
                    16 * 2 /* 15 bounds and +Inf, on each I/O queue */,
                    after.lines()
                            .filter(l -> l.startsWith("nvmeof_queue_latency_seconds_bucket{")
                                    && l.contains(ctrl)
                                    && l.contains("op=\"read\"")
                                    && !l.contains("qid=\"0\""))
                            .count());
            // memory: 300 writes of 8 KiB touch 2400 KiB = 19 chunks of 128 KiB
            assertTrue(value(after, "nvmeof_memory_used_bytes") >= writes * bytes, after);
            assertEquals(target.target().memoryBudgetBytes(), value(after, "nvmeof_memory_budget_bytes"));
            assertTrue(value(after, "nvmeof_subsystem_controllers", sub) >= 1);
            assertEquals(0, value(after, "nvmeof_queue_in_flight", sub, ctrl, "qid=\"1\""));

            // the Java snapshot says the same (nvmf_get_stats is built on it)
            TargetStats s = target.target().stats();
            List<QueueStats> mine = s.queues().stream()
                    .filter(q -> q.cntlid() == c.cntlid() && q.subsystem().equals(target.nqn()))
                    .toList();
            assertEquals(3, mine.size(), "admin queue and two I/O queues: " + mine);
            assertEquals(reads, mine.stream().mapToLong(q -> q.io().reads()).sum());
            assertEquals(
                    1L,
                    mine.stream()
                            .mapToLong(q -> q.errorsByStatus().getOrDefault(Status.LBA_OUT_OF_RANGE, 0L))
                            .sum());

            // and the JSON-RPC nvmf_get_stats reports the same namespace counts as the endpoint
            com.fasterxml.jackson.databind.JsonNode rpc =
                    new io.nvmeof.target.rpc.Management(target.target()).call("nvmf_get_stats", null);
            com.fasterxml.jackson.databind.JsonNode nsStats = null;
            for (com.fasterxml.jackson.databind.JsonNode n :
                    rpc.get("nvmeof_java").get("namespaces")) {
                if (n.get("nqn").asText().equals(target.nqn()) && n.get("nsid").asInt() == 1) {
                    nsStats = n;
                }
            }
            assertTrue(nsStats != null, rpc.toString());
            String now = scrape(m);
            assertEquals(
                    value(now, "nvmeof_namespace_reads_total", sub, "nsid=\"1\""),
                    nsStats.get("reads").asLong());
            assertEquals(
                    value(now, "nvmeof_namespace_writes_total", sub, "nsid=\"1\""),
                    nsStats.get("writes").asLong());
            assertEquals(
                    value(now, "nvmeof_namespace_written_bytes_total", sub, "nsid=\"1\""),
                    nsStats.get("bytes_written").asLong());
        }
    }

    @Test
    void refusesAnAddressThatIsNotLoopbackUnlessAllowed() throws Exception {
        String host = java.net.InetAddress.getLocalHost().getHostAddress();
        if (java.net.InetAddress.getByName(host).isLoopbackAddress()) {
            host = "0.0.0.0"; // the wildcard is not loopback either
        }
        String h = host;
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> MetricsEndpoint.start(target.target(), h, 0, false));
        assertTrue(e.getMessage().contains("not a loopback address"), e.getMessage());
        try (MetricsEndpoint m = MetricsEndpoint.start(target.target(), "0.0.0.0", 0, true)) {
            assertTrue(m.address().getPort() > 0);
        }
    }
}

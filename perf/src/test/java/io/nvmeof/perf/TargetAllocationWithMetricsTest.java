package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.target.metrics.MetricsEndpoint;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The target's I/O threads (NVMe/TCP event loops) allocate nothing per I/O in steady state while the metrics endpoint
 * is scraped: our initiator reads and writes 4 KiB blocks, a thread scrapes /metrics all along, and the heap bytes the
 * target's {@code nvme-tcp-io-*} threads allocated over the measured I/Os are divided by their number.
 */
@Timeout(180)
class TargetAllocationWithMetricsTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").build();

    /** Loose: it catches a per-I/O object (16 B or more each I/O) creeping in, not a stray byte of the event loop. */
    private static final long MAX_BYTES_PER_IO = 8;

    private static long targetThreadBytes() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("nvme-tcp-io-")) {
                sum += mx.getThreadAllocatedBytes(t.getId());
            }
        }
        return sum;
    }

    private static void io(Namespace ns, ByteBuffer w, ByteBuffer r, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            long lba = (i * 7L) % 4096;
            ns.write(lba, 1, w);
            ns.read(lba, 1, r);
        }
    }

    @Test
    void targetIoThreadsAllocateNothingPerIoWhileScraped() throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger scrapes = new AtomicInteger();
        try (MetricsEndpoint m = MetricsEndpoint.start(target.target(), "127.0.0.1", 0, false);
                Controller c = Nvme.connect(target.uri("queues=1&depth=8"))) {
            Namespace ns = c.namespace(1);
            ByteBuffer w = ByteBuffer.allocateDirect(4096);
            ByteBuffer r = ByteBuffer.allocateDirect(4096);
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest get = HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + m.address().getPort() + "/metrics"))
                    .build();
            Thread scraper = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        HttpResponse<String> resp = http.send(get, HttpResponse.BodyHandlers.ofString());
                        assertEquals(200, resp.statusCode());
                        scrapes.incrementAndGet();
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }
            });
            scraper.start();
            try {
                io(ns, w, r, 20_000); // warm up: JIT, pools, the namespace's chunks, the queue's counters
                int n = 20_000;
                int scrapes0 = scrapes.get();
                long before = targetThreadBytes();
                io(ns, w, r, n);
                long perIo = (targetThreadBytes() - before) / (2L * n);
                System.out.println("target I/O threads with metrics scraped (" + (scrapes.get() - scrapes0)
                        + " scrapes): ~" + perIo + " heap bytes per I/O");
                assertTrue(scrapes.get() > scrapes0, "scraped during the measured I/O");
                assertTrue(perIo <= MAX_BYTES_PER_IO, perIo + " B per I/O on the target's I/O threads");
            } finally {
                stop.set(true);
                scraper.join();
            }
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }
}

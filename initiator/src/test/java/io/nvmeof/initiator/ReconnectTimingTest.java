package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.testsupport.TcpProxy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Measures (and prints; asserts nothing about speed) the time from the target coming back to I/O flowing again: the
 * proxy refuses connections while the controller reconnects, then lets them through ("the target is back"); a thread
 * doing 4 KiB writes at queue depth 1 notes when its first write completes after that. The wait is the rest of the
 * current reconnect_delay plus one bring-up, so it is measured for two delays.
 */
class ReconnectTimingTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("16M").blockSize(4096).build();

    @Test
    void timeFromTargetBackToIoFlowing() throws Exception {
        StringBuilder report = new StringBuilder("reconnect: target back -> first I/O completed (ms)\n");
        for (String delay : List.of("100ms", "1s")) {
            List<Long> backToIo = new ArrayList<>();
            List<Long> bringUp = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                long[] r = once(delay);
                backToIo.add(r[0]);
                bringUp.add(r[1]);
            }
            Collections.sort(backToIo);
            Collections.sort(bringUp);
            report.append(String.format(
                    "  reconnect_delay=%-5s back->I/O min %d median %d max %d; attempt->LIVE median %d%n",
                    delay, backToIo.get(0), backToIo.get(2), backToIo.get(4), bringUp.get(2)));
        }
        System.out.print(report);
    }

    /** One loss and return: {ms from "back" to the first I/O completed, ms of the successful attempt to LIVE}. */
    private long[] once(String delay) throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = Nvme.connect(
                        NvmeUri.parse("nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn()
                                + "?queues=1&reconnect_delay=" + delay + "&ctrl_loss_tmo=60"),
                        ConnectOptions.builder()
                                .connectTimeout(Duration.ofSeconds(2))
                                .build())) {
            Namespace ns = c.namespace();
            AtomicLong lastDone = new AtomicLong();
            Thread w = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocateDirect(4096);
                while (!Thread.currentThread().isInterrupted() && c.isOpen()) {
                    try {
                        ns.write(7, 1, b);
                        lastDone.set(System.nanoTime());
                    } catch (NvmeException e) {
                        return;
                    }
                }
            });
            w.start();
            Thread.sleep(100);
            proxy.refuseConnections(true);
            proxy.cutConnections();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (proxy.refusedConnections() < 2 && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            Thread.sleep(50);
            long back = System.nanoTime();
            proxy.refuseConnections(false);
            while (lastDone.get() - back < 0 && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            long toIo = TimeUnit.NANOSECONDS.toMillis(lastDone.get() - back);
            w.interrupt();
            w.join(10_000);
            assertEquals(ControllerState.LIVE, c.state());
            assertTrue(lastDone.get() - back > 0, "I/O flows again");
            return new long[] {toIo, c.recovery().lastAttemptMillis()};
        }
    }
}

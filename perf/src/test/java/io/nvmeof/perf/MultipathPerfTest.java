package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.AnaStateConfig;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * nvmeof-perf with a multipath target URI (two listeners of one subsystem): a verified write run goes on while the
 * test closes the optimized listener, then makes the remaining path inaccessible for 300 ms and optimized again; it
 * exits 0 (every block read back as written) and reports the failovers.
 */
class MultipathPerfTest {
    static final String NQN = "nqn.2026-01.io.nvmeof:perf-mpath";

    static long onPort1(NvmeTarget target) {
        long n = 0;
        for (io.nvmeof.target.Controller c : target.subsystem(NQN).controllers()) {
            if (c.port().portId() == 1) {
                n += c.ioCommands();
            }
        }
        return n;
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void verifiedRunSurvivesAnaFlipsAndALostListenerAndCountsFailovers() throws Exception {
        SubsystemConfig s = new SubsystemConfig(
                NQN,
                true,
                List.of(),
                List.of(new NamespaceConfig(1, 128L << 20, 4096, null, false)),
                null,
                null,
                List.of(new AnaStateConfig(2, 1, AnaState.NON_OPTIMIZED)));
        TargetConfig config = new TargetConfig(
                List.of(
                        new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384),
                        new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)),
                List.of(s),
                1L << 30,
                0);
        try (NvmeTarget target = NvmeTarget.start(config)) {
            String uri =
                    "nvme+tcp://127.0.0.1:" + target.boundAddresses().get(0).getPort() + ",127.0.0.1:"
                            + target.boundAddresses().get(1).getPort() + "/" + NQN + "?timeout=5s&reconnect_delay=1";
            Thread flipper = new Thread(() -> {
                try {
                    // Once the run writes through listener 1 (the optimized path):
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (onPort1(target) < 2000 && System.nanoTime() < end) {
                        Thread.sleep(5);
                    }
                    target.removeListener(1); // the optimized path: its commands in flight fail over
                    Thread.sleep(500);
                    target.setAnaState(NQN, 2, 1, AnaState.INACCESSIBLE); // no usable path for 300 ms
                    Thread.sleep(300);
                    target.setAnaState(NQN, 2, 1, AnaState.OPTIMIZED);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            flipper.start();
            Cli r = Cli.run(
                    "--target",
                    uri,
                    "--rw=randwrite",
                    "--bs=4k",
                    "--iodepth=8",
                    "--numjobs=2",
                    "--size=64m",
                    "--runtime=3s",
                    "--verify=crc32c");
            flipper.join();
            System.out.println(r.out());
            assertEquals(0, r.exit(), r.toString());
            Matcher m = Pattern.compile("paths        : reconnects=\\d+, failovers=(\\d+)")
                    .matcher(r.out());
            assertTrue(m.find(), "the report has a failover line: " + r.out());
            assertTrue(Long.parseLong(m.group(1)) > 0, "commands were failed over: " + r.out());
        }
    }
}

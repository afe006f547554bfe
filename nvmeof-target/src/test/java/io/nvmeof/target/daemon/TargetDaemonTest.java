package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.config.TargetConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class TargetDaemonTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(TargetDaemon daemon, String... args) {
        CommandLine cl = TargetDaemon.commandLine(daemon);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void flagsBuildOneSubsystem() {
        TargetDaemon d = new TargetDaemon();
        new CommandLine(d)
                .parseArgs(
                        "--listen",
                        "tcp://127.0.0.1:14420",
                        "--namespace",
                        "size=1G",
                        "--namespace",
                        "size=64m,bs=512,nsid=9,ro",
                        "--allow-host",
                        "nqn.2014-08.org.nvmexpress:uuid:x");
        TargetConfig cfg = d.buildConfig();
        assertEquals(1, cfg.subsystems().size());
        assertEquals(TargetDaemon.DEFAULT_NQN, cfg.subsystems().get(0).nqn());
        assertEquals(false, cfg.subsystems().get(0).allowAnyHost());
        assertEquals(1L << 30, cfg.subsystems().get(0).namespaces().get(0).sizeBytes());
        assertEquals(9, cfg.subsystems().get(0).namespaces().get(1).nsid());
        assertEquals(512, cfg.subsystems().get(0).namespaces().get(1).blockSize());
        assertEquals(14420, cfg.listeners().get(0).port());
    }

    @Test
    void anaFlags() {
        TargetDaemon d = new TargetDaemon();
        new CommandLine(d)
                .parseArgs(
                        "--listen",
                        "tcp://127.0.0.1:14420",
                        "--listen",
                        "tcp://127.0.0.1:14421",
                        "--namespace",
                        "size=1G,ana-group=3",
                        "--ana-state",
                        "listener=2,group=3,state=inaccessible");
        TargetConfig cfg = d.buildConfig();
        assertEquals(3, cfg.subsystems().get(0).namespaces().get(0).anaGroup());
        assertEquals(
                java.util.List.of(
                        new io.nvmeof.target.config.AnaStateConfig(2, 3, io.nvmeof.core.command.AnaState.INACCESSIBLE)),
                cfg.subsystems().get(0).anaStates());
        TargetDaemon bad = new TargetDaemon();
        new CommandLine(bad).parseArgs("--namespace", "size=1G", "--ana-state", "listener=2,group=1,state=optimized");
        IllegalArgumentException e =
                org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, bad::buildConfig);
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("only 1"), e.getMessage());
        TargetDaemon bad2 = new TargetDaemon();
        new CommandLine(bad2).parseArgs("--namespace", "size=1G", "--ana-state", "group=1,state=optimized");
        e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, bad2::buildConfig);
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("--ana-state"), e.getMessage());
    }

    @Test
    void badArgumentsExitTwoWithAMessage() {
        assertEquals(2, run(new TargetDaemon(), "--namespace", "size=1G,bs=1000", "--listen", "tcp://127.0.0.1:0"));
        assertTrue(err.toString().contains("block size must be 512 or 4096"), err.toString());
        assertEquals(2, run(new TargetDaemon(), "--namespace", "sise=1G"));
        assertTrue(err.toString().contains("unknown namespace setting 'sise'"), err.toString());
        assertEquals(2, run(new TargetDaemon(), "--listen", "tcp://127.0.0.1:0"));
        assertTrue(err.toString().contains("no namespace"), err.toString());
        assertEquals(2, run(new TargetDaemon(), "--no-such-option"));
        assertTrue(err.toString().contains("Unknown option"), err.toString());
        assertEquals(2, run(new TargetDaemon(), "--listen", "carrier-pigeon://127.0.0.1:0", "--namespace", "size=1M"));
        assertTrue(err.toString().contains("no transport named 'carrier-pigeon'"), err.toString());
    }

    @Test
    void badConfigFileExitsTwo(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("t.json");
        Files.writeString(f, "{ \"listeners\": [ { \"listen\": \"tcp://127.0.0.1:0\", \"colour\": \"red\" } ] }");
        assertEquals(2, run(new TargetDaemon(), "--config", f.toString()));
        assertTrue(err.toString().contains("colour"), err.toString());
        assertEquals(
                2,
                run(new TargetDaemon(), "--config", dir.resolve("missing.json").toString()));
        assertTrue(err.toString().contains("config file not found"), err.toString());
    }

    @Test
    void portInUseExitsOneWithAMessage() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            int port = taken.getLocalPort();
            assertEquals(1, run(new TargetDaemon(), "--listen", "tcp://127.0.0.1:" + port, "--namespace", "size=1M"));
            assertTrue(err.toString().contains(String.valueOf(port)), err.toString());
            assertTrue(err.toString().toLowerCase().contains("in use"), err.toString());
        }
    }

    @Test
    void startsServesAndStops() throws Exception {
        TargetDaemon d = new TargetDaemon();
        CompletableFuture<Integer> exit =
                CompletableFuture.supplyAsync(() -> run(d, "--listen", "tcp://127.0.0.1:0", "--namespace", "size=1T"));
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            while (!out.toString().contains("ready")) {
                Thread.sleep(20);
            }
        });
        String text = out.toString();
        assertTrue(text.contains("namespace 1: 1 TiB"), text);
        InetSocketAddress bound = d.target().boundAddresses().get(0);
        assertTrue(text.contains("listening on tcp://127.0.0.1:" + bound.getPort()), text);
        try (Socket s = new Socket(bound.getAddress(), bound.getPort())) {
            assertTrue(s.isConnected());
        }
        d.stop();
        assertEquals(0, exit.get(20, TimeUnit.SECONDS));
        assertTrue(out.toString().contains("stopped"));
    }
}

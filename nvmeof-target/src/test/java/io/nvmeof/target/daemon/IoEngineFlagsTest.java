package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.spi.IoMode;
import io.nvmeof.target.config.TargetConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --io-engine}, {@code --busy-poll} and the config file's {@code ioEngine} / {@code busyPoll}. */
class IoEngineFlagsTest {
    private static TargetConfig flags(String... args) {
        TargetDaemon d = new TargetDaemon();
        new CommandLine(d).parseArgs(args);
        return d.buildConfig();
    }

    @Test
    void defaultIsAutoAndSleeping() {
        TargetConfig cfg = flags("--listen", "tcp://127.0.0.1:0", "--namespace", "size=1M");
        assertEquals(IoMode.DEFAULT, cfg.listeners().get(0).ioMode());
    }

    @Test
    void flagsReachEveryListener() {
        TargetConfig cfg = flags(
                "--listen",
                "tcp://127.0.0.1:0",
                "--listen",
                "tcp://127.0.0.1:0",
                "--namespace",
                "size=1M",
                "--io-engine",
                "io_uring",
                "--busy-poll");
        assertEquals(2, cfg.listeners().size());
        for (var l : cfg.listeners()) {
            assertEquals(new IoMode("io_uring", true), l.ioMode());
        }
        assertEquals(
                new IoMode("nio", false),
                flags("--namespace", "size=1M", "--io-engine", "NIO")
                        .listeners()
                        .get(0)
                        .ioMode());
    }

    @Test
    void unknownEngineExitsTwoNamingTheChoices() {
        StringWriter err = new StringWriter();
        CommandLine cl = TargetDaemon.commandLine(new TargetDaemon());
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(err, true));
        assertEquals(2, cl.execute("--namespace", "size=1M", "--listen", "tcp://127.0.0.1:0", "--io-engine", "kqueue"));
        assertTrue(
                err.toString().contains("--io-engine must be one of auto, epoll, io_uring, nio, not 'kqueue'"),
                err.toString());
    }

    @Test
    void configFileKeysAndFlagOverride(@TempDir Path dir) throws Exception {
        String json = """
                { "listeners": [ { "listen": "tcp://127.0.0.1:0", "ioEngine": "epoll", "busyPoll": true },
                                 { "listen": "tcp://127.0.0.1:0" } ],
                  "subsystems": [ { "nqn": "nqn.2024-01.io.nvmeof:x", "namespaces": [ { "size": "1M" } ] } ] }
                """;
        TargetConfig cfg = ConfigFile.parse(json);
        assertEquals(new IoMode("epoll", true), cfg.listeners().get(0).ioMode());
        assertEquals(IoMode.DEFAULT, cfg.listeners().get(1).ioMode());
        Path file = dir.resolve("t.json");
        Files.writeString(file, json);
        TargetConfig overridden = flags("--config", file.toString(), "--io-engine", "nio");
        assertEquals(new IoMode("nio", true), overridden.listeners().get(0).ioMode());
        assertEquals(new IoMode("nio", false), overridden.listeners().get(1).ioMode());
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> ConfigFile.parse(json.replace("\"epoll\"", "\"kqueue\"")));
        assertTrue(e.getMessage().contains("listeners[0]: ioEngine must be one of"), e.getMessage());
    }
}

package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.namespace.RamNamespace;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --namespace ...,prealloc} and {@code "preallocate"} in the config file; too small a budget is exit code 2. */
class PreallocateNamespaceFlagTest {
    @TempDir
    Path dir;

    private static TargetConfig flags(String... args) {
        TargetDaemon d = new TargetDaemon();
        new CommandLine(d).parseArgs(args);
        return d.buildConfig();
    }

    private static NamespaceConfig firstNamespace(TargetConfig cfg) {
        return cfg.subsystems().get(0).namespaces().get(0);
    }

    @Test
    void theFlagAndTheConfigFileSetIt() throws Exception {
        assertTrue(firstNamespace(flags("--namespace", "size=8M,prealloc")).preallocate());
        assertTrue(
                firstNamespace(flags("--namespace", "size=8M,preallocate=on")).preallocate());
        assertFalse(firstNamespace(flags("--namespace", "size=8M,prealloc=off")).preallocate());
        assertFalse(firstNamespace(flags("--namespace", "size=8M")).preallocate(), "lazy stays the default");

        Path json = dir.resolve("t.json");
        Files.writeString(
                json,
                "{\"listeners\":[{\"listen\":\"tcp://127.0.0.1:4420\"}],\"subsystems\":[{\"nqn\":\"nqn.2024-01.io.nvmeof:p\","
                        + "\"allowAnyHost\":true,\"namespaces\":[{\"size\":\"8M\",\"preallocate\":true}]}]}");
        NamespaceConfig nc = firstNamespace(ConfigFile.load(json));
        assertTrue(nc.preallocate());
        assertEquals(nc, nc.withNsid(nc.nsid()).withAnaGroup(nc.anaGroup()), "copies keep it");
    }

    @Test
    void wrongUsesAreRefusedWithTheReason() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> flags("--namespace", "size=8M,prealloc=maybe"));
        assertTrue(e.getMessage().contains("'prealloc' is on or off"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class,
                () -> flags("--namespace", "size=8M,prealloc,file=" + dir.resolve("a.img")));
        assertTrue(e.getMessage().contains("preallocate is for RAM namespaces"), e.getMessage());
    }

    @Test
    void theTargetHoldsAllTheMemoryFromTheStart() {
        try (NvmeTarget target =
                NvmeTarget.create(flags("--namespace", "size=8M,prealloc", "--namespace", "size=8M"))) {
            var s = target.subsystems().get(0);
            RamNamespace pre = s.namespace(1);
            RamNamespace lazy = s.namespace(2);
            assertTrue(pre.preallocated());
            assertEquals(8L << 20, pre.allocatedBytes());
            assertEquals(0, lazy.allocatedBytes());
        }
    }

    @Test
    void aBudgetTooSmallStopsTheDaemonWithExitCodeTwo() {
        StringWriter err = new StringWriter();
        CommandLine cl = TargetDaemon.commandLine(new TargetDaemon());
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(err, true));
        int code =
                cl.execute("--listen", "tcp://127.0.0.1:0", "--memory-budget", "4M", "--namespace", "size=8M,prealloc");
        assertEquals(2, code, err.toString());
        assertTrue(
                err.toString().contains("cannot preallocate namespace 1: it needs 8388608 bytes and the memory budget"),
                err.toString());
    }
}

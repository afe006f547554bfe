package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.TargetConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --namespace ...,file=PATH} and {@code "file"} in the config file; a size mismatch is exit code 2. */
class FileNamespaceFlagTest {
    @TempDir
    Path dir;

    @Test
    void flagAndConfigNameTheFile() throws Exception {
        TargetDaemon d = new TargetDaemon();
        new CommandLine(d).parseArgs("--namespace", "size=1G,file=" + dir.resolve("a.img"), "--namespace", "size=1G");
        TargetConfig cfg = d.buildConfig();
        assertEquals(
                dir.resolve("a.img"),
                cfg.subsystems().get(0).namespaces().get(0).file());
        assertNull(cfg.subsystems().get(0).namespaces().get(1).file(), "RAM stays the default");

        Path json = dir.resolve("t.json");
        Files.writeString(
                json,
                "{\"listeners\":[{\"listen\":\"tcp://127.0.0.1:4420\"}],\"subsystems\":[{\"nqn\":\"nqn.2024-01.io.nvmeof:f\",\"allowAnyHost\":true,"
                        + "\"namespaces\":[{\"size\":\"1G\",\"file\":\"" + dir.resolve("b.img") + "\"}]}]}");
        NamespaceConfig nc =
                ConfigFile.load(json).subsystems().get(0).namespaces().get(0);
        assertEquals(dir.resolve("b.img"), nc.file());
        assertEquals(nc, nc.withNsid(nc.nsid()), "copies keep the file");
    }

    @Test
    void aFileOfAnotherSizeStopsTheDaemonWithExitCodeTwo() throws Exception {
        Path file = dir.resolve("c.img");
        Files.write(file, new byte[8192]);
        StringWriter err = new StringWriter();
        CommandLine cl = TargetDaemon.commandLine(new TargetDaemon());
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute("--listen", "tcp://127.0.0.1:0", "--namespace", "size=1M,file=" + file);
        assertEquals(2, code, err.toString());
        assertTrue(err.toString().contains("has 8192 bytes"), err.toString());
        assertEquals(8192, Files.size(file), "the file is left as it was");
    }
}

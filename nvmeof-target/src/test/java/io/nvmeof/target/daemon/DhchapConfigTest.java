package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.auth.DhGroup;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.target.config.HostAuth;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DH-HMAC-CHAP settings in the JSON config file and in {@code --dhchap-host}. */
class DhchapConfigTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:12345678-1234-1234-1234-123456789abc";

    @TempDir
    Path dir;

    private String secret(DhchapHash h) {
        byte[] raw = new byte[h == null ? 48 : h.length()];
        new java.security.SecureRandom().nextBytes(raw);
        return DhchapSecret.of(raw, h).encode();
    }

    private Path file(String name, String content, String perms) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(perms));
        return f;
    }

    @Test
    void configFileWithKeyFilesAndRestrictions() throws Exception {
        Path k = file("host.key", secret(DhchapHash.SHA_384), "rw-------");
        String ctrl = secret(null);
        TargetConfig c = ConfigFile.parse("{\"listeners\":[{\"listen\":\"tcp://127.0.0.1:0\"}],"
                + "\"subsystems\":[{\"nqn\":\"nqn.2024-01.io.nvmeof:a\",\"namespaces\":[{\"size\":\"1M\"}],"
                + "\"dhchap\":[{\"host\":\"" + HOST + "\",\"keyFile\":\"" + k + "\",\"ctrlKey\":\"" + ctrl + "\","
                + "\"hashes\":[\"sha512\",\"hmac(sha256)\"],\"dhGroups\":[\"ffdhe3072\",\"null\"]}]}]}");
        SubsystemConfig s = c.subsystems().get(0);
        assertFalse(s.allowAnyHost(), "a subsystem with DH-HMAC-CHAP hosts is not open to any host");
        HostAuth a = s.hostAuth().get(0);
        assertEquals(HOST, a.hostNqn());
        assertEquals(DhchapHash.SHA_384, a.key().hash());
        assertNotNull(a.ctrlKey());
        assertEquals(List.of(DhchapHash.SHA_512, DhchapHash.SHA_256), a.hashes());
        assertEquals(List.of(DhGroup.FFDHE3072, DhGroup.NULL), a.groups());
    }

    @Test
    void configFileErrorsNeverShowTheKey() throws Exception {
        String s = secret(DhchapHash.SHA_256);
        // One base64 character changed (to another one: the random key may have an 'A' there already), so the CRC
        // fails.
        String broken = s.substring(0, 20) + (s.charAt(20) == 'A' ? "B" : "A") + s.substring(21);
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> ConfigFile.parse("{\"listeners\":[{\"listen\":\"tcp://127.0.0.1:0\"}],"
                        + "\"subsystems\":[{\"nqn\":\"nqn.2024-01.io.nvmeof:a\",\"namespaces\":[{\"size\":\"1M\"}],"
                        + "\"dhchap\":[{\"host\":\"" + HOST + "\",\"key\":\"" + broken + "\"}]}]}"));
        assertTrue(e.getMessage().contains("subsystems[0].dhchap[0]"), e.getMessage());
        assertFalse(e.getMessage().contains(broken.substring(10, 40)), e.getMessage());
        Path open = file("open.key", s, "rw-r--r--");
        e = assertThrows(
                IllegalArgumentException.class,
                () -> ConfigFile.parse("{\"listeners\":[{\"listen\":\"tcp://127.0.0.1:0\"}],"
                        + "\"subsystems\":[{\"nqn\":\"nqn.2024-01.io.nvmeof:a\",\"namespaces\":[{\"size\":\"1M\"}],"
                        + "\"dhchap\":[{\"host\":\"" + HOST + "\",\"keyFile\":\"" + open + "\"}]}]}"));
        assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () -> ConfigFile.parse("{\"listeners\":[{\"listen\":\"tcp://127.0.0.1:0\"}],"
                        + "\"subsystems\":[{\"nqn\":\"nqn.2024-01.io.nvmeof:a\",\"namespaces\":[{\"size\":\"1M\"}],"
                        + "\"dhchap\":[{\"host\":\"" + HOST + "\",\"key\":\"" + s + "\",\"hashes\":[\"md5\"]}]}]}"));
    }

    @Test
    void daemonFlagMakesAClosedSubsystem() throws Exception {
        Path k = file("flag.key", secret(DhchapHash.SHA_256), "rw-------");
        TargetDaemon d = new TargetDaemon();
        new picocli.CommandLine(d)
                .parseArgs(
                        "--listen",
                        "tcp://127.0.0.1:0",
                        "--namespace",
                        "size=1M",
                        "--dhchap-host",
                        "host=" + HOST + ",key-file=" + k + ",dhgroups=ffdhe2048");
        TargetConfig cfg = d.buildConfig();
        SubsystemConfig s = cfg.subsystems().get(0);
        assertFalse(s.allowAnyHost());
        assertEquals(HOST, s.hostAuth().get(0).hostNqn());
        assertEquals(List.of(DhGroup.FFDHE2048), s.hostAuth().get(0).groups());
    }

    @Test
    void dhchapHostFlag() throws Exception {
        Path k = file("k", secret(DhchapHash.SHA_256), "rw-------");
        Path ck = file("ck", secret(null), "r--------");
        HostAuth a = DhchapHostSpec.parse(
                "host=" + HOST + ",key-file=" + k + ",ctrl-key-file=" + ck + ",hashes=sha256,dhgroups=ffdhe2048:null");
        assertEquals(List.of(DhchapHash.SHA_256), a.hashes());
        assertEquals(List.of(DhGroup.FFDHE2048, DhGroup.NULL), a.groups());
        String inline = secret(DhchapHash.SHA_256);
        assertEquals(
                DhchapHash.SHA_256,
                DhchapHostSpec.parse("host=" + HOST + ",key=" + inline).key().hash());
        assertThrows(IllegalArgumentException.class, () -> DhchapHostSpec.parse("host=" + HOST));
        assertThrows(IllegalArgumentException.class, () -> DhchapHostSpec.parse("key-file=" + k));
        assertThrows(
                IllegalArgumentException.class, () -> DhchapHostSpec.parse("host=" + HOST + ",key-file=" + k + ",x=1"));
    }
}

package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.core.tls.PskHash;
import io.nvmeof.core.tls.SecureChannel;
import io.nvmeof.core.tls.TlsPsk;
import io.nvmeof.target.TlsKeys;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.config.TlsKeyConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** TLS on listeners and the hosts' TLS keys: the listen URI, the flags, the config file, and the key choice. */
class TlsConfigTest {
    static final String H = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-4333-8444-555555555555";
    static final String S = "nqn.2024-01.io.nvmeof:disk1";
    static final ConfiguredPsk K256 = ConfiguredPsk.generate(PskHash.SHA256, new SecureRandom());
    static final ConfiguredPsk K384 = ConfiguredPsk.generate(PskHash.SHA384, new SecureRandom());

    private static TargetConfig flags(String... args) {
        TargetDaemon d = new TargetDaemon();
        new CommandLine(d).parseArgs(args);
        return d.buildConfig();
    }

    @Test
    void listenUriTakesTls() {
        assertEquals(
                SecureChannel.REQUIRED,
                ListenerConfig.parse("tcp://0.0.0.0:4420?tls=required", 128, 16384)
                        .secureChannel());
        ListenerConfig allowed = ListenerConfig.parse("tcp://[::1]:4421?tls=allowed", 128, 16384);
        assertEquals(SecureChannel.ALLOWED, allowed.secureChannel());
        assertEquals("::1", allowed.address());
        assertEquals(4421, allowed.port());
        assertEquals(
                SecureChannel.NONE,
                ListenerConfig.parse("tcp://0.0.0.0", 128, 16384).secureChannel());
        assertThrows(IllegalArgumentException.class, () -> ListenerConfig.parse("tcp://0.0.0.0?tls=maybe", 128, 0));
        assertThrows(IllegalArgumentException.class, () -> ListenerConfig.parse("tcp://0.0.0.0?x=1", 128, 0));
        assertThrows(IllegalArgumentException.class, () -> ListenerConfig.parse("rdma://0.0.0.0?tls=required", 128, 0));
    }

    @Test
    void flagsSetTlsAndKeys(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("k");
        Files.writeString(file, K384.interchange() + "\n");
        TargetConfig c = flags(
                "--listen", "tcp://127.0.0.1:4420",
                "--listen", "tcp://127.0.0.1:4421?tls=allowed",
                "--tls", "required",
                "--namespace", "size=1M",
                "--tls-key", "host=" + H + ",psk=" + K256.interchange(),
                "--tls-key", "host=" + H + ",psk-file=" + file + ",subsystem=" + S + ",derivation=compat");
        assertEquals(SecureChannel.REQUIRED, c.listeners().get(0).secureChannel());
        assertEquals(SecureChannel.ALLOWED, c.listeners().get(1).secureChannel());
        assertEquals(2, c.tlsKeys().size());
        assertEquals(K256, c.tlsKeys().get(0).psk());
        assertNull(c.tlsKeys().get(0).subsysNqn());
        assertEquals(K384, c.tlsKeys().get(1).psk());
        assertEquals(PskDerivation.LIBNVME_COMPAT, c.tlsKeys().get(1).derivation());
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> flags(
                        "--namespace",
                        "size=1M",
                        "--tls-key",
                        "host=" + H + ",psk=" + K256.interchange().replace(":01:", ":02:")));
        assertFalse(e.getMessage().contains(K256.interchange().substring(16, 40)), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> flags("--namespace", "size=1M", "--tls-key", "host=" + H));
    }

    @Test
    void configFileTakesTlsAndKeys() {
        TargetConfig c = ConfigFile.parse("{\"listeners\":[{\"listen\":\"tcp://127.0.0.1:4420\",\"tls\":\"required\"}],"
                + "\"subsystems\":[{\"nqn\":\"" + S + "\",\"namespaces\":[{\"size\":\"1M\"}]}],"
                + "\"tlsKeys\":[{\"host\":\"" + H + "\",\"psk\":\"" + K256.interchange()
                + "\",\"derivation\":\"compat\"}]}");
        assertEquals(SecureChannel.REQUIRED, c.listeners().get(0).secureChannel());
        assertEquals(K256, c.tlsKeys().get(0).psk());
        assertThrows(
                IllegalArgumentException.class,
                () -> ConfigFile.parse("{\"listeners\":[{\"listen\":\"tcp://127.0.0.1:4420\"}],"
                        + "\"tlsKeys\":[{\"host\":\"" + H + "\"}]}"));
    }

    @Test
    void theKeyIsChosenByTheOfferedIdentity() {
        TlsKeys keys = new TlsKeys();
        keys.put(new TlsKeyConfig(H, null, K256, PskDerivation.LIBNVME_COMPAT));
        keys.put(new TlsKeyConfig(H, S, K384, null));
        // the subsystem's own key wins; v0 uses the key's derivation
        TlsPsk forS = keys.resolve(
                K384.derive(H, S, 0, PskDerivation.RFC8446).identity().wire());
        assertNotNull(forS);
        assertEquals(PskHash.SHA384, forS.hash());
        assertTrue(java.util.Arrays.equals(
                K384.derive(H, S, 0, PskDerivation.RFC8446).key(), forS.key()));
        // another subsystem: the host's key for every subsystem, compat as configured
        String other = "nqn.2024-01.io.nvmeof:disk2";
        TlsPsk forOther = keys.resolve(
                K256.derive(H, other, 0, PskDerivation.RFC8446).identity().wire());
        assertTrue(java.util.Arrays.equals(
                K256.derive(H, other, 0, PskDerivation.LIBNVME_COMPAT).key(), forOther.key()));
        // v1: the digest picks the derivation, whatever the configured one
        TlsPsk v1 = keys.resolve(
                K256.derive(H, other, 1, PskDerivation.RFC8446).identity().wire());
        assertTrue(java.util.Arrays.equals(
                K256.derive(H, other, 1, PskDerivation.RFC8446).key(), v1.key()));
        // unknown host, wrong hash, wrong digest, generated, not an NVMe identity
        assertNull(keys.resolve(
                K256.derive(H + "x", S, 0, PskDerivation.RFC8446).identity().wire()));
        assertNull(
                keys.resolve(
                        K256.derive(H, S, 0, PskDerivation.RFC8446).identity().wire()),
                "S has a SHA-384 key");
        assertNull(keys.resolve(
                K384.derive(H, other, 1, PskDerivation.RFC8446).identity().wire()));
        assertNull(keys.resolve("NVMe0G01 " + H + " " + S));
        assertNull(keys.resolve("Client_identity"));
        assertTrue(keys.remove(H, S));
        assertNotNull(keys.resolve(
                K256.derive(H, S, 0, PskDerivation.RFC8446).identity().wire()));
    }
}

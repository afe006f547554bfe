package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.core.tls.PskHash;
import io.nvmeof.core.tls.SecureChannel;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.config.TlsKeyConfig;
import io.nvmeof.target.rpc.Management;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Our initiator against our target over NVMe/TCP with TLS 1.3 (PSKs): each cipher suite with and without digests,
 * several I/O queues, reads and writes from 4 KiB to 1 MiB verified byte for byte; a wrong key, a missing key and a
 * host without a key refused; the discovery log's TREQ and SECTYPE; the key never in a URI's text or an error.
 */
@Timeout(120)
class TlsTest {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:5f0d3a52-6f1e-4d1e-9c55-7a3b1c2e9d01";
    private static final String OTHER_HOST = "nqn.2014-08.org.nvmexpress:uuid:5f0d3a52-6f1e-4d1e-9c55-7a3b1c2e9d02";
    private static final String NQN = "nqn.2024-01.io.nvmeof:tls-disk";
    private static final SecureRandom RANDOM = new SecureRandom();

    private NvmeTarget target;

    @AfterEach
    void stop() {
        if (target != null) {
            target.close();
        }
    }

    private int start(SecureChannel sc, TlsKeyConfig... keys) throws Exception {
        ListenerConfig listener = ListenerConfig.parse("tcp://127.0.0.1:0?tls=" + sc.configName(), 128, 16384);
        SubsystemConfig subsystem =
                new SubsystemConfig(NQN, true, List.of(), List.of(NamespaceConfig.of(1, 64L << 20)), null, null);
        target =
                NvmeTarget.start(new TargetConfig(List.of(listener), List.of(subsystem), 256L << 20, 0, List.of(keys)));
        return target.boundAddresses().get(0).getPort();
    }

    private static String uri(int port, String options) {
        return "nvme+tcp://127.0.0.1:" + port + "/" + NQN + "?hostnqn=" + HOST + "&queues=2&" + options;
    }

    private static void verifyIo(Controller ctrl) throws NvmeException {
        Namespace ns = ctrl.namespace();
        Random random = new Random(12);
        long lba = 0;
        for (int bytes : new int[] {4096, 16384, 65536, 135168, 1 << 20}) {
            int blocks = bytes / ns.blockSize();
            byte[] data = new byte[bytes];
            random.nextBytes(data);
            ByteBuffer src = ByteBuffer.allocateDirect(bytes).put(data).flip();
            ns.write(lba, blocks, src);
            ByteBuffer dst = ByteBuffer.allocateDirect(bytes);
            ns.read(lba, blocks, dst);
            byte[] back = new byte[bytes];
            dst.get(0, back);
            assertArrayEquals(data, back, bytes + " bytes read back over TLS");
            lba += blocks;
        }
    }

    @ParameterizedTest(name = "{0} digests={1} identity v{2}")
    @CsvSource({"SHA256,false,0", "SHA256,true,1", "SHA384,false,1", "SHA384,true,0"})
    void ioOverTlsWithEachCipherSuite(PskHash hash, boolean digests, int identity) throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(hash, RANDOM);
        int port = start(SecureChannel.REQUIRED, new TlsKeyConfig(HOST, null, key, null));
        String options =
                "psk=" + key.interchange() + "&psk_identity=" + identity + (digests ? "&digest=header,data" : "");
        try (Controller ctrl = Nvme.connect(uri(port, options))) {
            verifyIo(ctrl);
        }
    }

    @Test
    void keysFromNvmeCliBefore216UseTheCompatDerivation(@TempDir Path dir) throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        Path file = dir.resolve("psk");
        Files.writeString(file, key.interchange() + "\n");
        int port = start(SecureChannel.REQUIRED, new TlsKeyConfig(HOST, NQN, key, PskDerivation.LIBNVME_COMPAT));
        try (Controller ctrl = Nvme.connect(uri(port, "psk_file=" + file + "&psk_derivation=compat"))) {
            verifyIo(ctrl);
        }
        // v1: the digest tells the target which derivation the host used, whatever the key's setting
        try (Controller ctrl = Nvme.connect(uri(port, "psk_file=" + file + "&psk_identity=1"))) {
            verifyIo(ctrl);
        }
        // v0 with the other derivation: another TLS PSK, refused
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, "psk_file=" + file)).close());
    }

    @Test
    void wrongOrMissingKeysAreRefused() throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        ConfiguredPsk wrong = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        int port = start(SecureChannel.REQUIRED, new TlsKeyConfig(HOST, null, key, null));
        NvmeException e = assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, "psk=" + wrong.interchange())).close());
        assertTrue(e.getMessage().contains("TLS"), e.getMessage());
        assertFalse(e.getMessage().contains(wrong.interchange()), e.getMessage());
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, "digest=none")).close());
        String otherHost =
                "nvme+tcp://127.0.0.1:" + port + "/" + NQN + "?hostnqn=" + OTHER_HOST + "&psk=" + key.interchange();
        assertThrows(NvmeException.class, () -> Nvme.connect(otherHost).close());
        // a key added at run time works at once
        target.tlsKeys().put(new TlsKeyConfig(OTHER_HOST, NQN, wrong, null));
        try (Controller ctrl = Nvme.connect("nvme+tcp://127.0.0.1:" + port + "/" + NQN + "?hostnqn=" + OTHER_HOST
                + "&psk=" + wrong.interchange())) {
            verifyIo(ctrl);
        }
    }

    @Test
    void discoveryOverTlsListsTheSecureChannel() throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA384, RANDOM);
        int port = start(SecureChannel.REQUIRED, new TlsKeyConfig(HOST, null, key, null));
        DiscoveryLog log =
                Nvme.discover("nvme+tcp://127.0.0.1:" + port + "?hostnqn=" + HOST + "&psk=" + key.interchange());
        DiscoveryEntry e = log.nvmSubsystems().get(0);
        assertEquals(1, e.treq() & 0x3, "TREQ secure channel required");
        assertEquals(SecureChannel.SECTYPE_TLS13, e.sectype(), "SECTYPE TLS 1.3");
    }

    @Test
    void allowedListenerTakesBothKindsOfHost() throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        int port = start(SecureChannel.ALLOWED, new TlsKeyConfig(HOST, null, key, null));
        try (Controller tls = Nvme.connect(uri(port, "psk=" + key.interchange()));
                Controller plain = Nvme.connect(uri(port, "digest=header,data"))) {
            verifyIo(tls);
            verifyIo(plain);
        }
    }

    @Test
    void tlsOverTheManagementRpcAsSpdkDoesIt(@TempDir Path dir) throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA384, RANDOM);
        Path file = dir.resolve("key0");
        Files.writeString(file, key.interchange());
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        target = NvmeTarget.start(new TargetConfig(
                List.of(),
                List.of(new SubsystemConfig(
                        NQN, false, List.of(), List.of(NamespaceConfig.of(1, 16L << 20)), null, null)),
                64L << 20,
                0));
        Management m = new Management(target);
        ObjectMapper json = new ObjectMapper();
        m.call("keyring_file_add_key", json.readTree("{\"name\":\"key0\",\"path\":\"" + file + "\"}"));
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        m.call(
                "nvmf_subsystem_add_listener",
                json.readTree("{\"nqn\":\"" + NQN + "\",\"secure_channel\":true,\"listen_address\":{\"trtype\":\"tcp\","
                        + "\"adrfam\":\"ipv4\",\"traddr\":\"127.0.0.1\",\"trsvcid\":\"" + port + "\"}}"));
        m.call(
                "nvmf_subsystem_add_host",
                json.readTree("{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\",\"psk\":\"key0\"}"));
        assertFalse(m.call("keyring_get_keys", null).toString().contains(key.interchange()));
        try (Controller ctrl = Nvme.connect(uri(port, "psk=" + key.interchange()))) {
            verifyIo(ctrl);
        }
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, "digest=none")).close());
        m.call("nvmf_subsystem_remove_host", json.readTree("{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\"}"));
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, "psk=" + key.interchange())).close());
    }

    @Test
    void theKeyStaysOutOfUriTextAndErrors() {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        String k = key.interchange();
        NvmeUri u = NvmeUri.parse("nvme+tcp://127.0.0.1:4420/" + NQN + "?psk=" + k);
        assertTrue(u.tls().enabled());
        assertFalse(u.toString().contains(k), u.toString());
        assertTrue(u.toString().contains("tls=1"), u.toString());
        // One base64 character changed (to another one: the random key may have an 'A' there already), so the CRC
        // fails.
        String broken = k.substring(0, 30) + (k.charAt(30) == 'A' ? "B" : "A") + k.substring(31);
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> NvmeUri.parse("nvme+tcp://127.0.0.1:4420/" + NQN + "?psk=" + broken));
        assertFalse(e.getMessage().contains(broken.substring(16, 40)), e.getMessage());
        IllegalArgumentException e2 = assertThrows(
                IllegalArgumentException.class,
                () -> NvmeUri.parse("nvme+tcp://127.0.0.1:4420/" + NQN + "?psk=" + k + "&bogus=1"));
        assertFalse(e2.getMessage().contains(k.substring(16, 40)), e2.getMessage());
        assertThrows(
                IllegalArgumentException.class, () -> NvmeUri.parse("nvme+tcp://127.0.0.1:4420/" + NQN + "?tls=1"));
    }
}

package io.nvmeof.initiator;

import static io.nvmeof.initiator.Await.waitFor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskHash;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.rpc.Management;
import io.nvmeof.testsupport.TcpProxy;
import java.net.InetSocketAddress;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS and DH-HMAC-CHAP together (docs/security.md), our initiator against our target, set up over the management RPC
 * as SPDK is: one keyring holding the host's TLS PSK, its DH-HMAC-CHAP key and the controller key; a TLS-required
 * listener; a host given {@code psk}, {@code dhchap_key} and {@code dhchap_ctrlr_key} together. I/O is verified byte
 * for byte; either key missing or wrong is refused; save_config names the keys and never holds one, and load_config brings both back; a connection cut
 * mid-I/O (through a TCP proxy, which forwards the TLS records as bytes) reconnects with a new TLS handshake and a new
 * authentication, and every acknowledged write reads back.
 */
@Timeout(180)
class TlsAuthTest {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f";
    private static final String NQN = "nqn.2024-01.io.nvmeof:tls-auth-disk";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private NvmeTarget target;
    private Management rpc;
    private int port;
    private final ConfiguredPsk psk = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
    private final DhchapSecret hostKey = secret(DhchapHash.SHA_256);
    private final DhchapSecret ctrlKey = secret(null);

    private static DhchapSecret secret(DhchapHash transform) {
        byte[] raw = new byte[transform == null ? 32 : transform.length()];
        RANDOM.nextBytes(raw);
        return DhchapSecret.of(raw, transform);
    }

    private Path keyFile(String name, String content) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, content + "\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return f;
    }

    private JsonNode call(String method, String params) throws Exception {
        return rpc.call(method, params == null ? null : JSON.readTree(params));
    }

    @BeforeEach
    void start() throws Exception {
        target = NvmeTarget.start(new TargetConfig(
                List.of(),
                List.of(new SubsystemConfig(
                        NQN, false, List.of(), List.of(NamespaceConfig.of(1, 64L << 20)), null, null)),
                128L << 20,
                0));
        rpc = new Management(target);
        call("keyring_file_add_key", "{\"name\":\"psk0\",\"path\":\"" + keyFile("psk0", psk.interchange()) + "\"}");
        call("keyring_file_add_key", "{\"name\":\"key0\",\"path\":\"" + keyFile("key0", hostKey.encode()) + "\"}");
        call("keyring_file_add_key", "{\"name\":\"ckey0\",\"path\":\"" + keyFile("ckey0", ctrlKey.encode()) + "\"}");
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        call(
                "nvmf_subsystem_add_listener",
                "{\"nqn\":\"" + NQN + "\",\"secure_channel\":true,\"listen_address\":{\"trtype\":\"tcp\","
                        + "\"adrfam\":\"ipv4\",\"traddr\":\"127.0.0.1\",\"trsvcid\":\"" + port + "\"}}");
        call(
                "nvmf_subsystem_add_host",
                "{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\",\"psk\":\"psk0\",\"dhchap_key\":\"key0\","
                        + "\"dhchap_ctrlr_key\":\"ckey0\"}");
    }

    @AfterEach
    void stop() {
        if (target != null) {
            target.close();
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private String uri(int p, String pskText, DhchapSecret host, DhchapSecret ctrl, String more) {
        StringBuilder b = new StringBuilder("nvme+tcp://127.0.0.1:" + p + "/" + NQN + "?hostnqn=" + HOST + "&queues=2");
        if (pskText != null) {
            b.append("&psk=").append(enc(pskText));
        }
        if (host != null) {
            b.append("&dhchap_secret=").append(enc(host.encode()));
        }
        if (ctrl != null) {
            b.append("&dhchap_ctrl_secret=").append(enc(ctrl.encode()));
        }
        return b.append(more).toString();
    }

    private static void verifyIo(Namespace ns) throws NvmeException {
        Random random = new Random(7);
        long lba = 0;
        for (int bytes : new int[] {4096, 65536, 1 << 20}) {
            int blocks = bytes / ns.blockSize();
            byte[] data = new byte[bytes];
            random.nextBytes(data);
            ns.write(lba, blocks, ByteBuffer.allocateDirect(bytes).put(data).flip());
            ByteBuffer dst = ByteBuffer.allocateDirect(bytes);
            ns.read(lba, blocks, dst);
            byte[] back = new byte[bytes];
            dst.get(0, back);
            assertArrayEquals(data, back, bytes + " bytes read back over TLS with DH-HMAC-CHAP");
            lba += blocks;
        }
    }

    @Test
    void tlsAndBidirectionalDhchapTogetherFromOneKeyring() throws Exception {
        try (Controller c = Nvme.connect(uri(port, psk.interchange(), hostKey, ctrlKey, "&digest=header,data"))) {
            verifyIo(c.namespace());
        }
        // each key is needed: no DH-HMAC-CHAP secret, a wrong one, no PSK, a wrong PSK
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, psk.interchange(), null, null, "")).close());
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, psk.interchange(), secret(DhchapHash.SHA_256), null, ""))
                        .close());
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, null, hostKey, ctrlKey, "")).close());
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(
                                port,
                                ConfiguredPsk.generate(PskHash.SHA256, RANDOM).interchange(),
                                hostKey,
                                ctrlKey,
                                ""))
                        .close());

        // the keyring lists names and paths, save_config names the keys: no secret in either
        String keys = call("keyring_get_keys", null).toString();
        String saved = call("save_config", null).toString();
        for (String text : List.of(keys, saved)) {
            assertFalse(text.contains(psk.interchange()), text);
            assertFalse(text.contains(hostKey.encode()), text);
            assertFalse(text.contains(ctrlKey.encode()), text);
        }
        assertTrue(saved.contains("\"psk\":\"psk0\""), saved);
        assertTrue(saved.contains("\"dhchap_key\":\"key0\""), saved);
        assertTrue(saved.contains("\"dhchap_ctrlr_key\":\"ckey0\""), saved);
        assertTrue(saved.contains("\"secure_channel\":true"), saved);

        // load_config into a new target: the same TLS-required listener and the same host keys, from the keyring
        JsonNode config = call("save_config", null);
        target.close();
        target = NvmeTarget.start(new TargetConfig(List.of(), List.of(), 128L << 20, 0));
        rpc = new Management(target);
        rpc.call("load_config", config);
        try (Controller c = Nvme.connect(uri(port, psk.interchange(), hostKey, ctrlKey, ""))) {
            verifyIo(c.namespace());
        }
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, psk.interchange(), null, null, "")).close());
        assertThrows(
                NvmeException.class,
                () -> Nvme.connect(uri(port, null, hostKey, ctrlKey, "")).close());
    }

    @Test
    void aDhchapKeyIsNotAPskAndAPskIsNotADhchapKey() throws Exception {
        String host2 = HOST.substring(0, HOST.length() - 1) + "0";
        assertThrows(
                Exception.class,
                () -> call(
                        "nvmf_subsystem_add_host",
                        "{\"nqn\":\"" + NQN + "\",\"host\":\"" + host2 + "\",\"psk\":\"key0\"}"));
        assertThrows(
                Exception.class,
                () -> call(
                        "nvmf_subsystem_add_host",
                        "{\"nqn\":\"" + NQN + "\",\"host\":\"" + host2 + "\",\"dhchap_key\":\"psk0\"}"));
    }

    @Test
    void aConnectionCutMidIoReconnectsWithANewHandshakeAndAuthentication() throws Exception {
        StateEventLog events = new StateEventLog();
        try (TcpProxy proxy = TcpProxy.start(new InetSocketAddress("127.0.0.1", port));
                Controller c = Nvme.connect(
                        NvmeUri.parse(uri(
                                proxy.port(),
                                psk.interchange(),
                                hostKey,
                                ctrlKey,
                                "&depth=32&reconnect_delay=100ms&ctrl_loss_tmo=30")),
                        ConnectOptions.builder()
                                .connectTimeout(Duration.ofSeconds(5))
                                .stateListener(events)
                                .build())) {
            int connectionsBefore = proxy.acceptedConnections();
            VerifiedWorkload w = new VerifiedWorkload(c.namespace(), 4, 1024).start();
            waitFor("I/O flowing", 10_000, () -> w.ops() > 50);
            proxy.cutConnections();
            waitFor("LIVE again", 30_000, () -> events.reconnects() > 0);
            long opsAfter = w.ops();
            waitFor("I/O flowing again", 20_000, () -> w.ops() > opsAfter + 50);
            assertTrue(w.stop(30_000), "a workload call hung");
            assertEquals(List.of(), w.failures(), "every command was retried");
            assertEquals(List.of(), w.verifyAll(), "every acknowledged write reads back");
            assertTrue(c.reconnectCount() >= 1);
            // the admin queue and both I/O queues came back through the proxy, each with a new TLS handshake
            assertTrue(proxy.acceptedConnections() >= connectionsBefore + 3, "" + proxy.acceptedConnections());
            assertSame(ControllerState.LIVE, c.state());
            verifyIo(c.namespace());
        }
    }
}

package io.nvmeof.target.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.TargetConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SPDK's keyring and DH-HMAC-CHAP host keys over JSON-RPC: add, set, remove, save_config/load_config. */
class DhchapRpcTest {
    static final String NQN = "nqn.2016-06.io.spdk:cnode1";
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:12345678-1234-1234-1234-123456789abc";

    @TempDir
    Path dir;

    private final NvmeTarget target = NvmeTarget.create(new TargetConfig(List.of(), List.of(), 1L << 30, 0));
    private final Management m = new Management(target);

    @AfterEach
    void close() {
        target.close();
    }

    private JsonNode call(String method, String json) throws Exception {
        return m.call(method, json == null ? null : Management.JSON.readTree(json));
    }

    private Path keyFile(String name, String perms) throws Exception {
        Path f = dir.resolve(name);
        byte[] raw = new byte[32];
        new java.security.SecureRandom().nextBytes(raw);
        Files.writeString(f, DhchapSecret.of(raw, DhchapHash.SHA_256).encode() + "\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(perms));
        return f;
    }

    @Test
    void keyringAndHostKeysRoundTrip() throws Exception {
        Path k0 = keyFile("key0", "rw-------");
        Path k1 = keyFile("key1", "rw-------");
        call("nvmf_create_subsystem", "{\"nqn\":\"" + NQN + "\"}");
        call("keyring_file_add_key", "{\"name\":\"key0\",\"path\":\"" + k0 + "\"}");
        call("keyring_file_add_key", "{\"name\":\"key1\",\"path\":\"" + k1 + "\"}");
        JsonNode keys = call("keyring_get_keys", null);
        assertEquals(2, keys.size());
        assertFalse(keys.toString().contains("DHHC"), "no secret in keyring_get_keys");

        call("nvmf_subsystem_add_host", "{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\",\"dhchap_key\":\"key0\"}");
        assertNotNull(target.subsystem(NQN).hostAuth(HOST));
        assertNull(target.subsystem(NQN).hostAuth(HOST).ctrlKey());
        assertTrue(target.subsystem(NQN).allows(HOST));
        call(
                "nvmf_subsystem_set_keys",
                "{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST
                        + "\",\"dhchap_key\":\"key0\",\"dhchap_ctrlr_key\":\"key1\"}");
        assertNotNull(target.subsystem(NQN).hostAuth(HOST).ctrlKey());

        JsonNode host = call("nvmf_get_subsystems", null).get(1).get("hosts").get(0);
        assertEquals("key0", host.get("dhchap_key").asText());
        assertEquals("key1", host.get("dhchap_ctrlr_key").asText());

        JsonNode saved = call("save_config", null);
        String text = saved.toString();
        assertFalse(text.contains("DHHC"), "save_config holds names and paths, not secrets");
        assertTrue(text.contains("\"dhchap_ctrlr_key\":\"key1\""), text);
        assertTrue(text.contains("keyring_file_add_key"), text);

        // Reload into a fresh target.
        NvmeTarget t2 = NvmeTarget.create(new TargetConfig(List.of(), List.of(), 1L << 30, 0));
        try {
            Management m2 = new Management(t2);
            ObjectNode nvmfOnly = (ObjectNode) saved;
            m2.call("load_config", nvmfOnly);
            assertNotNull(t2.subsystem(NQN).hostAuth(HOST).ctrlKey());
        } finally {
            t2.close();
        }

        call("nvmf_subsystem_remove_host", "{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\"}");
        assertNull(target.subsystem(NQN).hostAuth(HOST));
        assertFalse(target.subsystem(NQN).allows(HOST));
    }

    @Test
    void refusesBadKeys() throws Exception {
        call("nvmf_create_subsystem", "{\"nqn\":\"" + NQN + "\"}");
        Path open = keyFile("open", "rw-r--r--");
        RpcException e = assertThrows(
                RpcException.class, () -> call("keyring_file_add_key", "{\"name\":\"k\",\"path\":\"" + open + "\"}"));
        assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
        Path bad = dir.resolve("bad");
        Files.writeString(bad, "DHHC-1:00:AAAA:");
        Files.setPosixFilePermissions(bad, PosixFilePermissions.fromString("rw-------"));
        e = assertThrows(
                RpcException.class, () -> call("keyring_file_add_key", "{\"name\":\"k\",\"path\":\"" + bad + "\"}"));
        assertTrue(e.getMessage().contains("bytes decoded"), e.getMessage());
        e = assertThrows(
                RpcException.class,
                () -> call(
                        "nvmf_subsystem_add_host",
                        "{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\",\"dhchap_key\":\"nope\"}"));
        assertTrue(e.getMessage().contains("no key 'nope'"), e.getMessage());
        assertFalse(target.subsystem(NQN).allows(HOST), "nothing changed");
    }

    @Test
    void oneKeyringHoldsBothKindsAndRefusesAFileOfNeither() throws Exception {
        Path dh = keyFile("dh", "rw-------");
        Path tls = dir.resolve("tls");
        String psk = io.nvmeof.core.tls.ConfiguredPsk.generate(
                        io.nvmeof.core.tls.PskHash.SHA256, new java.security.SecureRandom())
                .interchange();
        Files.writeString(tls, psk + "\n");
        Files.setPosixFilePermissions(tls, PosixFilePermissions.fromString("rw-------"));
        Path junk = dir.resolve("junk");
        Files.writeString(junk, "not-a-key-0123456789abcdef\n");
        Files.setPosixFilePermissions(junk, PosixFilePermissions.fromString("rw-------"));
        Path open = dir.resolve("open");
        Files.writeString(open, psk + "\n");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        call("nvmf_create_subsystem", "{\"nqn\":\"" + NQN + "\"}");
        call("keyring_file_add_key", "{\"name\":\"dh0\",\"path\":\"" + dh + "\"}");
        call("keyring_file_add_key", "{\"name\":\"psk0\",\"path\":\"" + tls + "\"}");
        RpcException e = assertThrows(
                RpcException.class, () -> call("keyring_file_add_key", "{\"name\":\"j\",\"path\":\"" + junk + "\"}"));
        assertFalse(e.getMessage().contains("0123456789abcdef"), e.getMessage());
        e = assertThrows(
                RpcException.class, () -> call("keyring_file_add_key", "{\"name\":\"o\",\"path\":\"" + open + "\"}"));
        assertTrue(e.getMessage().contains("readable by group or others"), e.getMessage());
        assertFalse(e.getMessage().contains(psk), e.getMessage());
        assertEquals(2, call("keyring_get_keys", null).size());
        // each name serves its own kind only, and the host gets both at once
        assertThrows(
                RpcException.class,
                () -> call(
                        "nvmf_subsystem_add_host",
                        "{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\",\"psk\":\"dh0\"}"));
        assertThrows(
                RpcException.class,
                () -> call(
                        "nvmf_subsystem_add_host",
                        "{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\",\"dhchap_key\":\"psk0\"}"));
        call(
                "nvmf_subsystem_add_host",
                "{\"nqn\":\"" + NQN + "\",\"host\":\"" + HOST + "\",\"psk\":\"psk0\",\"dhchap_key\":\"dh0\"}");
        assertNotNull(target.subsystem(NQN).hostAuth(HOST));
        String saved = call("save_config", null).toString();
        assertTrue(saved.contains("\"psk\":\"psk0\"") && saved.contains("\"dhchap_key\":\"dh0\""), saved);
        assertFalse(saved.contains(psk), saved);
    }
}

package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.target.config.TlsKeyConfig;
import io.nvmeof.target.daemon.DhchapSecrets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * SPDK's file keyring (docs/security.md), one for every kind of key as in SPDK: {@code keyring_file_add_key} names a
 * file that holds a secret (mode 0600, as SPDK requires), {@code keyring_file_remove_key} forgets it,
 * {@code keyring_get_keys} lists names and paths (never the secrets). A file holds either a DH-HMAC-CHAP secret
 * ({@code DHHC-1:...}, {@code nvme gen-dhchap-key}) or a TLS PSK in the interchange format ({@code NVMeTLSkey-1:...},
 * {@code nvme gen-tls-key}); hosts refer to the names with {@code nvmf_subsystem_add_host --dhchap_key NAME} and
 * {@code --psk NAME}. The file is read when the key is added and again whenever a host is given it.
 */
final class KeyringMethods {
    /** A named key: its file. */
    record Key(String name, Path path) {}

    private final Map<String, Key> keys = new LinkedHashMap<>();

    void register(Map<String, Management.Method> methods) {
        methods.put("keyring_file_add_key", this::add);
        methods.put("keyring_file_remove_key", this::remove);
        methods.put("keyring_get_keys", this::list);
    }

    /** The keys, in the order they were added. */
    Iterable<Key> keys() {
        return keys.values();
    }

    /** The DH-HMAC-CHAP secret of key {@code name}, read from its file now. */
    DhchapSecret dhchapSecret(String method, String name) throws RpcException {
        Key k = require(method, name);
        try {
            return DhchapSecrets.readFile(k.path(), "key '" + name + "'");
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidParams(method + ": " + e.getMessage());
        }
    }

    /** The TLS PSK of key {@code name}, read from its file now. */
    ConfiguredPsk tlsPsk(String method, String name) throws RpcException {
        return readPsk(method, require(method, name).path());
    }

    /** Whether {@code name} is a key of this keyring. */
    boolean contains(String name) {
        return keys.containsKey(name);
    }

    /** The TLS PSK in {@code file} (mode 0600), for SPDK's older {@code --psk PATH}. */
    static ConfiguredPsk readPsk(String method, Path file) throws RpcException {
        checkMode(method, file);
        try {
            return TlsKeyConfig.readKeyFile(file);
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidParams(method + ": " + e.getMessage());
        }
    }

    private Key require(String method, String name) throws RpcException {
        Key k = keys.get(name);
        if (k == null) {
            throw RpcException.invalidParams(method + ": no key '" + name + "' (add it with keyring_file_add_key)");
        }
        return k;
    }

    private JsonNode add(JsonNode params) throws RpcException {
        Params p = Params.of("keyring_file_add_key", params, Set.of("name", "path"));
        String name = p.requireString("name");
        Path path = Path.of(p.requireString("path"));
        if (keys.containsKey(name)) {
            throw RpcException.invalidParams(p.method() + ": key '" + name + "' already exists");
        }
        if (!path.isAbsolute()) {
            throw RpcException.invalidParams(p.method() + ": path must be absolute (SPDK's rule): " + path);
        }
        // checked now: mode 0600 and a secret of one of the two kinds (the check reads the prefix, never shows it)
        if (isTlsKey(p.method(), path)) {
            readPsk(p.method(), path);
        } else {
            try {
                DhchapSecrets.readFile(path, "key '" + name + "'");
            } catch (IllegalArgumentException e) {
                throw RpcException.invalidParams(p.method() + ": " + e.getMessage()
                        + " (a key file holds a DHHC-1 secret or an NVMeTLSkey-1 PSK)");
            }
        }
        keys.put(name, new Key(name, path));
        return BooleanNode.TRUE;
    }

    private static boolean isTlsKey(String method, Path path) throws RpcException {
        try {
            return Files.readString(path).strip().startsWith("NVMeTLSkey-");
        } catch (IOException e) {
            throw RpcException.invalidParams(method + ": cannot read " + path + ": " + e.getMessage());
        }
    }

    private static void checkMode(String method, Path path) throws RpcException {
        if (!Files.isRegularFile(path)) {
            throw RpcException.invalidParams(method + ": " + path + " is not a file");
        }
        try {
            var perms = Files.getPosixFilePermissions(path);
            if (perms.contains(PosixFilePermission.GROUP_READ) || perms.contains(PosixFilePermission.OTHERS_READ)) {
                throw RpcException.invalidParams(
                        method + ": " + path + " is readable by group or others (chmod 0600 it: it holds a secret)");
            }
        } catch (UnsupportedOperationException e) {
            // no POSIX permissions on this file system
        } catch (IOException e) {
            throw RpcException.invalidParams(method + ": cannot check the permissions of " + path);
        }
    }

    private JsonNode remove(JsonNode params) throws RpcException {
        Params p = Params.of("keyring_file_remove_key", params, Set.of("name"));
        if (keys.remove(p.requireString("name")) == null) {
            throw RpcException.invalidParams(p.method() + ": no key '" + p.requireString("name") + "'");
        }
        return BooleanNode.TRUE;
    }

    private JsonNode list(JsonNode params) throws RpcException {
        Params.of("keyring_get_keys", params, Set.of());
        ArrayNode out = Management.JSON.createArrayNode();
        for (Key k : keys.values()) {
            out.addObject()
                    .put("name", k.name())
                    .put("module", "keyring_file")
                    .put("path", k.path().toString())
                    .put("removed", false);
        }
        return out;
    }
}

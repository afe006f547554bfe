package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.target.daemon.DhchapSecrets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * SPDK's file keyring (docs/security.md): {@code keyring_file_add_key} names a file that holds a secret (mode 0600,
 * as SPDK requires), {@code keyring_file_remove_key} forgets it, {@code keyring_get_keys} lists names and paths (never
 * the secrets). Hosts refer to the names with {@code nvmf_subsystem_add_host --dhchap_key NAME}. The file is read
 * when the key is added and again whenever a host is given it.
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
        Key k = keys.get(name);
        if (k == null) {
            throw RpcException.invalidParams(method + ": no key '" + name + "' (add it with keyring_file_add_key)");
        }
        try {
            return DhchapSecrets.readFile(k.path(), "key '" + name + "'");
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidParams(method + ": " + e.getMessage());
        }
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
        try {
            DhchapSecrets.readFile(path, "key '" + name + "'"); // checked now: mode 0600 and a DHHC-1 secret
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidParams(p.method() + ": " + e.getMessage());
        }
        keys.put(name, new Key(name, path));
        return BooleanNode.TRUE;
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
                    .put("path", k.path().toString())
                    .put("removed", false);
        }
        return out;
    }
}

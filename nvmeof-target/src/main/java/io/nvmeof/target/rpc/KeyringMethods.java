package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * SPDK's file keyring: {@code keyring_file_add_key} (name, path), {@code keyring_file_remove_key} and
 * {@code keyring_get_keys}. A key is a file holding one secret (here: a TLS PSK in the interchange format, as
 * {@code nvme gen-tls-key} prints it); {@code nvmf_subsystem_add_host --psk NAME} reads it. Like SPDK, the file must
 * not be readable by group or others. Only names and paths are kept and shown, never the key.
 */
final class KeyringMethods {
    private final Management m;

    KeyringMethods(Management m) {
        this.m = m;
    }

    void register(Map<String, Management.Method> methods) {
        methods.put("keyring_file_add_key", this::add);
        methods.put("keyring_file_remove_key", this::remove);
        methods.put("keyring_get_keys", this::list);
    }

    private JsonNode add(JsonNode params) throws RpcException {
        Params p = Params.of("keyring_file_add_key", params, Set.of("name", "path"));
        String name = p.requireString("name");
        Path path = Path.of(p.requireString("path"));
        if (m.keyring.containsKey(name)) {
            throw RpcException.invalidParams(p.method() + ": key " + name + " already exists");
        }
        if (!path.isAbsolute() || !Files.isRegularFile(path)) {
            throw RpcException.invalidParams(p.method() + ": path must be an absolute path to a file: " + path);
        }
        try {
            var perms = Files.getPosixFilePermissions(path);
            for (var bad : Set.of(
                    java.nio.file.attribute.PosixFilePermission.GROUP_READ,
                    java.nio.file.attribute.PosixFilePermission.OTHERS_READ)) {
                if (perms.contains(bad)) {
                    throw RpcException.invalidParams(
                            p.method() + ": " + path + " is readable by group or others (chmod 0600 it)");
                }
            }
        } catch (UnsupportedOperationException | java.io.IOException e) {
            throw RpcException.invalidParams(p.method() + ": cannot check the permissions of " + path);
        }
        m.keyring.put(name, path);
        return BooleanNode.TRUE;
    }

    private JsonNode remove(JsonNode params) throws RpcException {
        Params p = Params.of("keyring_file_remove_key", params, Set.of("name"));
        if (m.keyring.remove(p.requireString("name")) == null) {
            throw RpcException.invalidParams(p.method() + ": no key " + p.requireString("name"));
        }
        return BooleanNode.TRUE;
    }

    private JsonNode list(JsonNode params) throws RpcException {
        Params.of("keyring_get_keys", params, Set.of());
        ArrayNode out = Management.JSON.createArrayNode();
        m.keyring.forEach((name, path) -> {
            ObjectNode o = out.addObject();
            o.put("name", name);
            o.put("module", "keyring_file");
            o.put("path", path.toString());
        });
        return out;
    }
}

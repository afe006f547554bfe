package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.namespace.RamNamespace;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * save_config and load_config in SPDK's shape: {@code {"subsystems":[{"subsystem":"bdev","config":[{"method":..,
 * "params":..}]},{"subsystem":"nvmf","config":[..]}]}}. load_config replays the methods in order on a target with no
 * subsystems and no bdevs; if one fails, everything it created is removed again.
 */
final class ConfigMethods {
    /** Option-setting methods of SPDK's own save_config output that mean nothing here: skipped by load_config. */
    private static final Set<String> SKIPPED = Set.of(
            "bdev_set_options",
            "bdev_wait_for_examine",
            "bdev_nvme_set_options",
            "bdev_nvme_set_hotplug",
            "bdev_raid_set_options",
            "bdev_iscsi_set_options",
            "nvmf_set_config",
            "nvmf_set_max_subsystems",
            "nvmf_set_crdt");

    private final Management m;

    ConfigMethods(Management m) {
        this.m = m;
    }

    void register(Map<String, Management.Method> methods) {
        methods.put("save_config", this::save);
        methods.put("load_config", this::load);
        // SPDK's rpc.py builds save_config on the client from these two.
        methods.put("framework_get_subsystems", this::subsystems);
        methods.put("framework_get_config", this::config);
    }

    private JsonNode save(JsonNode params) throws RpcException {
        Params.of("save_config", params, Set.of());
        ObjectNode root = Management.JSON.createObjectNode();
        ArrayNode subsystems = root.putArray("subsystems");
        ArrayNode keyring = section(subsystems, "keyring");
        for (KeyringMethods.Key k : m.keyring.keys()) {
            call(keyring, "keyring_file_add_key")
                    .put("name", k.name())
                    .put("path", k.path().toString());
        }
        ArrayNode bdev = section(subsystems, "bdev");
        for (Bdev b : m.bdevs.values()) {
            ObjectNode p = call(bdev, b.kind().createMethod);
            p.put("name", b.name());
            p.put("num_blocks", b.numBlocks());
            p.put("block_size", b.blockSize());
            p.put("uuid", b.uuid().toString());
        }
        ArrayNode nvmf = section(subsystems, "nvmf");
        for (TransportOptions t : new NvmfQueries(m).effectiveTransports().values()) {
            call(nvmf, "nvmf_create_transport").setAll(t.describe());
        }
        for (Subsystem s : m.target().subsystems()) {
            ObjectNode c = call(nvmf, "nvmf_create_subsystem");
            c.put("nqn", s.nqn());
            c.put("allow_any_host", s.allowAnyHost());
            c.put("serial_number", s.serial());
            c.put("model_number", s.model());
            for (String h : s.hosts()) {
                String[] names =
                        m.hostKeyNames.getOrDefault(s.nqn(), java.util.Map.of()).get(h);
                if (s.hostAuth(h) != null && names == null) {
                    // Keys from the config file or the Java API have no keyring name: leaving the host out fails
                    // closed (it cannot connect after a reload) instead of letting it in without authentication.
                    System.getLogger("io.nvmeof.target")
                            .log(
                                    System.Logger.Level.WARNING,
                                    "save_config: host " + h + " of " + s.nqn()
                                            + " has DH-HMAC-CHAP keys without keyring names; left out");
                    continue;
                }
                ObjectNode a = call(nvmf, "nvmf_subsystem_add_host")
                        .put("nqn", s.nqn())
                        .put("host", h);
                if (names != null && s.hostAuth(h) != null) {
                    a.put("dhchap_key", names[0]);
                    if (names[1] != null) {
                        a.put("dhchap_ctrlr_key", names[1]);
                    }
                }
                if (names != null && names.length > 2 && names[2] != null) {
                    a.put("psk", names[2]); // the keyring name (or the file path SPDK took before its keyring)
                }
            }
            for (RamNamespace ns : s.namespaces()) {
                ObjectNode a = call(nvmf, "nvmf_subsystem_add_ns").put("nqn", s.nqn());
                ObjectNode n = a.putObject("namespace");
                n.put("nsid", ns.nsid());
                n.put("bdev_name", m.bdevOf(s.nqn(), ns.nsid()).name());
                n.put("uuid", ns.uuid().toString());
                n.put("anagrpid", s.ana().groupOf(ns.nsid()));
            }
            for (TargetListener l : m.target().listeners()) {
                if (!s.reachableOn(l.portInfo().portId())) {
                    continue;
                }
                ObjectNode a = call(nvmf, "nvmf_subsystem_add_listener").put("nqn", s.nqn());
                a.set("listen_address", ListenAddress.describe(l.portInfo()));
                if ((l.portInfo().treq() & 0x3) == io.nvmeof.core.tls.SecureChannel.REQUIRED.treqBits()) {
                    a.put("secure_channel", true);
                }
            }
        }
        return root;
    }

    private JsonNode subsystems(JsonNode params) throws RpcException {
        Params.of("framework_get_subsystems", params, Set.of());
        ArrayNode out = Management.JSON.createArrayNode();
        out.addObject().put("subsystem", "keyring").putArray("depends_on");
        out.addObject().put("subsystem", "bdev").putArray("depends_on");
        out.addObject()
                .put("subsystem", "nvmf")
                .putArray("depends_on")
                .add("bdev")
                .add("keyring");
        return out;
    }

    private JsonNode config(JsonNode params) throws RpcException {
        Params p = Params.of("framework_get_config", params, Set.of("name", "with_batches"));
        String name = p.requireString("name");
        for (JsonNode section : save(null).get("subsystems")) {
            if (section.get("subsystem").asText().equals(name)) {
                return section.get("config");
            }
        }
        throw RpcException.invalidParams("framework_get_config: no subsystem " + name + " (bdev and nvmf exist)");
    }

    private static ArrayNode section(ArrayNode subsystems, String name) {
        ObjectNode s = subsystems.addObject();
        s.put("subsystem", name);
        return s.putArray("config");
    }

    private static ObjectNode call(ArrayNode config, String method) {
        ObjectNode c = config.addObject();
        c.put("method", method);
        return c.putObject("params");
    }

    private JsonNode load(JsonNode params) throws RpcException {
        JsonNode sections = params == null ? null : params.get("subsystems");
        if (sections == null || !sections.isArray()) {
            throw RpcException.invalidParams("load_config: params must be save_config's object {\"subsystems\":[..]}");
        }
        if (!m.target().subsystems().isEmpty() || !m.bdevs.isEmpty()) {
            throw RpcException.invalidParams("load_config: the target must have no subsystems and no bdevs");
        }
        List<JsonNode[]> calls = new ArrayList<>();
        for (JsonNode section : sections) {
            String name = section.path("subsystem").asText("");
            JsonNode config = section.get("config");
            if (!(name.equals("keyring") || name.equals("bdev") || name.equals("nvmf"))
                    || config == null
                    || !config.isArray()) {
                continue; // other SPDK subsystems (sock, iobuf, accel, ...) have nothing to set here
            }
            for (JsonNode c : config) {
                String method = c.path("method").asText("");
                if (SKIPPED.contains(method)) {
                    continue;
                }
                if (!m.methodNames().contains(method) || method.endsWith("_config")) {
                    throw RpcException.invalidParams("load_config: method " + method + " is not supported");
                }
                calls.add(new JsonNode[] {c.get("method"), c.get("params")});
            }
        }
        Set<Integer> portsBefore = new java.util.HashSet<>();
        m.target().listeners().forEach(l -> portsBefore.add(l.portInfo().portId()));
        // bdevs first, then transports, subsystems, hosts, namespaces, listeners in file order
        try {
            for (JsonNode[] c : calls) {
                m.call(c[0].asText(), c[1]);
            }
        } catch (RpcException | RuntimeException e) {
            for (Subsystem s : m.target().subsystems()) {
                m.target().removeSubsystem(s.nqn());
            }
            for (TargetListener l : m.target().listeners()) {
                if (portsBefore.contains(l.portInfo().portId())) {
                    continue;
                }
                m.target().removeListener(l.portInfo().portId());
            }
            m.rpcListeners.retainAll(portsBefore);
            m.discoveryListeners.retainAll(portsBefore);
            m.bdevs.clear();
            m.transports.clear();
            throw e instanceof RpcException r
                    ? new RpcException(r.code(), "load_config: " + r.getMessage())
                    : RpcException.invalidParams("load_config: " + e.getMessage());
        }
        return BooleanNode.TRUE;
    }
}

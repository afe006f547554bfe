package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.IntNode;
import io.nvmeof.core.command.AnaState;
import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.tls.SecureChannel;
import io.nvmeof.target.AnaGroups;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.config.HostAuth;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TlsKeyConfig;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The nvmf_* methods that change the target. Listeners are per subsystem, as in SPDK: nvmf_subsystem_add_listener
 * opens a listener unless one is open at that address already and makes the subsystem reachable on it (the discovery
 * NQN is reachable on every listener: for it the call only opens one); nvmf_subsystem_remove_listener makes the
 * subsystem unreachable there (its controllers on that listener are torn down) and closes a listener it opened once no
 * subsystem is left on it (listeners the daemon started with stay open).
 */
final class NvmfMethods {
    private final Management m;

    NvmfMethods(Management m) {
        this.m = m;
    }

    void register(Map<String, Management.Method> methods) {
        methods.put("nvmf_create_transport", this::createTransport);
        methods.put("nvmf_create_subsystem", this::createSubsystem);
        methods.put("nvmf_delete_subsystem", this::deleteSubsystem);
        methods.put("nvmf_subsystem_add_ns", this::addNs);
        methods.put("nvmf_subsystem_remove_ns", this::removeNs);
        methods.put("nvmf_subsystem_add_host", p -> host("nvmf_subsystem_add_host", p, true));
        methods.put("nvmf_subsystem_remove_host", p -> host("nvmf_subsystem_remove_host", p, false));
        methods.put("nvmf_subsystem_set_keys", this::setKeys);
        methods.put("nvmf_subsystem_allow_any_host", this::allowAnyHost);
        methods.put("nvmf_subsystem_add_listener", this::addListener);
        methods.put("nvmf_subsystem_remove_listener", this::removeListener);
        methods.put("nvmf_subsystem_listener_set_ana_state", this::setAnaState);
    }

    private JsonNode createTransport(JsonNode params) throws RpcException {
        TransportOptions t = TransportOptions.parse(params);
        if (m.transports.containsKey(t.trtype())) {
            throw RpcException.invalidParams("nvmf_create_transport: transport type " + t.trtype() + " already exists");
        }
        m.transports.put(t.trtype(), t);
        return BooleanNode.TRUE;
    }

    private JsonNode createSubsystem(JsonNode params) throws RpcException {
        Params p = Params.of(
                "nvmf_create_subsystem",
                params,
                Set.of(
                        "nqn",
                        "tgt_name",
                        "serial_number",
                        "model_number",
                        "allow_any_host",
                        "max_namespaces",
                        "ana_reporting",
                        "min_cntlid",
                        "max_cntlid",
                        "max_discard_size_kib",
                        "max_write_zeroes_size_kib",
                        "passthrough",
                        "enable_nssr"));
        String nqn = p.requireString("nqn");
        if (p.bool("passthrough", false) || p.bool("enable_nssr", false)) {
            throw RpcException.invalidParams(
                    "nvmf_create_subsystem: passthrough subsystems and NSSR are not supported");
        }
        int minCntlid = p.intValue("min_cntlid", 1);
        int maxCntlid = p.intValue("max_cntlid", 0xFFEF);
        if (minCntlid != 1 || maxCntlid != 0xFFEF) {
            throw RpcException.invalidParams(
                    "nvmf_create_subsystem: min_cntlid/max_cntlid: this target always " + "uses CNTLIDs 1..65519");
        }
        p.intValue("max_namespaces", 0);
        p.bool("ana_reporting", true);
        if (m.target().subsystem(nqn) != null) {
            throw RpcException.invalidParams("nvmf_create_subsystem: subsystem " + nqn + " already exists");
        }
        SubsystemConfig sc = new SubsystemConfig(
                nqn,
                p.bool("allow_any_host", false),
                List.of(),
                List.of(),
                p.string("serial_number", null),
                p.string("model_number", null),
                List.of(),
                List.of(), // reachable on no listener until nvmf_subsystem_add_listener (SPDK)
                List.of());
        m.target().addSubsystem(sc);
        return BooleanNode.TRUE;
    }

    private JsonNode deleteSubsystem(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_delete_subsystem", params, Set.of("nqn", "tgt_name"));
        Subsystem s = m.requireSubsystem(p.method(), p.requireString("nqn"));
        List<Integer> had = new java.util.ArrayList<>();
        m.target().listeners().forEach(l -> {
            if (s.reachableOn(l.portInfo().portId())) {
                had.add(l.portInfo().portId());
            }
        });
        m.target().removeSubsystem(s.nqn());
        had.forEach(this::closeIfUnused);
        return BooleanNode.TRUE;
    }

    private JsonNode addNs(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_add_ns", params, Set.of("nqn", "namespace", "tgt_name"));
        Subsystem s = m.requireSubsystem(p.method(), p.requireString("nqn"));
        Params ns = p.object(
                "namespace",
                Set.of(
                        "bdev_name",
                        "nsid",
                        "nguid",
                        "eui64",
                        "uuid",
                        "anagrpid",
                        "ptpl_file",
                        "no_auto_visible",
                        "hide_metadata"));
        String bdevName = ns.requireString("bdev_name");
        int nsid = ns.intValue("nsid", 0);
        int group = ns.intValue("anagrpid", AnaGroups.DEFAULT_GROUP);
        Bdev b = m.bdevs.get(bdevName);
        if (b == null) {
            throw RpcException.invalidParams(p.method() + ": no bdev " + bdevName);
        }
        if (b.claimed()) {
            throw RpcException.invalidParams(
                    p.method() + ": bdev " + bdevName + " is already namespace " + b.nsid() + " of " + b.claimedBy());
        }
        if (ns.has("ptpl_file") || ns.bool("no_auto_visible", false) || ns.has("eui64")) {
            throw RpcException.invalidParams(p.method() + ": ptpl_file, no_auto_visible and eui64 are not supported");
        }
        UUID uuid = ns.has("uuid") ? ns.uuid("uuid") : b.uuid();
        String nguid = ns.string("nguid", null);
        if (nguid != null
                && !nguid.replace("-", "").equalsIgnoreCase(uuid.toString().replace("-", ""))) {
            throw RpcException.invalidParams(p.method() + ": nguid: this target's NGUID is the namespace UUID");
        }
        if (nsid < 0 || nsid > NamespaceConfig.MAX_NSID) {
            throw RpcException.invalidParams(p.method() + ": nsid must be 1.." + NamespaceConfig.MAX_NSID);
        }
        if (nsid != 0 && s.namespace(nsid) != null) {
            throw RpcException.invalidParams(p.method() + ": nsid " + nsid + " already exists in " + s.nqn());
        }
        for (Subsystem other : m.target().subsystems()) {
            for (var n : other.namespaces()) {
                if (n.uuid().equals(uuid)) {
                    throw RpcException.invalidParams(
                            p.method() + ": UUID " + uuid + " is already namespace " + n.nsid() + " of " + other.nqn());
                }
            }
        }
        NamespaceConfig nc = new NamespaceConfig(nsid, b.sizeBytes(), b.blockSize(), uuid, false, group);
        int added = m.target().addNamespace(s.nqn(), nc).nsid();
        m.bdevs.put(b.name(), b.claim(s.nqn(), added));
        return IntNode.valueOf(added);
    }

    private JsonNode removeNs(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_remove_ns", params, Set.of("nqn", "nsid", "tgt_name"));
        Subsystem s = m.requireSubsystem(p.method(), p.requireString("nqn"));
        int nsid = (int) p.requireLong("nsid");
        if (s.namespace(nsid) == null) {
            throw RpcException.invalidParams(p.method() + ": no namespace " + nsid + " in " + s.nqn());
        }
        Bdev b = m.bdevOf(s.nqn(), nsid);
        m.target().removeNamespace(s.nqn(), nsid);
        if (b != null) {
            m.bdevs.put(b.name(), b.release());
        }
        return BooleanNode.TRUE;
    }

    private JsonNode host(String method, JsonNode params, boolean allow) throws RpcException {
        Params p =
                Params.of(method, params, Set.of("nqn", "host", "tgt_name", "psk", "dhchap_key", "dhchap_ctrlr_key"));
        Subsystem s = m.requireSubsystem(method, p.requireString("nqn"));
        String host = p.requireString("host");
        if (p.has("psk") && !allow) {
            throw RpcException.invalidParams(method + ": psk belongs to nvmf_subsystem_add_host");
        }
        TlsKeyConfig tlsKey = p.has("psk") ? tlsKey(method, s.nqn(), host, p.requireString("psk")) : null;
        if (host.isEmpty() || host.length() > 223) {
            throw RpcException.invalidParams(method + ": host must be an NQN of 1..223 bytes");
        }
        if (allow == s.hosts().contains(host)) {
            throw RpcException.invalidParams(
                    method + ": host " + host + (allow ? " is already allowed in " : " is not allowed in ") + s.nqn());
        }
        if (!allow && (p.has("dhchap_key") || p.has("dhchap_ctrlr_key"))) {
            throw RpcException.invalidParams(method + ": takes no keys");
        }
        HostAuth auth = allow ? hostAuth(p, host) : null;
        if (auth != null) {
            m.target().setHostAuth(s.nqn(), host, auth); // also allows the host
        } else {
            if (!allow && s.hostAuth(host) != null) {
                m.target().setHostAuth(s.nqn(), host, null);
            }
            m.target().setHostAllowed(s.nqn(), host, allow);
        }
        if (tlsKey != null) {
            m.target().tlsKeys().put(tlsKey);
        } else if (!allow) {
            m.target().tlsKeys().remove(host, s.nqn());
        }
        if (allow) {
            rememberKeyNames(s.nqn(), host, p);
        } else {
            m.hostKeyNames.getOrDefault(s.nqn(), new java.util.HashMap<>()).remove(host);
        }
        return BooleanNode.TRUE;
    }

    /** The host's TLS PSK from a keyring key name (keyring_file_add_key), or from a file path as older SPDK took. */
    private TlsKeyConfig tlsKey(String method, String nqn, String host, String psk) throws RpcException {
        io.nvmeof.core.tls.ConfiguredPsk key = !m.keyring.contains(psk) && psk.startsWith("/")
                ? KeyringMethods.readPsk(method, java.nio.file.Path.of(psk))
                : m.keyring.tlsPsk(method, psk);
        return new TlsKeyConfig(host, nqn, key, null);
    }

    /** SPDK's nvmf_subsystem_set_keys: new DH-HMAC-CHAP keys for an allowed host (none: the host need not authenticate). */
    private JsonNode setKeys(JsonNode params) throws RpcException {
        Params p = Params.of(
                "nvmf_subsystem_set_keys", params, Set.of("nqn", "host", "tgt_name", "dhchap_key", "dhchap_ctrlr_key"));
        Subsystem s = m.requireSubsystem(p.method(), p.requireString("nqn"));
        String host = p.requireString("host");
        if (!s.hosts().contains(host)) {
            throw RpcException.invalidParams(p.method() + ": host " + host + " is not allowed in " + s.nqn());
        }
        HostAuth auth = hostAuth(p, host);
        m.target().setHostAuth(s.nqn(), host, auth);
        if (auth == null) {
            String[] names =
                    m.hostKeyNames.getOrDefault(s.nqn(), java.util.Map.of()).get(host);
            if (names != null) {
                names[0] = null;
                names[1] = null;
            }
        } else {
            String[] names = m.hostKeyNames
                    .computeIfAbsent(s.nqn(), k -> new java.util.TreeMap<>())
                    .computeIfAbsent(host, k -> new String[3]);
            names[0] = p.string("dhchap_key", null);
            names[1] = p.string("dhchap_ctrlr_key", null);
        }
        return BooleanNode.TRUE;
    }

    /** The host's settings from the keyring names in {@code dhchap_key} and {@code dhchap_ctrlr_key}, or null. */
    private HostAuth hostAuth(Params p, String host) throws RpcException {
        String key = p.string("dhchap_key", null);
        String ctrl = p.string("dhchap_ctrlr_key", null);
        if (key == null) {
            if (ctrl != null) {
                throw RpcException.invalidParams(p.method() + ": dhchap_ctrlr_key needs dhchap_key");
            }
            return null;
        }
        return new HostAuth(
                host,
                m.keyring.dhchapSecret(p.method(), key),
                ctrl == null ? null : m.keyring.dhchapSecret(p.method(), ctrl));
    }

    /** Remembers for save_config the keyring names of the host's keys: dhchap_key, dhchap_ctrlr_key, psk. */
    private void rememberKeyNames(String nqn, String host, Params p) throws RpcException {
        m.hostKeyNames.computeIfAbsent(nqn, k -> new java.util.TreeMap<>()).put(host, new String[] {
            p.string("dhchap_key", null), p.string("dhchap_ctrlr_key", null), p.string("psk", null)
        });
    }

    private JsonNode allowAnyHost(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_allow_any_host", params, Set.of("nqn", "allow_any_host", "tgt_name"));
        Subsystem s = m.requireSubsystem(p.method(), p.requireString("nqn"));
        if (!p.has("allow_any_host")) {
            throw RpcException.invalidParams(p.method() + ": missing parameter 'allow_any_host'");
        }
        m.target().setAllowAnyHost(s.nqn(), p.bool("allow_any_host", false));
        return BooleanNode.TRUE;
    }

    private static final Set<String> LISTENER_PARAMS =
            Set.of("nqn", "listen_address", "tgt_name", "secure_channel", "ana_state", "anagrpid", "sock_impl");

    private JsonNode addListener(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_add_listener", params, LISTENER_PARAMS);
        String nqn = p.requireString("nqn");
        boolean discovery = Nqn.DISCOVERY.equals(nqn); // reachable on every listener: only opens it
        if (!discovery) {
            m.requireSubsystem(p.method(), nqn);
        }
        ListenAddress a = ListenAddress.parse(p);
        boolean secure = p.bool("secure_channel", false);
        if (secure && !"TCP".equals(a.trtype())) {
            throw RpcException.invalidParams(p.method() + ": secure_channel (TLS) is for TCP only");
        }
        TargetListener l = find(a);
        if (l != null && secure && (l.portInfo().treq() & 0x3) != SecureChannel.REQUIRED.treqBits()) {
            throw RpcException.invalidParams(p.method() + ": a listener without TLS is open at that address already");
        }
        if (l == null) {
            TransportOptions t = m.transports.getOrDefault(a.trtype(), TransportOptions.defaults(a.trtype()));
            ListenerConfig lc = new ListenerConfig(
                    a.trtype().toLowerCase(java.util.Locale.ROOT),
                    a.traddr(),
                    a.port(),
                    t.maxQueueDepth(),
                    t.inCapsuleDataSize());
            if (secure) {
                lc = lc.withSecureChannel(SecureChannel.REQUIRED);
            }
            try {
                l = m.target().addListenerForSubsystems(lc);
            } catch (IOException e) {
                throw new RpcException(RpcException.INTERNAL_ERROR, p.method() + ": " + e.getMessage());
            }
            m.rpcListeners.add(l.portInfo().portId());
        }
        if (discovery) {
            m.discoveryListeners.add(l.portInfo().portId());
        } else {
            m.target().addSubsystemListener(nqn, l.portInfo().portId()); // already there: SPDK succeeds too
        }
        return BooleanNode.TRUE;
    }

    private JsonNode removeListener(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_remove_listener", params, LISTENER_PARAMS);
        String nqn = p.requireString("nqn");
        boolean discovery = Nqn.DISCOVERY.equals(nqn);
        Subsystem s = discovery ? m.target().discoverySubsystem() : m.requireSubsystem(p.method(), nqn);
        TargetListener l = find(ListenAddress.parse(p));
        boolean has = l != null
                && (discovery
                        ? m.discoveryListeners.contains(l.portInfo().portId())
                        : s.reachableOn(l.portInfo().portId()));
        if (!has) {
            throw RpcException.invalidParams(p.method() + ": " + nqn + " has no listener at that address");
        }
        int portId = l.portInfo().portId();
        if (discovery) {
            m.discoveryListeners.remove(portId);
        } else {
            m.target().removeSubsystemListener(nqn, portId);
        }
        closeIfUnused(portId);
        return BooleanNode.TRUE;
    }

    /**
     * Closes a listener nvmf_subsystem_add_listener opened once no subsystem is left on it and the discovery NQN was
     * not added to it, as SPDK's transport listeners (counted by the subsystems that use them) close. Listeners the
     * daemon started with stay open.
     */
    private void closeIfUnused(int portId) {
        if (m.rpcListeners.contains(portId)
                && !m.discoveryListeners.contains(portId)
                && !m.target().listenerInUse(portId)) {
            m.target().removeListener(portId);
            m.rpcListeners.remove(portId);
        }
    }

    private JsonNode setAnaState(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_listener_set_ana_state", params, LISTENER_PARAMS);
        Subsystem s = m.requireSubsystem(p.method(), p.requireString("nqn"));
        TargetListener l = find(ListenAddress.parse(p));
        if (l == null || !s.reachableOn(l.portInfo().portId())) {
            throw RpcException.invalidParams(p.method() + ": " + s.nqn() + " has no listener at that address");
        }
        String text = p.requireString("ana_state");
        AnaState state;
        try {
            state = AnaState.parse(text);
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidParams(p.method() + ": " + e.getMessage());
        }
        if (state != AnaState.OPTIMIZED && state != AnaState.NON_OPTIMIZED && state != AnaState.INACCESSIBLE) {
            throw RpcException.invalidParams(
                    p.method() + ": ana_state must be optimized, non_optimized or inaccessible: " + text);
        }
        int portId = l.portInfo().portId();
        if (p.has("anagrpid")) {
            int group = p.intValue("anagrpid", 0);
            if (group < 1 || group > AnaGroups.MAX_GROUP) {
                throw RpcException.invalidParams(p.method() + ": anagrpid must be 1.." + AnaGroups.MAX_GROUP);
            }
            m.target().setAnaState(s.nqn(), portId, group, state);
        } else {
            // Without anagrpid SPDK sets every ANA group of the subsystem.
            java.util.SortedSet<Integer> groups = new java.util.TreeSet<>(Set.of(AnaGroups.DEFAULT_GROUP));
            s.namespaces().forEach(n -> groups.add(s.ana().groupOf(n.nsid())));
            for (int group : groups) {
                m.target().setAnaState(s.nqn(), portId, group, state);
            }
        }
        return BooleanNode.TRUE;
    }

    private TargetListener find(ListenAddress a) {
        for (TargetListener l : m.target().listeners()) {
            if (a.matches(l)) {
                return l;
            }
        }
        return null;
    }
}

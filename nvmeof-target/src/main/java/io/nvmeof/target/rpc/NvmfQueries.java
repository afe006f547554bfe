package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.target.Controller;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.namespace.RamNamespace;
import io.nvmeof.target.stats.IoCounts;
import io.nvmeof.target.stats.NamespaceStats;
import io.nvmeof.target.stats.SubsystemStats;
import io.nvmeof.target.stats.TargetStats;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The nvmf_* methods that only read: subsystems, controllers, queue pairs, listeners, transports, statistics. */
final class NvmfQueries {
    private final Management m;

    NvmfQueries(Management m) {
        this.m = m;
    }

    void register(Map<String, Management.Method> methods) {
        methods.put("nvmf_get_subsystems", this::subsystems);
        methods.put("nvmf_subsystem_get_controllers", this::controllers);
        methods.put("nvmf_subsystem_get_qpairs", this::qpairs);
        methods.put("nvmf_subsystem_get_listeners", this::listeners);
        methods.put("nvmf_get_transports", this::transports);
        methods.put("nvmf_get_stats", this::stats);
    }

    private JsonNode subsystems(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_get_subsystems", params, Set.of("nqn", "tgt_name"));
        String only = p.string("nqn", null);
        ArrayNode out = Management.JSON.createArrayNode();
        if (only == null || only.equals(Nqn.DISCOVERY)) {
            ObjectNode d = out.addObject();
            d.put("nqn", Nqn.DISCOVERY);
            d.put("subtype", "Discovery");
            listenAddresses(m.target().discoverySubsystem(), d.putArray("listen_addresses"));
            d.putArray("hosts");
            d.put("allow_any_host", true);
        }
        if (only != null && !only.equals(Nqn.DISCOVERY)) {
            m.requireSubsystem(p.method(), only);
        }
        for (Subsystem s : m.target().subsystems()) {
            if (only != null && !only.equals(s.nqn())) {
                continue;
            }
            ObjectNode o = out.addObject();
            o.put("nqn", s.nqn());
            o.put("subtype", "NVMe");
            listenAddresses(s, o.putArray("listen_addresses"));
            ArrayNode hosts = o.putArray("hosts");
            for (String h : s.hosts()) {
                ObjectNode host = hosts.addObject().put("nqn", h);
                // SPDK names the host's keyring keys; keys set without a name (config file, Java API) show as such
                String[] names =
                        m.hostKeyNames.getOrDefault(s.nqn(), java.util.Map.of()).get(h);
                io.nvmeof.target.config.HostAuth auth = s.hostAuth(h);
                if (auth != null) {
                    host.put("dhchap_key", names != null && names[0] != null ? names[0] : "(not in the keyring)");
                    if (auth.ctrlKey() != null) {
                        host.put(
                                "dhchap_ctrlr_key",
                                names != null && names[1] != null ? names[1] : "(not in the keyring)");
                    }
                }
            }
            o.put("allow_any_host", s.allowAnyHost());
            o.put("serial_number", s.serial());
            o.put("model_number", s.model());
            o.put("max_namespaces", io.nvmeof.target.config.NamespaceConfig.MAX_NSID);
            o.put("min_cntlid", 1);
            o.put("max_cntlid", 0xFFEF);
            ArrayNode nss = o.putArray("namespaces");
            for (RamNamespace ns : s.namespaces()) {
                Bdev b = m.bdevOf(s.nqn(), ns.nsid());
                ObjectNode n = nss.addObject();
                n.put("nsid", ns.nsid());
                n.put("bdev_name", b == null ? "" : b.name());
                n.put("name", b == null ? "" : b.name());
                n.put("nguid", ns.uuid().toString().replace("-", "").toUpperCase(java.util.Locale.ROOT));
                n.put("uuid", ns.uuid().toString());
                n.put("anagrpid", s.ana().groupOf(ns.nsid()));
            }
        }
        return out;
    }

    /** The addresses of the listeners {@code s} is reachable on, in the order the listeners were opened. */
    private void listenAddresses(Subsystem s, ArrayNode into) {
        for (TargetListener l : m.target().listeners()) {
            if (s.reachableOn(l.portInfo().portId())) {
                into.add(ListenAddress.describe(l.portInfo()));
            }
        }
    }

    private JsonNode controllers(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_get_controllers", params, Set.of("nqn", "tgt_name"));
        Subsystem s = subsystemOrDiscovery(p);
        ArrayNode out = Management.JSON.createArrayNode();
        for (Controller c : s.controllers()) {
            ObjectNode o = out.addObject();
            o.put("cntlid", c.cntlid());
            o.put("cntrltype", c.isDiscovery() ? "discovery" : "io");
            o.put("hostnqn", c.hostNqn());
            o.put("hostid", String.valueOf(c.hostId()));
            o.put("num_io_qpairs", c.ioQueueCount());
        }
        return out;
    }

    private JsonNode qpairs(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_get_qpairs", params, Set.of("nqn", "tgt_name"));
        Subsystem s = subsystemOrDiscovery(p);
        ArrayNode out = Management.JSON.createArrayNode();
        for (Controller c : s.controllers()) {
            for (int qid = 0; qid <= c.ioQueueCount(); qid++) {
                ObjectNode o = out.addObject();
                o.put("cntlid", c.cntlid());
                o.put("qid", qid);
                o.put("state", "active");
                if (c.port() != null) {
                    o.set("listen_address", ListenAddress.describe(c.port()));
                }
            }
        }
        return out;
    }

    private JsonNode listeners(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_subsystem_get_listeners", params, Set.of("nqn", "tgt_name"));
        Subsystem s = subsystemOrDiscovery(p);
        ArrayNode out = Management.JSON.createArrayNode();
        for (TargetListener l : m.target().listeners()) {
            int portId = l.portInfo().portId();
            if (!s.reachableOn(portId)) {
                continue;
            }
            ObjectNode o = out.addObject();
            o.set("address", ListenAddress.describe(l.portInfo()));
            o.put("ana_state", spdkName(s.ana().state(portId, 1)));
            ArrayNode states = o.putArray("ana_states");
            Set<Integer> groups = new java.util.TreeSet<>(Set.of(1));
            s.namespaces().forEach(n -> groups.add(s.ana().groupOf(n.nsid())));
            for (int g : groups) {
                states.addObject()
                        .put("ana_group", g)
                        .put("ana_state", spdkName(s.ana().state(portId, g)));
            }
        }
        return out;
    }

    static String spdkName(io.nvmeof.core.command.AnaState state) {
        return state.configName().replace('-', '_');
    }

    private Subsystem subsystemOrDiscovery(Params p) throws RpcException {
        String nqn = p.requireString("nqn");
        return Nqn.DISCOVERY.equals(nqn) ? m.target().discoverySubsystem() : m.requireSubsystem(p.method(), nqn);
    }

    private JsonNode transports(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_get_transports", params, Set.of("trtype", "tgt_name"));
        String only = p.string("trtype", null);
        ArrayNode out = Management.JSON.createArrayNode();
        for (TransportOptions t : effectiveTransports().values()) {
            if (only == null || only.equalsIgnoreCase(t.trtype())) {
                out.add(t.describe());
            }
        }
        if (only != null && out.isEmpty()) {
            throw RpcException.invalidParams("nvmf_get_transports: no transport " + only);
        }
        return out;
    }

    /** Transports created over RPC plus those of listeners opened otherwise (flags, config file). */
    Map<String, TransportOptions> effectiveTransports() {
        Map<String, TransportOptions> all = new TreeMap<>(m.transports);
        for (TargetListener l : m.target().listeners()) {
            String t = ListenAddress.trtypeOf(l.portInfo());
            all.putIfAbsent(
                    t,
                    new TransportOptions(
                            t, l.portInfo().maxQueueSize(), l.portInfo().inCapsuleDataSize()));
        }
        return all;
    }

    /**
     * SPDK's shape with one poll group for the whole target: queue pairs now connected and I/O commands completed by
     * the live controllers. {@code tick_rate} is 1 GHz (nanoseconds).
     */
    private JsonNode stats(JsonNode params) throws RpcException {
        Params.of("nvmf_get_stats", params, Set.of("tgt_name"));
        int admin = 0;
        int io = 0;
        long completed = 0;
        for (Controller c : m.target().controllers()) {
            admin++;
            io += c.ioQueueCount();
            completed += c.ioCommands();
        }
        ObjectNode r = Management.JSON.createObjectNode();
        r.put("tick_rate", 1_000_000_000L);
        ObjectNode g = r.putArray("poll_groups").addObject();
        g.put("name", "nvmeof_java");
        g.put("admin_qpairs", admin);
        g.put("io_qpairs", io);
        g.put("current_admin_qpairs", admin);
        g.put("current_io_qpairs", io);
        g.put("pending_bdev_io", 0);
        g.put("completed_nvme_io", completed);
        ArrayNode ts = g.putArray("transports");
        effectiveTransports().keySet().forEach(t -> ts.addObject().put("trtype", t));
        putTargetStats(r, m.target().stats());
        return r;
    }

    /**
     * The same counts as the Prometheus endpoint (NvmeTarget.stats()), under a key of our own that SPDK's tools
     * ignore: memory against the budget, connections accepted, and per subsystem and namespace the successful reads,
     * writes and bytes since the start, errors by status, notifications sent and keep-alive expiries.
     */
    private static void putTargetStats(ObjectNode r, TargetStats s) {
        ObjectNode t = r.putObject("nvmeof_java");
        t.put("memory_used_bytes", s.memoryUsedBytes());
        t.put("memory_budget_bytes", s.memoryBudgetBytes());
        t.put("connections_accepted", s.connectionsAccepted());
        ArrayNode subsystems = t.putArray("subsystems");
        for (SubsystemStats ss : s.subsystems()) {
            ObjectNode o = subsystems.addObject();
            o.put("nqn", ss.subsystem());
            o.put("controllers", ss.controllers());
            o.put("queues", ss.queues());
            putIo(o, ss.io());
            ObjectNode errors = o.putObject("errors_by_status");
            ss.errorsByStatus().forEach((status, n) -> errors.put(String.format("0x%03x", status), n));
            o.put("aens_sent", ss.aensSent());
            o.put("keep_alive_expiries", ss.keepAliveExpiries());
        }
        ArrayNode namespaces = t.putArray("namespaces");
        for (NamespaceStats ns : s.namespaces()) {
            ObjectNode o = namespaces.addObject();
            o.put("nqn", ns.subsystem());
            o.put("nsid", ns.nsid());
            putIo(o, ns.io());
        }
    }

    private static void putIo(ObjectNode o, IoCounts io) {
        o.put("reads", io.reads());
        o.put("writes", io.writes());
        o.put("bytes_read", io.bytesRead());
        o.put("bytes_written", io.bytesWritten());
    }
}

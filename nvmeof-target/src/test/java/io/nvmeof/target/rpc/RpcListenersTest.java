package io.nvmeof.target.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.core.command.Status;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.e2e.RawTcpHost;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Listeners per subsystem over the real socket, as SPDK: nvmf_subsystem_add_listener makes one subsystem reachable on
 * a TCP listener (a real one, which a raw NVMe/TCP host connects to), the other subsystems stay unreachable there, the
 * queries and save_config show each subsystem's own listeners, and the listener closes when its last subsystem leaves.
 */
class RpcListenersTest {
    private static final String ONE = "nqn.2016-06.io.spdk:cnode1";
    private static final String TWO = "nqn.2016-06.io.spdk:cnode2";
    private static final String FLAG = "nqn.2024-01.io.nvmeof:flags"; // as bin/nvmeof-target --namespace makes one
    private static final String DISCOVERY = "nqn.2014-08.org.nvmexpress.discovery";

    @TempDir
    Path dir;

    private NvmeTarget target;
    private RpcServer server;
    private Path socket;

    @BeforeEach
    void start() throws Exception {
        target = NvmeTarget.start(new TargetConfig(List.of(), List.of(), 1L << 30, 0));
        socket = dir.resolve("rpc.sock");
        server = new RpcServer(new Management(target)).listenUnix(socket);
    }

    @AfterEach
    void stop() {
        server.close();
        target.close();
    }

    private JsonNode ok(String method, String params) throws Exception {
        JsonNode r = RpcServerTest.call(socket, method, params);
        assertFalse(r.has("error"), () -> method + " failed: " + r);
        return r.get("result");
    }

    private void fails(String method, String params) throws Exception {
        JsonNode r = RpcServerTest.call(socket, method, params);
        assertTrue(r.has("error"), () -> method + " should fail: " + r);
        assertEquals(RpcException.INVALID_PARAMS, r.get("error").get("code").asInt(), r.toString());
    }

    private static String listener(String nqn, JsonNode address) {
        return "{\"nqn\":\"" + nqn + "\",\"listen_address\":" + address + "}";
    }

    /** Admin Connect to {@code nqn} on 127.0.0.1:{@code port}; its status. */
    private static int connect(int port, String nqn) throws IOException {
        try (RawTcpHost h = RawTcpHost.connect(new InetSocketAddress("127.0.0.1", port), false, false)) {
            return h.connectAdmin(nqn).status();
        }
    }

    private JsonNode listenAddresses(String nqn) throws Exception {
        return ok("nvmf_get_subsystems", "{\"nqn\":\"" + nqn + "\"}").get(0).get("listen_addresses");
    }

    @Test
    void aFlagSubsystemStaysOnTheStartListenersWhenOneIsAddedForAnother() throws Exception {
        stop();
        target = NvmeTarget.start(new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)),
                List.of(new SubsystemConfig(
                        FLAG, true, List.of(), List.of(NamespaceConfig.of(1, 1 << 20)), null, null)),
                1L << 30,
                0));
        server = new RpcServer(new Management(target)).listenUnix(socket);
        int startPort = target.boundAddresses().get(0).getPort();
        ok("nvmf_create_subsystem", "{\"nqn\":\"" + ONE + "\",\"allow_any_host\":true}");
        ok(
                "nvmf_subsystem_add_listener",
                listener(
                        ONE,
                        RpcServerTest.JSON.readTree(
                                "{\"trtype\":\"tcp\",\"adrfam\":\"IPv4\",\"traddr\":\"127.0.0.1\",\"trsvcid\":\"0\"}")));
        int onePort =
                Integer.parseInt(listenAddresses(ONE).get(0).get("trsvcid").asText());
        assertEquals(1, listenAddresses(FLAG).size(), "the flag subsystem keeps the start listener only");
        assertTrue(Status.isSuccess(connect(startPort, FLAG)));
        assertTrue(Status.is(connect(onePort, FLAG), Status.CONNECT_INVALID_HOST));
        assertTrue(Status.is(connect(startPort, ONE), Status.CONNECT_INVALID_HOST));
        assertTrue(Status.isSuccess(connect(onePort, ONE)));
        // the start listener added to ONE as well: both reachable there
        ok("nvmf_subsystem_add_listener", listener(ONE, listenAddresses(FLAG).get(0)));
        assertTrue(Status.isSuccess(connect(startPort, ONE)));
        assertEquals(2, target.listeners().size());

        // the discovery NQN added to ONE's own listener keeps it open when ONE leaves; removing it closes it
        JsonNode own = RpcServerTest.JSON.readTree(
                "{\"trtype\":\"tcp\",\"adrfam\":\"IPv4\",\"traddr\":\"127.0.0.1\",\"trsvcid\":\"" + onePort + "\"}");
        ok("nvmf_subsystem_add_listener", listener(DISCOVERY, own));
        ok("nvmf_subsystem_remove_listener", listener(ONE, own));
        assertTrue(Status.isSuccess(connect(onePort, DISCOVERY)), "open for discovery");
        ok("nvmf_subsystem_remove_listener", listener(DISCOVERY, own));
        fails("nvmf_subsystem_remove_listener", listener(DISCOVERY, own));
        assertThrows(IOException.class, () -> connect(onePort, DISCOVERY));
        // the listener the target started with stays open without subsystems: discovery still answers there
        ok(
                "nvmf_subsystem_remove_listener",
                listener(FLAG, listenAddresses(FLAG).get(0)));
        ok("nvmf_subsystem_remove_listener", listener(ONE, listenAddresses(ONE).get(0)));
        assertEquals(1, target.listeners().size());
        assertTrue(Status.isSuccess(connect(startPort, DISCOVERY)));
        assertTrue(Status.is(connect(startPort, FLAG), Status.CONNECT_INVALID_HOST));
    }

    @Test
    void aSubsystemIsReachableOnlyOnTheListenersAddedToIt() throws Exception {
        ok("bdev_malloc_create", "{\"name\":\"Malloc0\",\"num_blocks\":256,\"block_size\":4096}");
        for (String nqn : List.of(ONE, TWO)) {
            ok("nvmf_create_subsystem", "{\"nqn\":\"" + nqn + "\",\"allow_any_host\":true}");
            assertEquals(0, listenAddresses(nqn).size(), "a new subsystem is on no listener");
        }
        ok("nvmf_subsystem_add_ns", "{\"nqn\":\"" + ONE + "\",\"namespace\":{\"bdev_name\":\"Malloc0\"}}");
        ok(
                "nvmf_subsystem_add_listener",
                listener(
                        ONE,
                        RpcServerTest.JSON.readTree(
                                "{\"trtype\":\"tcp\",\"adrfam\":\"IPv4\",\"traddr\":\"127.0.0.1\",\"trsvcid\":\"0\"}")));
        JsonNode a = listenAddresses(ONE).get(0);
        int port = Integer.parseInt(a.get("trsvcid").asText());
        assertEquals(0, listenAddresses(TWO).size());
        assertEquals(
                0,
                ok("nvmf_subsystem_get_listeners", "{\"nqn\":\"" + TWO + "\"}").size());
        assertEquals(
                1,
                ok("nvmf_subsystem_get_listeners", "{\"nqn\":\"" + ONE + "\"}").size());
        assertEquals(
                1,
                ok("nvmf_get_subsystems", "{\"nqn\":\"nqn.2014-08.org.nvmexpress.discovery\"}")
                        .get(0)
                        .get("listen_addresses")
                        .size(),
                "the discovery subsystem is on every listener");

        // Connect: ONE on its listener; TWO refused there as SPDK refuses it (Connect Invalid Host, DNR)
        assertTrue(Status.isSuccess(connect(port, ONE)));
        int refused = connect(port, TWO);
        assertTrue(Status.is(refused, Status.CONNECT_INVALID_HOST) && Status.isDnr(refused), Status.toString(refused));
        assertTrue(Status.isSuccess(connect(port, "nqn.2014-08.org.nvmexpress.discovery")));

        // errors: TWO has no listener there (remove, ANA state); nothing changes
        fails("nvmf_subsystem_remove_listener", listener(TWO, a));
        fails(
                "nvmf_subsystem_listener_set_ana_state",
                "{\"nqn\":\"" + TWO + "\",\"listen_address\":" + a + ",\"ana_state\":\"inaccessible\"}");
        fails("nvmf_subsystem_add_listener", listener("nqn.2016-06.io.spdk:nope", a));

        // the same listener added to TWO too (already open: no new socket), twice is fine as in SPDK
        ok("nvmf_subsystem_add_listener", listener(TWO, a));
        ok("nvmf_subsystem_add_listener", listener(TWO, a));
        assertEquals(1, target.listeners().size());
        assertTrue(Status.isSuccess(connect(port, TWO)));

        // save_config lists each subsystem's listeners; a fresh target loads it into the same state
        JsonNode saved = ok("save_config", null);
        JsonNode subsystems = ok("nvmf_get_subsystems", null);
        ok("nvmf_subsystem_remove_listener", listener(ONE, a));
        assertEquals(0, listenAddresses(ONE).size());
        refused = connect(port, ONE);
        assertTrue(Status.is(refused, Status.CONNECT_INVALID_HOST), Status.toString(refused));
        assertTrue(Status.isSuccess(connect(port, TWO)), "the listener stays while TWO is on it");
        ok("nvmf_subsystem_remove_listener", listener(TWO, a));
        assertEquals(0, target.listeners().size(), "closed with its last subsystem");
        assertThrows(IOException.class, () -> connect(port, TWO));

        try (NvmeTarget other = NvmeTarget.start(new TargetConfig(List.of(), List.of(), 1L << 30, 0))) {
            Management m = new Management(other);
            m.call("load_config", saved);
            JsonNode loaded = m.call("nvmf_get_subsystems", null);
            assertEquals(subsystems.size(), loaded.size());
            for (int i = 0; i < loaded.size(); i++) {
                assertEquals(
                        subsystems.get(i).get("listen_addresses").size(),
                        loaded.get(i).get("listen_addresses").size(),
                        loaded.get(i).get("nqn").asText());
            }
            assertEquals(1, other.listeners().size(), "one socket for both subsystems");
        }
    }
}

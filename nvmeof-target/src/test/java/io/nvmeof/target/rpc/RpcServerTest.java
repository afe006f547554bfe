package io.nvmeof.target.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.TargetConfig;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JSON-RPC server over its real Unix socket: methods, errors, framing, save_config → load_config. */
class RpcServerTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String NQN = "nqn.2016-06.io.spdk:cnode1";

    @TempDir
    Path dir;

    NvmeTarget target;
    RpcServer server;
    Path socket;

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

    /** Sends raw bytes, reads one response object. */
    static JsonNode raw(Path socket, String request) throws Exception {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            OutputStream out = Channels.newOutputStream(ch);
            out.write(request.getBytes(StandardCharsets.UTF_8));
            out.flush();
            ch.shutdownOutput(); // a truncated request then ends in EOF, not in a wait
            InputStream in = Channels.newInputStream(ch);
            return JSON.readTree(JSON.createParser(in));
        }
    }

    static JsonNode call(Path socket, String method, String params) throws Exception {
        String req = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"" + method + "\""
                + (params == null ? "" : ",\"params\":" + params) + "}";
        JsonNode r = raw(socket, req);
        assertEquals(7, r.get("id").asInt(), r.toString());
        return r;
    }

    JsonNode ok(String method, String params) throws Exception {
        JsonNode r = call(socket, method, params);
        assertFalse(r.has("error"), () -> method + " failed: " + r);
        return r.get("result");
    }

    void fails(int code, String method, String params) throws Exception {
        JsonNode r = call(socket, method, params);
        assertTrue(r.has("error"), () -> method + " should fail: " + r);
        assertEquals(code, r.get("error").get("code").asInt(), r.toString());
        assertFalse(r.get("error").get("message").asText().isEmpty());
    }

    @Test
    void socketIsPrivate() throws Exception {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
    }

    @Test
    void generalMethodsAndProtocolErrors() throws Exception {
        assertTrue(ok("spdk_get_version", null).get("version").asText().contains("nvmeof-java"));
        assertTrue(ok("rpc_get_methods", null).toString().contains("nvmf_subsystem_add_ns"));
        assertTrue(ok("framework_wait_init", null).asBoolean());
        fails(RpcException.METHOD_NOT_FOUND, "no_such_method", null);
        fails(RpcException.INVALID_PARAMS, "framework_wait_init", "{\"x\":1}");
        JsonNode parse = raw(socket, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":");
        // the stream ended inside an object: a parse error (or nothing, if the server saw EOF first)
        assertTrue(parse == null || parse.get("error").get("code").asInt() == RpcException.PARSE_ERROR);
        JsonNode bad = raw(socket, "{\"id\":1,\"method\":\"spdk_get_version\"}");
        assertEquals(RpcException.INVALID_REQUEST, bad.get("error").get("code").asInt());
    }

    @Test
    void twoRequestsOnOneConnectionWithoutNewlines() throws Exception {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            OutputStream out = Channels.newOutputStream(ch);
            out.write(("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"spdk_get_version\"}"
                            + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"framework_wait_init\"}")
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            var parser = JSON.createParser(Channels.newInputStream(ch));
            assertEquals(1, JSON.<JsonNode>readTree(parser).get("id").asInt());
            parser.nextToken();
            assertEquals(2, JSON.<JsonNode>readTree(parser).get("id").asInt());
        }
    }

    @Test
    void bdevsSubsystemsNamespacesHostsListeners() throws Exception {
        assertEquals(
                "Malloc0",
                ok("bdev_malloc_create", "{\"name\":\"Malloc0\",\"num_blocks\":2048,\"block_size\":512}")
                        .asText());
        fails(RpcException.EEXIST, "bdev_malloc_create", "{\"name\":\"Malloc0\",\"num_blocks\":8,\"block_size\":512}");
        fails(
                RpcException.INVALID_PARAMS,
                "bdev_malloc_create",
                "{\"name\":\"M1\",\"num_blocks\":8,\"block_size\":520}");
        fails(RpcException.INVALID_PARAMS, "bdev_malloc_create", "{\"name\":\"M1\"}");
        fails(RpcException.INVALID_PARAMS, "bdev_malloc_create", "{\"name\":\"M1\",\"num_blocks\":\"x\"}");
        assertEquals(
                "Null0",
                ok("bdev_null_create", "{\"name\":\"Null0\",\"num_blocks\":2048,\"block_size\":4096}")
                        .asText());
        fails(RpcException.ENODEV, "bdev_get_bdevs", "{\"name\":\"nope\"}");
        fails(RpcException.ENODEV, "bdev_malloc_delete", "{\"name\":\"Null0\"}");
        assertEquals(2, ok("bdev_get_bdevs", null).size());

        assertTrue(ok("nvmf_create_transport", "{\"trtype\":\"TCP\",\"max_queue_depth\":64}")
                .asBoolean());
        fails(RpcException.INVALID_PARAMS, "nvmf_create_transport", "{\"trtype\":\"TCP\"}");
        fails(RpcException.INVALID_PARAMS, "nvmf_create_transport", "{\"trtype\":\"FC\"}");
        assertEquals("TCP", ok("nvmf_get_transports", null).get(0).get("trtype").asText());

        ok("nvmf_create_subsystem", "{\"nqn\":\"" + NQN + "\",\"serial_number\":\"abcdef\",\"model_number\":\"m\"}");
        fails(RpcException.INVALID_PARAMS, "nvmf_create_subsystem", "{\"nqn\":\"" + NQN + "\"}");
        fails(
                RpcException.INVALID_PARAMS,
                "nvmf_create_subsystem",
                "{\"nqn\":\"x\",\"serial_number\":\"" + "9".repeat(30) + "\"}");
        assertEquals(1, target.subsystems().size(), "a bad create changed nothing");

        assertEquals(
                1,
                ok("nvmf_subsystem_add_ns", "{\"nqn\":\"" + NQN + "\",\"namespace\":{\"bdev_name\":\"Malloc0\"}}")
                        .asInt());
        fails(
                RpcException.INVALID_PARAMS,
                "nvmf_subsystem_add_ns",
                "{\"nqn\":\"" + NQN + "\",\"namespace\":{\"bdev_name\":\"Malloc0\"}}");
        fails(
                RpcException.INVALID_PARAMS,
                "nvmf_subsystem_add_ns",
                "{\"nqn\":\"" + NQN + "\",\"namespace\":{\"bdev_name\":\"nope\"}}");
        fails(
                RpcException.INVALID_PARAMS,
                "nvmf_subsystem_add_ns",
                "{\"nqn\":\"nqn.x:none\",\"namespace\":{\"bdev_name\":\"Null0\"}}");
        assertEquals(
                5,
                ok(
                                "nvmf_subsystem_add_ns",
                                "{\"nqn\":\"" + NQN + "\",\"namespace\":{\"bdev_name\":\"Null0\",\"nsid\":5}}")
                        .asInt());
        assertEquals(2048L * 4096, target.subsystem(NQN).namespace(5).sizeBytes());
        ok("bdev_null_resize", "{\"name\":\"Null0\",\"new_size\":16}");
        assertEquals(16L << 20, target.subsystem(NQN).namespace(5).sizeBytes());
        fails(RpcException.ENODEV, "bdev_null_resize", "{\"name\":\"Malloc0\",\"new_size\":16}");
        assertTrue(ok("bdev_get_bdevs", "{\"name\":\"Null0\"}")
                .get(0)
                .get("claimed")
                .asBoolean());

        ok("nvmf_subsystem_add_host", "{\"nqn\":\"" + NQN + "\",\"host\":\"nqn.2016-06.io.spdk:host1\"}");
        fails(
                RpcException.INVALID_PARAMS,
                "nvmf_subsystem_add_host",
                "{\"nqn\":\"" + NQN + "\",\"host\":\"nqn.2016-06.io.spdk:host1\"}");
        ok("nvmf_subsystem_allow_any_host", "{\"nqn\":\"" + NQN + "\",\"allow_any_host\":false}");
        long gen = target.discoveryGeneration();
        ok(
                "nvmf_subsystem_add_listener",
                "{\"nqn\":\"" + NQN
                        + "\",\"listen_address\":{\"trtype\":\"tcp\",\"adrfam\":\"IPv4\",\"traddr\":\"127.0.0.1\",\"trsvcid\":\"0\"}}");
        assertTrue(target.discoveryGeneration() > gen, "GENCTR moved");
        JsonNode addr = ok("nvmf_subsystem_get_listeners", "{\"nqn\":\"" + NQN + "\"}")
                .get(0)
                .get("address");
        assertEquals(
                64,
                ok("nvmf_get_transports", null).get(0).get("max_queue_depth").asInt());
        String la = addr.toString();
        ok(
                "nvmf_subsystem_listener_set_ana_state",
                "{\"nqn\":\"" + NQN + "\",\"listen_address\":" + la + ",\"ana_state\":\"non_optimized\"}");
        assertEquals(
                "non_optimized",
                ok("nvmf_subsystem_get_listeners", "{\"nqn\":\"" + NQN + "\"}")
                        .get(0)
                        .get("ana_state")
                        .asText());
        fails(
                RpcException.INVALID_PARAMS,
                "nvmf_subsystem_listener_set_ana_state",
                "{\"nqn\":\"" + NQN + "\",\"listen_address\":" + la + ",\"ana_state\":\"sideways\"}");
        assertEquals(
                0,
                ok("nvmf_subsystem_get_controllers", "{\"nqn\":\"" + NQN + "\"}")
                        .size());
        assertEquals(
                0, ok("nvmf_subsystem_get_qpairs", "{\"nqn\":\"" + NQN + "\"}").size());
        assertEquals(1, ok("nvmf_get_stats", null).get("poll_groups").size());

        JsonNode subs = ok("nvmf_get_subsystems", null);
        assertEquals(2, subs.size());
        JsonNode s = subs.get(1);
        assertEquals(NQN, s.get("nqn").asText());
        assertEquals(
                "nqn.2016-06.io.spdk:host1", s.get("hosts").get(0).get("nqn").asText());
        assertEquals("Malloc0", s.get("namespaces").get(0).get("bdev_name").asText());

        // save_config, then a fresh target loads it and shows the same state
        JsonNode saved = ok("save_config", null);
        // SPDK's rpc.py builds save_config on the client from these two (keyring, bdev, nvmf)
        assertEquals(3, ok("framework_get_subsystems", null).size());
        assertEquals(
                saved.get("subsystems").get(2).get("config").toString(),
                ok("framework_get_config", "{\"name\":\"nvmf\",\"with_batches\":false}")
                        .toString());
        fails(RpcException.INVALID_PARAMS, "framework_get_config", "{\"name\":\"iscsi\"}");
        JsonNode bdevs = ok("bdev_get_bdevs", null);
        JsonNode subsystems = ok("nvmf_get_subsystems", null);
        ok("nvmf_subsystem_remove_listener", "{\"nqn\":\"" + NQN + "\",\"listen_address\":" + la + "}");
        fails(
                RpcException.INVALID_PARAMS,
                "nvmf_subsystem_remove_listener",
                "{\"nqn\":\"" + NQN + "\",\"listen_address\":" + la + "}");
        try (NvmeTarget other = NvmeTarget.start(new TargetConfig(List.of(), List.of(), 1L << 30, 0))) {
            Management m = new Management(other);
            m.call("load_config", saved);
            // compared as they travel (as text): an int and a long of the same value are different tree nodes
            assertEquals(bdevs.toString(), m.call("bdev_get_bdevs", null).toString());
            assertEquals(
                    subsystems.toString(), m.call("nvmf_get_subsystems", null).toString());
        }

        ok("nvmf_subsystem_remove_host", "{\"nqn\":\"" + NQN + "\",\"host\":\"nqn.2016-06.io.spdk:host1\"}");
        ok("nvmf_subsystem_remove_ns", "{\"nqn\":\"" + NQN + "\",\"nsid\":1}");
        fails(RpcException.INVALID_PARAMS, "nvmf_subsystem_remove_ns", "{\"nqn\":\"" + NQN + "\",\"nsid\":1}");
        assertFalse(ok("bdev_get_bdevs", "{\"name\":\"Malloc0\"}")
                .get(0)
                .get("claimed")
                .asBoolean());
        ok("bdev_null_delete", "{\"name\":\"Null0\"}");
        assertEquals(0, target.subsystem(NQN).namespaces().size(), "deleting a claimed bdev hot-removes it");
        ok("nvmf_delete_subsystem", "{\"nqn\":\"" + NQN + "\"}");
        fails(RpcException.INVALID_PARAMS, "nvmf_delete_subsystem", "{\"nqn\":\"" + NQN + "\"}");
        ok("bdev_malloc_delete", "{\"name\":\"Malloc0\"}");
        assertEquals(0, ok("bdev_get_bdevs", null).size());
    }

    @Test
    void loadConfigFailingHalfWayLeavesNothing() throws Exception {
        ObjectNode cfg = (ObjectNode) JSON.readTree("{\"subsystems\":[{\"subsystem\":\"bdev\",\"config\":["
                + "{\"method\":\"bdev_malloc_create\",\"params\":{\"name\":\"A\",\"num_blocks\":8,\"block_size\":512}}]},"
                + "{\"subsystem\":\"nvmf\",\"config\":[{\"method\":\"nvmf_create_subsystem\",\"params\":{\"nqn\":\""
                + NQN + "\"}},"
                + "{\"method\":\"nvmf_subsystem_add_ns\",\"params\":{\"nqn\":\"" + NQN
                + "\",\"namespace\":{\"bdev_name\":\"B\"}}}]}]}");
        fails(RpcException.INVALID_PARAMS, "load_config", cfg.toString());
        assertEquals(0, target.subsystems().size());
        assertEquals(0, ok("bdev_get_bdevs", null).size());
    }
}

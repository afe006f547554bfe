package io.nvmeof.target.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.TargetConfig;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drives the daemon's socket with the example requests of SPDK's own documentation, byte for byte as recorded in
 * {@code rpc/spdk-jsonrpc-examples.json}: the "Example request" / "Example response" blocks of {@code
 * doc/jsonrpc.md.jinja2} in spdk/spdk at commit 3230130e6a4114a97991d7e27cecd5ab64b696c3 (August 2026), one per
 * method we implement, extracted by a script without changes. Each request goes over the Unix socket as SPDK's
 * rpc.py would send it. Requests we serve must answer with the JSON type of SPDK's example result; the few that ask
 * for what this target does not have (a metadata block size, an RDMA address not on this machine, a DH-HMAC-CHAP
 * key, an NVMe bdev) must answer with a JSON-RPC error and change nothing.
 */
class SpdkDocExamplesTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** Replayed in this order (a sensible life cycle); the value is the error code expected, or null for success. */
    static final List<Object[]> ORDER = List.of(
            new Object[] {"framework_wait_init", null},
            new Object[] {"spdk_get_version", null},
            new Object[] {"rpc_get_methods", null},
            new Object[] {"bdev_malloc_create", null},
            new Object[] {"bdev_get_bdevs", null},
            new Object[] {"bdev_null_create", RpcException.INVALID_PARAMS}, // block_size 4104 with md_size 8
            new Object[] {"nvmf_create_transport", null},
            new Object[] {"nvmf_create_subsystem", null},
            new Object[] {"nvmf_get_subsystems", null},
            new Object[] {"nvmf_subsystem_add_host", RpcException.INVALID_PARAMS}, // dhchap_key
            new Object[] {"nvmf_subsystem_allow_any_host", null},
            new Object[] {"nvmf_subsystem_add_ns", RpcException.INVALID_PARAMS}, // bdev Nvme0n1, ptpl_file
            new Object[] {"nvmf_subsystem_add_listener", RpcException.INTERNAL_ERROR}, // 192.168.0.123 over RDMA
            new Object[] {"nvmf_subsystem_listener_set_ana_state", RpcException.INVALID_PARAMS}, // no such listener
            new Object[] {"nvmf_subsystem_get_controllers", null},
            new Object[] {"nvmf_subsystem_get_qpairs", null},
            new Object[] {"nvmf_subsystem_get_listeners", null},
            new Object[] {"nvmf_get_transports", null},
            new Object[] {"nvmf_get_stats", null},
            new Object[] {"nvmf_subsystem_remove_host", RpcException.INVALID_PARAMS}, // host1 was never added
            new Object[] {"nvmf_subsystem_remove_listener", RpcException.INVALID_PARAMS},
            new Object[] {"nvmf_subsystem_remove_ns", RpcException.INVALID_PARAMS}, // nsid 1 was never added
            new Object[] {"nvmf_delete_subsystem", null},
            new Object[] {"bdev_malloc_delete", null},
            new Object[] {"bdev_null_delete", RpcException.ENODEV},
            new Object[] {"bdev_null_resize", RpcException.ENODEV});

    @Test
    void spdkDocumentationRequests() throws Exception {
        JsonNode examples;
        try (InputStream in = getClass().getResourceAsStream("/rpc/spdk-jsonrpc-examples.json")) {
            examples = JSON.readTree(in);
        }
        Map<String, JsonNode> byMethod = new HashMap<>();
        examples.forEach(e -> byMethod.put(e.get("method").asText(), e));
        assertEquals(ORDER.size(), byMethod.size(), "every recorded example is replayed");
        Path socket = dir.resolve("rpc.sock");
        try (NvmeTarget target = NvmeTarget.start(new TargetConfig(List.of(), List.of(), 1L << 30, 0));
                RpcServer server = new RpcServer(new Management(target)).listenUnix(socket)) {
            for (Object[] step : ORDER) {
                String method = (String) step[0];
                JsonNode example = byMethod.get(method);
                assertNotNull(example, method);
                String before = state(socket);
                JsonNode response =
                        RpcServerTest.raw(socket, example.get("request").toString());
                assertEquals(example.get("request").get("id"), response.get("id"), method);
                if (step[1] == null) {
                    assertTrue(response.has("result"), () -> method + ": " + response);
                    JsonNode documented = example.get("response") == null
                            ? null
                            : example.get("response").get("result");
                    if (documented != null) {
                        assertEquals(
                                documented.getNodeType(), response.get("result").getNodeType(), method);
                    }
                } else {
                    assertTrue(response.has("error"), () -> method + " should fail: " + response);
                    assertEquals(step[1], response.get("error").get("code").asInt(), response::toString);
                    assertEquals(before, state(socket), method + " failed but changed the state");
                }
            }
        }
    }

    private static String state(Path socket) throws Exception {
        return RpcServerTest.call(socket, "save_config", null).get("result").toString();
    }
}

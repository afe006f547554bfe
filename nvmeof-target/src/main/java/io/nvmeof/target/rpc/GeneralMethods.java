package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Set;

/** spdk_get_version, rpc_get_methods and framework_wait_init. */
final class GeneralMethods {
    /** The SPDK release whose RPC shapes we follow (doc/jsonrpc.md of spdk/spdk at 3230130e, August 2026). */
    static final String VERSION = "nvmeof-java 0.1.0 (SPDK RPC v24.09 subset)";

    private GeneralMethods() {}

    static JsonNode version() {
        ObjectNode r = Management.JSON.createObjectNode();
        r.put("version", VERSION);
        ObjectNode f = r.putObject("fields");
        f.put("major", 0);
        f.put("minor", 1);
        f.put("patch", 0);
        f.put("suffix", "");
        return r;
    }

    static JsonNode methods(Management m, JsonNode params) throws RpcException {
        Params p = Params.of("rpc_get_methods", params, Set.of("current", "include_aliases"));
        p.bool("current", false);
        p.bool("include_aliases", false);
        ArrayNode out = Management.JSON.createArrayNode();
        m.methodNames().forEach(out::add);
        return out;
    }

    /** The target is initialised before the socket opens, so this answers at once. */
    static JsonNode waitInit(JsonNode params) throws RpcException {
        Params.of("framework_wait_init", params, Set.of());
        return BooleanNode.TRUE;
    }
}

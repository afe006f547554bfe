package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code nvmeof-rpc}: calls one JSON-RPC method of a running target and prints the result as JSON.
 * {@code --key value} pairs become the params ({@code -} in a key is {@code _}; a dotted key makes a nested object;
 * a value that parses as JSON (a number, true, an object) is taken as such, else as a string).
 */
@Command(
        name = "nvmeof-rpc",
        mixinStandardHelpOptions = true,
        version = "nvmeof-rpc 0.1.0",
        usageHelpAutoWidth = true,
        description = {
            "Calls a JSON-RPC method of nvmeof-target (SPDK's method names and parameters).",
            "",
            "Examples:",
            "  nvmeof-rpc bdev_malloc_create --name Malloc0 --num_blocks 262144 --block_size 4096",
            "  nvmeof-rpc nvmf_create_subsystem --nqn nqn.2016-06.io.spdk:cnode1 --allow_any_host true",
            "  nvmeof-rpc nvmf_subsystem_add_ns --nqn nqn.2016-06.io.spdk:cnode1 --namespace.bdev_name Malloc0",
            "  nvmeof-rpc nvmf_subsystem_add_listener --nqn nqn.2016-06.io.spdk:cnode1 "
                    + "-j '{\"listen_address\":{\"trtype\":\"TCP\",\"traddr\":\"0.0.0.0\",\"trsvcid\":\"4420\"}}'",
            "  echo '{\"name\":\"Malloc0\"}' | nvmeof-rpc bdev_get_bdevs -j -"
        },
        footerHeading = "%nMethods (the target's rpc_get_methods is authoritative):%n",
        footer = {
            "  spdk_get_version rpc_get_methods framework_wait_init",
            "  bdev_malloc_create bdev_malloc_delete bdev_null_create bdev_null_delete bdev_null_resize bdev_get_bdevs",
            "  nvmf_create_transport nvmf_get_transports nvmf_create_subsystem nvmf_delete_subsystem nvmf_get_subsystems",
            "  nvmf_subsystem_add_ns nvmf_subsystem_remove_ns nvmf_subsystem_add_host nvmf_subsystem_remove_host",
            "  nvmf_subsystem_allow_any_host nvmf_subsystem_add_listener nvmf_subsystem_remove_listener",
            "  nvmf_subsystem_listener_set_ana_state nvmf_subsystem_get_controllers nvmf_subsystem_get_qpairs",
            "  nvmf_subsystem_get_listeners nvmf_get_stats save_config load_config framework_get_subsystems",
            "  framework_get_config"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:JSON-RPC error or no connection", "2:bad arguments"})
public final class RpcCli implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = {"-s", "--socket"},
            paramLabel = "SOCKET",
            description = "The target's RPC Unix socket (default ${DEFAULT-VALUE}).")
    Path socket = Path.of("/var/tmp/nvmeof-target.sock");

    @Option(
            names = {"-j", "--json"},
            paramLabel = "JSON",
            description = "Params as a JSON object, or - to read it from stdin (merged with --key value pairs).")
    String json;

    @Option(names = "--list", description = "List the methods the target offers (rpc_get_methods).")
    boolean list;

    @Parameters(
            index = "0",
            arity = "0..1",
            paramLabel = "METHOD",
            description = "The method, e.g. nvmf_get_subsystems.")
    String method;

    @Parameters(index = "1..*", paramLabel = "--key value", description = "Params as --key value pairs.")
    List<String> pairs = new ArrayList<>();

    public static void main(String[] args) {
        System.exit(run(args));
    }

    public static int run(String... args) {
        return run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    }

    /** Runs the CLI with its output and errors going to {@code out} and {@code err}; returns the exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cl = new CommandLine(new RpcCli());
        cl.setUnmatchedOptionsArePositionalParams(true);
        cl.setOut(out);
        cl.setErr(err);
        return cl.execute(args);
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (list) {
            method = "rpc_get_methods";
        }
        if (method == null) {
            err.println("nvmeof-rpc: name a METHOD (--list shows them)");
            return 2;
        }
        ObjectNode params;
        try {
            params = params();
        } catch (IllegalArgumentException e) {
            err.println("nvmeof-rpc: " + e.getMessage());
            return 2;
        }
        try (RpcClient client = RpcClient.unix(socket)) {
            JsonNode result = client.call(method, params.isEmpty() ? null : params);
            out.println(Management.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(result));
            return 0;
        } catch (RpcException e) {
            err.println("nvmeof-rpc: " + method + ": error " + e.code() + ": " + e.getMessage());
            return 1;
        } catch (IOException e) {
            err.println("nvmeof-rpc: " + e.getMessage());
            return 1;
        }
    }

    ObjectNode params() throws IOException {
        ObjectNode params = Management.JSON.createObjectNode();
        if (json != null) {
            String text = json.equals("-") ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8) : json;
            JsonNode n;
            try {
                n = Management.JSON.readTree(text);
            } catch (IOException e) {
                throw new IllegalArgumentException("-j is not JSON: " + e.getMessage());
            }
            if (n == null || !n.isObject()) {
                throw new IllegalArgumentException("-j must be a JSON object");
            }
            params.setAll((ObjectNode) n);
        }
        for (int i = 0; i < pairs.size(); i += 2) {
            String key = pairs.get(i);
            if (!key.startsWith("--") || key.length() < 3) {
                throw new IllegalArgumentException("expected --key value, not '" + key + "'");
            }
            if (i + 1 >= pairs.size()) {
                throw new IllegalArgumentException(key + " needs a value");
            }
            String[] path = key.substring(2).replace('-', '_').split("\\.");
            ObjectNode at = params;
            for (int k = 0; k < path.length - 1; k++) {
                at = at.has(path[k]) && at.get(path[k]).isObject()
                        ? (ObjectNode) at.get(path[k])
                        : at.putObject(path[k]);
            }
            at.set(path[path.length - 1], value(pairs.get(i + 1)));
        }
        return params;
    }

    private static JsonNode value(String text) {
        try {
            JsonNode n = Management.JSON.readTree(text);
            if (n != null && !n.isMissingNode() && !n.isTextual()) {
                return n;
            }
        } catch (IOException notJson) {
            // a plain string
        }
        return Management.JSON.getNodeFactory().textNode(text);
    }
}

package io.nvmeof.target.rpc;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/**
 * A JSON-RPC 2.0 client for the target's socket (as SPDK's rpc.py): one connection, requests one at a time.
 *
 * <pre>
 *   try (RpcClient c = RpcClient.unix(Path.of("/var/tmp/nvmeof-target.sock"))) {
 *       JsonNode version = c.call("spdk_get_version", null);
 *   }
 * </pre>
 */
public final class RpcClient implements AutoCloseable {
    private final SocketChannel channel;
    private final OutputStream out;
    private final JsonParser in;
    private int nextId = 1;

    private RpcClient(SocketChannel channel) throws IOException {
        this.channel = channel;
        this.out = Channels.newOutputStream(channel);
        // A Reader, not the stream: Jackson reads the first bytes of a stream at once to detect its encoding, which
        // would wait for a response before the first request is sent.
        this.in = Management.JSON.createParser(new java.io.InputStreamReader(
                Channels.newInputStream(channel), java.nio.charset.StandardCharsets.UTF_8));
    }

    public static RpcClient unix(Path socket) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            ch.close();
            throw new IOException("cannot connect to " + socket + ": " + e.getMessage(), e);
        }
        return new RpcClient(ch);
    }

    public static RpcClient tcp(InetSocketAddress address) throws IOException {
        return new RpcClient(SocketChannel.open(address));
    }

    /**
     * Calls {@code method}; returns its result.
     *
     * @throws RpcException with the server's code and message for a JSON-RPC error
     * @throws IOException  if the connection fails
     */
    public JsonNode call(String method, JsonNode params) throws IOException, RpcException {
        ObjectNode req = Management.JSON.createObjectNode();
        req.put("jsonrpc", "2.0");
        req.put("method", method);
        int id = nextId++;
        req.put("id", id);
        if (params != null && !params.isNull()) {
            req.set("params", params);
        }
        out.write(Management.JSON.writeValueAsBytes(req));
        out.flush();
        if (in.nextToken() == null) {
            throw new IOException("the server closed the connection");
        }
        JsonNode response = Management.JSON.readTree(in);
        JsonNode error = response.get("error");
        if (error != null && !error.isNull()) {
            throw new RpcException(
                    error.path("code").asInt(), error.path("message").asText());
        }
        return response.get("result");
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}

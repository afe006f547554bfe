package io.nvmeof.target.rpc;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The JSON-RPC 2.0 server: a Unix domain socket (mode 0600) and optionally a TCP socket, one thread per connection.
 * Framing is SPDK's: a request is one JSON object on the stream, read until it parses; newlines between objects are
 * allowed. Each response is one JSON object followed by a newline. Requests run one at a time ({@link Management}).
 */
public final class RpcServer implements AutoCloseable {
    private static final Logger LOG = System.getLogger("io.nvmeof.target.rpc");

    private final Management management;
    private final List<ServerSocketChannel> servers = new CopyOnWriteArrayList<>();
    private final List<SocketChannel> clients = new CopyOnWriteArrayList<>();
    private Path socketPath;
    private volatile boolean closed;

    public RpcServer(Management management) {
        this.management = management;
    }

    /**
     * Listens on the Unix socket {@code path}. A socket file left behind by a process that is gone is removed; one that
     * answers is an error.
     *
     * @throws IOException if something answers at {@code path} or it cannot be bound
     */
    public RpcServer listenUnix(Path path) throws IOException {
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(path);
        if (Files.exists(path)) {
            try (SocketChannel probe = SocketChannel.open(address)) {
                throw new IOException("RPC socket " + path + " is in use by another process");
            } catch (IOException refused) {
                if (refused.getMessage() != null && refused.getMessage().contains("in use by another")) {
                    throw refused;
                }
                Files.delete(path); // stale: nothing answers
            }
        }
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(address);
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
        socketPath = path;
        start(server, "unix:" + path);
        return this;
    }

    /** Listens on TCP {@code address} (the daemon allows loopback only unless told otherwise). */
    public RpcServer listenTcp(InetSocketAddress address) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(address);
        start(server, "tcp:" + server.getLocalAddress());
        return this;
    }

    /** The bound TCP address, or null. */
    public InetSocketAddress tcpAddress() throws IOException {
        for (ServerSocketChannel s : servers) {
            if (s.getLocalAddress() instanceof InetSocketAddress a) {
                return a;
            }
        }
        return null;
    }

    private void start(ServerSocketChannel server, String name) {
        servers.add(server);
        Thread t = new Thread(() -> acceptLoop(server), "nvmeof-rpc-accept " + name);
        t.setDaemon(true);
        t.start();
        LOG.log(Level.INFO, "JSON-RPC listening on " + name);
    }

    private void acceptLoop(ServerSocketChannel server) {
        while (!closed) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(Level.WARNING, "JSON-RPC accept failed: " + e.getMessage());
                }
                return;
            }
            clients.add(client);
            Thread t = new Thread(() -> serve(client), "nvmeof-rpc-client");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(SocketChannel client) {
        try (client;
                InputStream in = Channels.newInputStream(client);
                OutputStream out = Channels.newOutputStream(client);
                JsonParser parser = Management.JSON.createParser(in)) {
            while (true) {
                JsonNode request;
                try {
                    JsonToken token = parser.nextToken();
                    if (token == null) {
                        return; // the client closed its end
                    }
                    request = Management.JSON.readTree(parser);
                } catch (JsonProcessingException e) {
                    write(out, error(null, RpcException.PARSE_ERROR, "Parse error: " + e.getOriginalMessage()));
                    return; // the stream cannot be resynchronised
                }
                write(out, handle(request));
            }
        } catch (IOException e) {
            if (!closed) {
                LOG.log(Level.DEBUG, "JSON-RPC connection ended: " + e.getMessage());
            }
        } finally {
            clients.remove(client);
        }
    }

    /** One request object in, one response object out (null for a notification, which has no id). */
    JsonNode handle(JsonNode request) {
        if (!request.isObject()) {
            return error(null, RpcException.INVALID_REQUEST, "Invalid request: not an object");
        }
        JsonNode id = request.get("id");
        JsonNode method = request.get("method");
        if (!"2.0".equals(request.path("jsonrpc").asText()) || method == null || !method.isTextual()) {
            return error(id, RpcException.INVALID_REQUEST, "Invalid request: needs \"jsonrpc\":\"2.0\" and a method");
        }
        ObjectNode response;
        try {
            JsonNode result = management.call(method.asText(), request.get("params"));
            response = Management.JSON.createObjectNode();
            response.put("jsonrpc", "2.0");
            response.set("id", id);
            response.set("result", result);
        } catch (RpcException e) {
            response = error(id, e.code(), e.getMessage());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "JSON-RPC " + method.asText() + " failed", e);
            response = error(id, RpcException.INTERNAL_ERROR, "Internal error: " + e);
        }
        return id == null ? null : response;
    }

    private static ObjectNode error(JsonNode id, int code, String message) {
        ObjectNode r = Management.JSON.createObjectNode();
        r.put("jsonrpc", "2.0");
        r.set("id", id);
        r.putObject("error").put("code", code).put("message", message);
        return r;
    }

    private static void write(OutputStream out, JsonNode response) throws IOException {
        if (response == null) {
            return;
        }
        byte[] bytes = Management.JSON.writeValueAsBytes(response);
        out.write(bytes);
        out.write('\n');
        out.flush();
    }

    /** Closes the sockets, ends the connections and removes the socket file. */
    @Override
    public void close() {
        closed = true;
        for (ServerSocketChannel s : servers) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        for (SocketChannel c : clients) {
            try {
                c.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        if (socketPath != null) {
            try {
                Files.deleteIfExists(socketPath);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "cannot remove " + socketPath + ": " + e.getMessage());
            }
        }
    }
}

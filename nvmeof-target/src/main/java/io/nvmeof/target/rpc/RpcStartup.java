package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.target.NvmeTarget;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;

/** What the daemon does with its RPC flags: replay an SPDK-shape config, then open the RPC sockets. */
public final class RpcStartup {
    private RpcStartup() {}

    /**
     * Loads {@code spdkConfig} (if not null) into {@code target}, then serves JSON-RPC unless {@code noRpc}. With the
     * default socket path in use by another daemon, it goes on without the Unix socket and says so; a socket path
     * given explicitly that is in use is an error.
     *
     * @return the server, or null with {@code noRpc}
     * @throws IllegalArgumentException for a bad config or --rpc-listen
     * @throws IOException              if a socket cannot be opened
     */
    public static RpcServer start(
            NvmeTarget target,
            JsonNode spdkConfig,
            boolean noRpc,
            Path socket,
            String defaultSocket,
            String tcpListen,
            boolean allowRemote,
            PrintWriter out)
            throws IOException {
        Management management = new Management(target);
        if (spdkConfig != null) {
            try {
                management.call("load_config", spdkConfig);
            } catch (RpcException e) {
                throw new IllegalArgumentException("config: " + e.getMessage());
            }
        }
        if (noRpc) {
            return null;
        }
        InetSocketAddress tcp = tcpListen == null ? null : tcpAddress(tcpListen, allowRemote);
        RpcServer server = new RpcServer(management);
        try {
            Path path = socket != null ? socket : Path.of(defaultSocket);
            try {
                server.listenUnix(path);
                out.printf("JSON-RPC on %s%n", path);
            } catch (IOException e) {
                if (socket != null) {
                    throw e;
                }
                out.printf("no JSON-RPC on the default socket: %s (use --rpc-socket PATH)%n", e.getMessage());
            }
            if (tcp != null) {
                server.listenTcp(tcp);
                out.printf("JSON-RPC on tcp %s%n", server.tcpAddress());
            }
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /**
     * Parses {@code --rpc-listen ADDR:PORT}; a non-loopback address needs {@code allowRemote}.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static InetSocketAddress tcpAddress(String text, boolean allowRemote) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("--rpc-listen must be ADDR:PORT: " + text);
        }
        String host = text.substring(0, colon).replace("[", "").replace("]", "");
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--rpc-listen port must be a number: " + text);
        }
        InetAddress address;
        try {
            if (!host.matches("[0-9a-fA-F:.]+")) {
                throw new IOException("not an IP address");
            }
            address = InetAddress.getByName(host);
        } catch (IOException e) {
            throw new IllegalArgumentException("--rpc-listen address must be an IP address: " + host);
        }
        if (!address.isLoopbackAddress() && !allowRemote) {
            throw new IllegalArgumentException(
                    "--rpc-listen " + text + " is not a loopback address: add --rpc-allow-remote to allow it");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--rpc-listen port out of range: " + port);
        }
        return new InetSocketAddress(address, port);
    }
}

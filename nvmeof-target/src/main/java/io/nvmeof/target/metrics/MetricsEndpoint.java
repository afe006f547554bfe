package io.nvmeof.target.metrics;

import io.nvmeof.target.NvmeTarget;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The Prometheus endpoint of a target ({@code --metrics ADDR:PORT}): HTTP GET {@code /metrics} in the text exposition
 * format, served by the Prometheus client's exporter on the JDK's HTTP server, with its own registry holding only
 * {@link PrometheusCollector}. Off unless asked for; an address that is not loopback is refused unless the caller says
 * so explicitly (the daemon passes that only for an address given on the command line or in the config file).
 */
public final class MetricsEndpoint implements AutoCloseable {
    private final HTTPServer server;
    private final InetSocketAddress address;

    private MetricsEndpoint(HTTPServer server, InetSocketAddress address) {
        this.server = server;
        this.address = address;
    }

    /**
     * Serves {@code target}'s metrics on {@code host:port} (port 0: any free port).
     *
     * @param allowNonLoopback false refuses an address that is not a loopback address
     * @throws IllegalArgumentException if the address does not resolve, or is not loopback and that is not allowed
     * @throws IOException if the port cannot be bound
     */
    public static MetricsEndpoint start(NvmeTarget target, String host, int port, boolean allowNonLoopback)
            throws IOException {
        InetAddress addr;
        try {
            addr = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("metrics address " + host + " does not resolve");
        }
        if (!addr.isLoopbackAddress() && !allowNonLoopback) {
            throw new IllegalArgumentException(
                    "metrics address " + host + " is not a loopback address; serving metrics beyond this machine must"
                            + " be asked for explicitly");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("metrics port " + port + " is not 0..65535");
        }
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(new PrometheusCollector(target));
        HTTPServer server = HTTPServer.builder()
                .inetAddress(addr)
                .port(port)
                .registry(registry)
                .buildAndStart();
        return new MetricsEndpoint(server, new InetSocketAddress(addr, server.getPort()));
    }

    /** The address served (with the actual port). */
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public void close() {
        server.close();
    }
}

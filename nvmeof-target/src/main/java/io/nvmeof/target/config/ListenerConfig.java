package io.nvmeof.target.config;

import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.tls.SecureChannel;

/**
 * One listening port.
 *
 * @param transport         "tcp" (or "rdma" once that transport exists)
 * @param address           IP address to bind, e.g. 0.0.0.0 or 127.0.0.1
 * @param port              port, 0 for any free one (4420 by convention)
 * @param maxQueueSize      largest I/O queue a host may connect (CAP.MQES + 1)
 * @param inCapsuleDataSize in-capsule data bytes accepted on I/O queues
 * @param ioMode            the transport's event-loop engine and busy polling (null: {@link IoMode#DEFAULT})
 * @param secureChannel     TLS 1.3 (NVMe/TCP only): none, allowed or required (null: none)
 */
public record ListenerConfig(
        String transport,
        String address,
        int port,
        int maxQueueSize,
        int inCapsuleDataSize,
        IoMode ioMode,
        SecureChannel secureChannel) {
    public static final int DEFAULT_PORT = 4420;

    public ListenerConfig(
            String transport, String address, int port, int maxQueueSize, int inCapsuleDataSize, IoMode ioMode) {
        this(transport, address, port, maxQueueSize, inCapsuleDataSize, ioMode, SecureChannel.NONE);
    }

    public ListenerConfig(String transport, String address, int port, int maxQueueSize, int inCapsuleDataSize) {
        this(transport, address, port, maxQueueSize, inCapsuleDataSize, IoMode.DEFAULT);
    }

    public ListenerConfig {
        ioMode = ioMode == null ? IoMode.DEFAULT : ioMode;
        secureChannel = secureChannel == null ? SecureChannel.NONE : secureChannel;
        if (transport == null || transport.isBlank()) {
            throw new IllegalArgumentException("a listener needs a transport (tcp)");
        }
        if (address == null || address.isBlank()) {
            throw new IllegalArgumentException("a listener needs an address (e.g. 0.0.0.0)");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535: " + port);
        }
        if (secureChannel.tls() && !"tcp".equals(transport)) {
            throw new IllegalArgumentException("TLS is defined for NVMe/TCP only, not " + transport);
        }
    }

    /**
     * Parses {@code tcp://0.0.0.0:4420} (the port defaults to 4420; IPv6 as {@code tcp://[::1]:4420}), optionally
     * followed by {@code ?tls=required} or {@code ?tls=allowed} (TLS 1.3 with PSKs; {@code ?tls=none} is the default).
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static ListenerConfig parse(String uri, int maxQueueSize, int inCapsuleDataSize) {
        SecureChannel sc = SecureChannel.NONE;
        int q = uri.indexOf('?');
        if (q >= 0) {
            String query = uri.substring(q + 1);
            uri = uri.substring(0, q);
            if (!query.startsWith("tls=")) {
                throw new IllegalArgumentException(
                        "a listen address takes one option, ?tls=required|allowed|none, not '" + query + "'");
            }
            sc = SecureChannel.ofConfigName(query.substring(4));
        }
        return parseAddress(uri, maxQueueSize, inCapsuleDataSize).withSecureChannel(sc);
    }

    private static ListenerConfig parseAddress(String uri, int maxQueueSize, int inCapsuleDataSize) {
        int sep = uri.indexOf("://");
        if (sep <= 0) {
            throw new IllegalArgumentException("a listen address looks like tcp://0.0.0.0:4420, not '" + uri + "'");
        }
        String transport = uri.substring(0, sep);
        String rest = uri.substring(sep + 3);
        if (rest.endsWith("/")) {
            rest = rest.substring(0, rest.length() - 1);
        }
        String host;
        int port = DEFAULT_PORT;
        if (rest.startsWith("[")) {
            int close = rest.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("unterminated IPv6 address in '" + uri + "'");
            }
            host = rest.substring(1, close);
            String tail = rest.substring(close + 1);
            if (!tail.isEmpty()) {
                if (!tail.startsWith(":")) {
                    throw new IllegalArgumentException("bad listen address '" + uri + "'");
                }
                port = parsePort(tail.substring(1), uri);
            }
        } else {
            int colon = rest.lastIndexOf(':');
            if (colon >= 0) {
                host = rest.substring(0, colon);
                port = parsePort(rest.substring(colon + 1), uri);
            } else {
                host = rest;
            }
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("no address in '" + uri + "' (use e.g. tcp://0.0.0.0:4420)");
        }
        return new ListenerConfig(transport, host, port, maxQueueSize, inCapsuleDataSize);
    }

    /** This listener with another I/O mode. */
    public ListenerConfig withIoMode(IoMode mode) {
        return new ListenerConfig(transport, address, port, maxQueueSize, inCapsuleDataSize, mode, secureChannel);
    }

    /** This listener with TLS none, allowed or required. */
    public ListenerConfig withSecureChannel(SecureChannel sc) {
        return new ListenerConfig(transport, address, port, maxQueueSize, inCapsuleDataSize, ioMode, sc);
    }

    private static int parsePort(String text, String uri) {
        try {
            int p = Integer.parseInt(text);
            if (p < 0 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad port '" + text + "' in '" + uri + "'");
        }
    }
}

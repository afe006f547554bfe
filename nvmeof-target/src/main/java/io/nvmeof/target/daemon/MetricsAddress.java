package io.nvmeof.target.daemon;

/**
 * The value of {@code --metrics}: {@code ADDR:PORT}, {@code [IPv6]:PORT} or a bare {@code PORT} (loopback,
 * 127.0.0.1).
 */
record MetricsAddress(String host, int port) {
    static MetricsAddress parse(String spec) {
        String s = spec.trim();
        String host = "127.0.0.1";
        String port = s;
        int colon = s.lastIndexOf(':');
        if (colon >= 0) {
            host = s.substring(0, colon);
            port = s.substring(colon + 1);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (host.isEmpty()) {
                throw new IllegalArgumentException(
                        "--metrics " + spec + ": the address is empty (e.g. 127.0.0.1:9464)");
            }
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--metrics " + spec + ": the port '" + port + "' is not a number");
        }
        if (p < 0 || p > 65535) {
            throw new IllegalArgumentException("--metrics " + spec + ": the port must be 0..65535");
        }
        return new MetricsAddress(host, p);
    }
}

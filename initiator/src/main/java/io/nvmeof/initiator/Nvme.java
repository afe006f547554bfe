package io.nvmeof.initiator;

/**
 * Entry point of the initiator: connect to an NVMe-oF controller, or read a discovery log.
 *
 * <pre>{@code
 * try (Controller ctrl = Nvme.connect("nvme+tcp://192.0.2.10:4420/nqn.2024-01.io.nvmeof:disk1")) {
 *     Namespace ns = ctrl.namespace();
 *     ByteBuffer buf = ByteBuffer.allocateDirect(ns.blockSize());
 *     ns.write(0, 1, buf);
 *     ns.read(0, 1, buf);
 * }
 * }</pre>
 * The transport is found by the URI's scheme ({@code nvme+tcp} → the "tcp" transport) through
 * {@link io.nvmeof.core.spi.Transport#find}, so the transport jar only needs to be on the class path.
 */
public final class Nvme {
    private Nvme() {}

    /**
     * Connects to the controller {@code uri} names (see {@link NvmeUri}) and brings it up.
     *
     * @throws IllegalArgumentException if the URI is malformed
     * @throws NvmeTransportException   if the controller cannot be reached
     * @throws NvmeStatusException      if it refuses the connection (e.g. Connect Invalid Host)
     * @throws NvmeException            if it fails a host check during bring-up
     */
    public static Controller connect(String uri) throws NvmeException {
        return connect(NvmeUri.parse(uri), ConnectOptions.defaults());
    }

    /** {@link #connect(String)} with a parsed URI and options. */
    public static Controller connect(NvmeUri uri, ConnectOptions options) throws NvmeException {
        return Controller.open(uri, options == null ? ConnectOptions.defaults() : options);
    }

    /** Connects to a subsystem from a discovery log entry, with the options of {@code discoveryUri}. */
    public static Controller connect(NvmeUri discoveryUri, DiscoveryEntry entry, ConnectOptions options)
            throws NvmeException {
        if (!entry.isNvmSubsystem()) {
            throw new IllegalArgumentException(
                    "entry for " + entry.subnqn() + " is a " + entry.subtypeName() + ", not an NVM subsystem");
        }
        return connect(discoveryUri.forEntry(entry), options);
    }

    /**
     * Reads the discovery log of the controller {@code uri} names (its NQN is ignored: the well-known discovery NQN is
     * used, with KATO 0 unless the URI gives one), then disconnects (nvmeof-protocol.md §7.2).
     */
    public static DiscoveryLog discover(String uri) throws NvmeException {
        return discover(NvmeUri.parse(uri), ConnectOptions.defaults());
    }

    /** {@link #discover(String)} with a parsed URI and options. */
    public static DiscoveryLog discover(NvmeUri uri, ConnectOptions options) throws NvmeException {
        NvmeUri d = uri.isDiscovery() ? uri : uri.withSubsystem(null);
        try (Controller c = connect(d, options)) {
            return c.discoveryLog();
        }
    }
}

package io.nvmeof.initiator;

import io.nvmeof.core.command.Nqn;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The address of an NVMe-oF controller, with the connection options a host chooses:
 *
 * <pre>
 *   nvme+tcp://192.0.2.10:4420/nqn.2024-01.io.nvmeof:disk1?nsid=1&amp;queues=4&amp;depth=128&amp;digest=header,data
 *   nvme+tcp://[fe80::1]/nqn.2024-01.io.nvmeof:disk1          (IPv6 in brackets, port 4420)
 *   nvme+tcp://192.0.2.10:8009                                 (no NQN: the discovery controller)
 *   nvme+tcp://192.0.2.10:4420,192.0.2.11:4420/nqn.2024-01.io.nvmeof:disk1?iopolicy=round-robin
 *                                                              (several addresses: one subsystem over several paths)
 * </pre>
 *
 * <p>Several comma-separated addresses name the controllers of one subsystem reached over several paths, for
 * {@code io.nvmeof.initiator.multipath.MultipathNamespace}; {@link #paths()} gives one URI per address, with the same
 * options. {@link Nvme#connect} takes a URI with one address only.
 *
 * <table>
 *   <caption>Query parameters</caption>
 *   <tr><th>name</th><th>meaning</th><th>default</th></tr>
 *   <tr><td>nsid</td><td>the namespace {@link Controller#namespace()} returns</td><td>the first active one</td></tr>
 *   <tr><td>queues</td><td>I/O queues (one connection each), 1..128</td><td>min(4, CPUs)</td></tr>
 *   <tr><td>depth</td><td>entries per I/O queue, 2..1024; clamped to CAP.MQES+1 and MAXCMD</td><td>128</td></tr>
 *   <tr><td>digest</td><td>{@code header}, {@code data}, {@code header,data} or {@code none} (NVMe/TCP digests, nvmeof-protocol.md §5.8)</td><td>none</td></tr>
 *   <tr><td>hostnqn</td><td>the host NQN</td><td>{@link HostIdentity#defaultHostNqn()}</td></tr>
 *   <tr><td>kato</td><td>keep-alive timeout ({@code 30000}, {@code 30000ms}, {@code 30s}); 0 disables</td>
 *       <td>5 s; 0 for discovery controllers (nvmeof-protocol.md §3.7)</td></tr>
 *   <tr><td>keep_alive_tmo</td><td>the same in seconds, as Linux names it ({@code 5}, or {@code 500ms})</td>
 *       <td>5 s</td></tr>
 *   <tr><td>reconnect_delay</td><td>seconds between reconnect attempts after the connection is lost</td><td>10</td></tr>
 *   <tr><td>ctrl_loss_tmo</td><td>seconds to keep reconnecting before the controller is lost; -1: for ever; 0: no
 *       reconnect</td><td>600</td></tr>
 *   <tr><td>fast_io_fail_tmo</td><td>seconds of reconnecting after which waiting commands fail; -1: off</td>
 *       <td>-1</td></tr>
 *   <tr><td>timeout</td><td>per-command timeout ({@code 500ms}, {@code 30s}, {@code 2m}, or milliseconds)</td><td>30 s</td></tr>
 *   <tr><td>engine</td><td>the transport's event-loop engine: {@code auto}, {@code epoll}, {@code io_uring},
 *       {@code nio} (TCP)</td><td>auto</td></tr>
 *   <tr><td>iopolicy</td><td>multipath path selection: {@code numa} (first usable path, optimized before
 *       non-optimized), {@code round-robin}, {@code queue-depth} (Linux's names)</td><td>numa</td></tr>
 *   <tr><td>dhchap_secret</td><td>the host's DH-HMAC-CHAP secret {@code DHHC-1:hh:BASE64:} (docs/security.md);
 *       the host authenticates when the controller asks</td><td>none</td></tr>
 *   <tr><td>dhchap_ctrl_secret</td><td>the controller's secret: the host authenticates the controller too
 *       (bidirectional)</td><td>none</td></tr>
 *   <tr><td>disable_sqflow</td><td>{@code 1}: ask the controller to disable SQ flow control on every queue (Connect
 *       CATTR bit 2, Linux's {@code disable_sqflow}); a controller may then answer a read with its data alone (C2HData
 *       with SUCCESS, no CapsuleResp). Set for a discovery-log entry whose TREQ says the controller supports it, as
 *       libnvme does</td><td>0</td></tr>
 *   <tr><td>hipri</td><td>{@code 1}: the I/O queues' threads busy-poll instead of sleeping (fio's name for polled
 *       completions): lowest latency, one core spinning per queue thread</td><td>0</td></tr>
 *   <tr><td>tls</td><td>{@code 1}: TLS 1.3 with a PSK on every queue (NVMe/TCP); needs {@code psk} or
 *       {@code psk_file}</td><td>0</td></tr>
 *   <tr><td>psk</td><td>the configured PSK, {@code NVMeTLSkey-1:01:...:} (implies tls=1; never printed)</td><td></td></tr>
 *   <tr><td>psk_file</td><td>a file holding that key (implies tls=1)</td><td></td></tr>
 *   <tr><td>psk_identity</td><td>PSK identity version: 0 ({@code NVMe0R01 host subsys}) or 1 (with the digest)</td>
 *       <td>0</td></tr>
 *   <tr><td>tls_hash</td><td>{@code sha256} or {@code sha384}: the hash TLS binds the PSK to; {@code sha256} for
 *       a SHA-384 key against a Linux target (tlshd binds every PSK to SHA-256)</td><td>the key's</td></tr>
 *   <tr><td>psk_derivation</td><td>{@code rfc8446} or {@code compat} (keys of nvme-cli before 2.16,
 *       see {@link io.nvmeof.core.tls.PskDerivation})</td><td>rfc8446</td></tr>
 * </table>
 *
 * <p>The port defaults to 4420 for every controller, discovery included. The Linux kernel uses 8009 for a discovery
 * controller when none is given (nvmeof-protocol.md §3.7); our own target serves discovery on its I/O port, so write {@code :8009}
 * explicitly when you talk to an nvmet discovery port.
 *
 * <p>The secrets stay out of {@link #toString()} (so a URI can be logged) and out of {@link #equals}.
 *
 * <p>Scheme {@code nvme+rdma} parses; connecting says whether an rdma transport is available. Instances are immutable.
 */
public final class NvmeUri {
    /** The NVMe-oF I/O port (nvmeof-protocol.md §8). */
    public static final int DEFAULT_PORT = 4420;

    public static final int DEFAULT_DEPTH = 128;
    public static final int MAX_QUEUES = 128;
    public static final int MAX_DEPTH = 1024;
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    /**
     * KATO for I/O controllers: 5 s, the Linux host's NVME_DEFAULT_KATO (keep_alive_tmo), inside the 5–30 s the
     * conservative profile suggests (nvmeof-protocol.md §7.8).
     */
    public static final int DEFAULT_KATO_MILLIS = 5_000;
    /** Seconds between reconnect attempts: the Linux host's NVMF_DEF_RECONNECT_DELAY (reconnect_delay). */
    public static final Duration DEFAULT_RECONNECT_DELAY = Duration.ofSeconds(10);
    /** How long to keep reconnecting: the Linux host's NVMF_DEF_CTRL_LOSS_TMO (ctrl_loss_tmo), 600 s. */
    public static final Duration DEFAULT_CTRL_LOSS_TMO = Duration.ofSeconds(600);
    /** "-1" of ctrl_loss_tmo (reconnect for ever) and fast_io_fail_tmo (off, the Linux default NVMF_DEF_FAIL_FAST_TMO). */
    public static final Duration NEVER = Duration.ofSeconds(-1);

    private final String transport;
    private final List<Address> addresses;
    private final String subsystemNqn;
    private final int nsid;
    private final int queues;
    private final int depth;
    private final boolean headerDigest;
    private final boolean dataDigest;
    private final String hostNqn;
    private final int katoMillis;
    private final Duration timeout;
    private final String engine;
    private final boolean hipri;
    private final boolean disableSqflow;
    private final TlsUriOptions tls;
    private final String iopolicy;

    /** The values {@code iopolicy=} accepts, Linux's names (nvme_core iopolicy). */
    public static final List<String> IOPOLICIES = List.of("numa", "round-robin", "queue-depth");

    /** One address of a controller: host (name or literal, IPv6 without brackets) and port. */
    public record Address(String host, int port) {
        /** {@code host:port}, IPv6 in brackets. */
        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    private final Duration reconnectDelay;
    private final Duration ctrlLossTmo;
    private final Duration fastIoFailTmo;
    /** DH-HMAC-CHAP secrets, or null; not part of the text form. */
    private final DhchapKeys dhchap;

    /** The values {@code engine=} accepts. */
    public static final List<String> ENGINES = List.of("auto", "epoll", "io_uring", "nio");

    NvmeUri(
            String transport,
            List<Address> addresses,
            String subsystemNqn,
            int nsid,
            int queues,
            int depth,
            boolean headerDigest,
            boolean dataDigest,
            String hostNqn,
            int katoMillis,
            Duration timeout,
            String engine,
            boolean hipri,
            String iopolicy,
            Duration reconnectDelay,
            Duration ctrlLossTmo,
            Duration fastIoFailTmo,
            DhchapKeys dhchap,
            TlsUriOptions tls,
            boolean disableSqflow) {
        this.disableSqflow = disableSqflow;
        this.dhchap = dhchap;
        this.tls = tls;
        this.transport = transport;
        this.addresses = List.copyOf(addresses);
        this.subsystemNqn = subsystemNqn;
        this.nsid = nsid;
        this.queues = queues;
        this.depth = depth;
        this.headerDigest = headerDigest;
        this.dataDigest = dataDigest;
        this.hostNqn = hostNqn;
        this.katoMillis = katoMillis;
        this.timeout = timeout;
        this.engine = engine;
        this.hipri = hipri;
        this.iopolicy = iopolicy;
        this.reconnectDelay = reconnectDelay;
        this.ctrlLossTmo = ctrlLossTmo;
        this.fastIoFailTmo = fastIoFailTmo;
    }

    /**
     * Parses a URI of the form shown above.
     *
     * @throws IllegalArgumentException naming the part that is wrong
     */
    public static NvmeUri parse(String uri) {
        return NvmeUriParser.parse(uri);
    }

    /** This URI with other TLS options (the programmatic way to give a key). */
    public NvmeUri withTls(TlsUriOptions options) {
        return copy(
                transport,
                addresses,
                subsystemNqn,
                nsid,
                katoMillis,
                options == null ? TlsUriOptions.NONE : options,
                disableSqflow);
    }

    /**
     * This URI with another target (transport, addresses, subsystem, NSID), KATO or TLS options; every other option —
     * queues, digests, host NQN, timeouts, engine, iopolicy, the reconnect options and the DH-HMAC-CHAP secrets —
     * carried over. Every derived URI is made here, so a new option cannot be dropped by one of them.
     */
    private NvmeUri copy(
            String transport,
            List<Address> addresses,
            String nqn,
            int nsid,
            int kato,
            TlsUriOptions tls,
            boolean disableSqflow) {
        return new NvmeUri(
                transport,
                addresses,
                nqn,
                nsid,
                queues,
                depth,
                headerDigest,
                dataDigest,
                hostNqn,
                kato,
                timeout,
                engine,
                hipri,
                iopolicy,
                reconnectDelay,
                ctrlLossTmo,
                fastIoFailTmo,
                dhchap,
                tls,
                disableSqflow);
    }

    /** The TLS options ({@link TlsUriOptions#NONE} without TLS). */
    public TlsUriOptions tls() {
        return tls;
    }

    /** The URI of an NVM subsystem listed in a discovery log, with this URI's options (host NQN, digests, timeouts...). */
    public NvmeUri forEntry(DiscoveryEntry entry) {
        String trtype = entry.transportName();
        int p;
        try {
            p = Integer.parseInt(entry.trsvcid().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("discovery entry has a non-numeric TRSVCID '" + entry.trsvcid() + "'");
        }
        return copy(
                trtype,
                List.of(new Address(entry.traddr().trim(), p)),
                entry.subnqn(),
                0,
                katoMillis == 0 && isDiscovery() ? DEFAULT_KATO_MILLIS : katoMillis,
                tls,
                disableSqflow || entry.sqFlowControlDisableSupported());
    }

    /** This URI naming another subsystem (null: the discovery controller). */
    public NvmeUri withSubsystem(String nqn) {
        boolean discovery = nqn == null || Nqn.DISCOVERY.equals(nqn);
        int kato = isDiscovery() == discovery ? katoMillis : (discovery ? 0 : DEFAULT_KATO_MILLIS);
        return copy(transport, addresses, nqn, nsid, kato, tls, disableSqflow);
    }

    /** The DH-HMAC-CHAP secrets of {@code dhchap_secret} and {@code dhchap_ctrl_secret}, or null. */
    public DhchapKeys dhchap() {
        return dhchap;
    }

    /**
     * One URI per address, each with this URI's transport, subsystem and options (a URI with one address: itself).
     */
    public List<NvmeUri> paths() {
        if (addresses.size() == 1) {
            return List.of(this);
        }
        List<NvmeUri> out = new ArrayList<>();
        for (Address a : addresses) {
            out.add(copy(transport, List.of(a), subsystemNqn, nsid, katoMillis, tls, disableSqflow));
        }
        return List.copyOf(out);
    }

    /** The addresses, in the URI's order (one for a single controller). */
    public List<Address> addresses() {
        return addresses;
    }

    /** Whether the URI gives several addresses (the paths of a multipath namespace). */
    public boolean isMultipath() {
        return addresses.size() > 1;
    }

    /** The iopolicy option: "numa" (default), "round-robin" or "queue-depth". */
    public String iopolicy() {
        return iopolicy;
    }

    /** The transport name: "tcp" or "rdma" (what follows "nvme+"). */
    public String transport() {
        return transport;
    }

    /** The (first) address's host. */
    public String host() {
        return addresses.get(0).host();
    }

    /** The (first) address's port. */
    public int port() {
        return addresses.get(0).port();
    }

    /** An unresolved socket address, resolved when connecting. */
    public InetSocketAddress socketAddress() {
        return new InetSocketAddress(host(), port());
    }

    /** The subsystem NQN from the path, or null for the discovery controller. */
    public String subsystemNqn() {
        return subsystemNqn;
    }

    /** Whether this names a discovery controller: no NQN, or the well-known discovery NQN (nvmeof-protocol.md §3.7). */
    public boolean isDiscovery() {
        return subsystemNqn == null || Nqn.DISCOVERY.equals(subsystemNqn);
    }

    /** The NQN to put in Connect: the subsystem NQN or the well-known discovery NQN. */
    public String connectNqn() {
        return subsystemNqn == null ? Nqn.DISCOVERY : subsystemNqn;
    }

    /** The nsid option, 0 if not given. */
    public int nsid() {
        return nsid;
    }

    public int queues() {
        return queues;
    }

    public int depth() {
        return depth;
    }

    public boolean headerDigest() {
        return headerDigest;
    }

    public boolean dataDigest() {
        return dataDigest;
    }

    /** The hostnqn option, or null for the default. */
    public String hostNqn() {
        return hostNqn;
    }

    public int katoMillis() {
        return katoMillis;
    }

    public Duration timeout() {
        return timeout;
    }

    /** The engine option: "auto" (default), "epoll", "io_uring" or "nio". */
    public String engine() {
        return engine;
    }

    /** The disable_sqflow option: Connect asks the controller to disable SQ flow control (CATTR bit 2). */
    public boolean disableSqflow() {
        return disableSqflow;
    }

    /** The hipri option: busy-poll on the I/O queues' threads. */
    public boolean hipri() {
        return hipri;
    }

    /** reconnect_delay: the time between reconnect attempts (default 10 s). */
    public Duration reconnectDelay() {
        return reconnectDelay;
    }

    /** ctrl_loss_tmo: how long to reconnect before the controller is lost; {@link #NEVER} (-1): for ever; 0: never. */
    public Duration ctrlLossTmo() {
        return ctrlLossTmo;
    }

    /** fast_io_fail_tmo: after this long reconnecting, waiting commands fail; {@link #NEVER} (-1, default): off. */
    public Duration fastIoFailTmo() {
        return fastIoFailTmo;
    }

    /** The engine and hipri options as the transport SPI takes them. */
    public io.nvmeof.core.spi.IoMode ioMode() {
        return new io.nvmeof.core.spi.IoMode(engine, hipri);
    }

    /**
     * The canonical text form; parses back to an equal URI, except that an inline PSK is shown as {@code psk=(set)}
     * (a key is never printed).
     */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("nvme+").append(transport).append("://");
        for (int i = 0; i < addresses.size(); i++) {
            b.append(i == 0 ? "" : ",").append(addresses.get(i));
        }
        if (subsystemNqn != null) {
            b.append('/').append(subsystemNqn);
        }
        StringBuilder qs = new StringBuilder();
        if (nsid != 0) {
            qs.append("&nsid=").append(Integer.toUnsignedString(nsid));
        }
        qs.append("&queues=").append(queues).append("&depth=").append(depth);
        if (headerDigest || dataDigest) {
            qs.append("&digest=").append(headerDigest && dataDigest ? "header,data" : headerDigest ? "header" : "data");
        }
        if (hostNqn != null) {
            qs.append("&hostnqn=").append(hostNqn);
        }
        qs.append("&kato=")
                .append(katoMillis)
                .append("&timeout=")
                .append(timeout.toMillis())
                .append("ms");
        if (!"auto".equals(engine)) {
            qs.append("&engine=").append(engine);
        }
        if (hipri) {
            qs.append("&hipri=1");
        }
        if (disableSqflow) {
            qs.append("&disable_sqflow=1");
        }
        if (!"numa".equals(iopolicy)) {
            qs.append("&iopolicy=").append(iopolicy);
        }
        if (!reconnectDelay.equals(DEFAULT_RECONNECT_DELAY)) {
            qs.append("&reconnect_delay=").append(reconnectDelay.toMillis()).append("ms");
        }
        if (!ctrlLossTmo.equals(DEFAULT_CTRL_LOSS_TMO)) {
            qs.append("&ctrl_loss_tmo=").append(ctrlLossTmo.isNegative() ? "-1" : ctrlLossTmo.toMillis() + "ms");
        }
        if (!fastIoFailTmo.isNegative()) {
            qs.append("&fast_io_fail_tmo=").append(fastIoFailTmo.toMillis()).append("ms");
        }
        qs.append(tls.query());
        return b.append('?').append(qs.substring(1)).toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NvmeUri u && u.toString().equals(toString()) && Objects.equals(u.tls.psk(), tls.psk());
    }

    @Override
    public int hashCode() {
        return Objects.hash(toString());
    }
}

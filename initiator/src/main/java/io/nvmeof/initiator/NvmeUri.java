package io.nvmeof.initiator;

import io.nvmeof.core.command.Nqn;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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

    private NvmeUri(
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
            TlsUriOptions tls) {
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
        try {
            return parseUnchecked(uri);
        } catch (IllegalArgumentException e) {
            // no message may carry a PSK given in the URI
            throw new IllegalArgumentException(redact(e.getMessage()));
        }
    }

    private static NvmeUri parseUnchecked(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException(
                    "no NVMe URI given (e.g. nvme+tcp://192.0.2.10:4420/nqn.2024-01.io.nvmeof:disk1)");
        }
        String s = uri.trim();
        uri = redacted(uri); // messages below show the URI, never its secrets
        int sep = s.indexOf("://");
        if (sep < 0) {
            throw new IllegalArgumentException(
                    "not an NVMe URI: '" + uri + "' (expected nvme+tcp://HOST[:PORT][/NQN][?OPTIONS])");
        }
        String scheme = s.substring(0, sep).toLowerCase(Locale.ROOT);
        if (!scheme.startsWith("nvme+") || scheme.length() == 5) {
            throw new IllegalArgumentException(
                    "unknown scheme '" + s.substring(0, sep) + "' in '" + uri + "': use nvme+tcp (or nvme+rdma)");
        }
        String transport = scheme.substring(5);
        if (!transport.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
            throw new IllegalArgumentException("bad transport name '" + transport + "' in '" + uri + "'");
        }
        String rest = s.substring(sep + 3);
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        String authority = rest;
        String path = null;
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            authority = rest.substring(0, slash);
            path = rest.substring(slash + 1);
        }
        List<Address> addresses = new ArrayList<>();
        for (String one : authority.split(",", -1)) {
            Address a = parseAuthority(one.trim(), uri);
            if (addresses.contains(a)) {
                throw new IllegalArgumentException("address " + a + " is given twice in '" + uri + "'");
            }
            addresses.add(a);
        }
        String nqn = null;
        if (path != null) {
            if (path.endsWith("/")) {
                path = path.substring(0, path.length() - 1);
            }
            if (!path.isEmpty()) {
                nqn = percentDecode(path, uri);
                checkNqn(nqn, "subsystem NQN", uri);
            }
        }
        int nsid = 0;
        int queues = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
        int depth = DEFAULT_DEPTH;
        boolean hdgst = false;
        boolean ddgst = false;
        String hostNqn = null;
        int kato = -1;
        Duration timeout = DEFAULT_TIMEOUT;
        String engine = "auto";
        boolean hipri = false;
        Boolean tlsFlag = null;
        io.nvmeof.core.tls.ConfiguredPsk psk = null;
        String pskFile = null;
        int pskIdentity = 0;
        io.nvmeof.core.tls.PskDerivation pskDerivation = null;
        io.nvmeof.core.tls.PskHash tlsHash = null;
        String iopolicy = "numa";
        Duration reconnectDelay = DEFAULT_RECONNECT_DELAY;
        Duration ctrlLossTmo = DEFAULT_CTRL_LOSS_TMO;
        Duration fastIoFailTmo = NEVER;
        String dhchapSecret = null;
        String dhchapCtrlSecret = null;
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException(
                            "option '" + pair + "' has no value in '" + uri + "' (write name=value)");
                }
                String name = pair.substring(0, eq).toLowerCase(Locale.ROOT);
                String value = percentDecode(pair.substring(eq + 1), uri);
                switch (name) {
                    case "nsid":
                        nsid = parseInt(name, value, 1, 0xFFFFFFFEL, uri);
                        break;
                    case "queues":
                        queues = parseInt(name, value, 1, MAX_QUEUES, uri);
                        break;
                    case "depth":
                        depth = parseInt(name, value, 2, MAX_DEPTH, uri);
                        break;
                    case "digest":
                        hdgst = false;
                        ddgst = false;
                        for (String d : value.toLowerCase(Locale.ROOT).split(",")) {
                            switch (d.trim()) {
                                case "header":
                                    hdgst = true;
                                    break;
                                case "data":
                                    ddgst = true;
                                    break;
                                case "none":
                                case "":
                                    break;
                                default:
                                    throw new IllegalArgumentException(
                                            "digest must be header, data, header,data or none, not '" + value + "' in '"
                                                    + uri + "'");
                            }
                        }
                        break;
                    case "hostnqn":
                        checkNqn(value, "host NQN", uri);
                        hostNqn = value;
                        break;
                    case "kato":
                        kato = (int) Math.min(
                                Integer.MAX_VALUE,
                                parseDuration(name, value, uri).toMillis());
                        break;
                    case "keep_alive_tmo":
                        kato = (int) Math.min(
                                Integer.MAX_VALUE,
                                parseSeconds(name, value, false, uri).toMillis());
                        break;
                    case "reconnect_delay":
                        reconnectDelay = parseSeconds(name, value, false, uri);
                        if (reconnectDelay.isZero()) {
                            throw new IllegalArgumentException("reconnect_delay must be positive in '" + uri + "'");
                        }
                        break;
                    case "ctrl_loss_tmo":
                        ctrlLossTmo = parseSeconds(name, value, true, uri);
                        break;
                    case "fast_io_fail_tmo":
                        fastIoFailTmo = parseSeconds(name, value, true, uri);
                        break;
                    case "timeout":
                        timeout = parseDuration(name, value, uri);
                        if (timeout.isZero()) {
                            throw new IllegalArgumentException("timeout must be positive in '" + uri + "'");
                        }
                        break;
                    case "engine":
                        engine = value.trim().toLowerCase(Locale.ROOT);
                        if (!ENGINES.contains(engine)) {
                            throw new IllegalArgumentException("engine must be one of " + String.join(", ", ENGINES)
                                    + ", not '" + value + "' in '" + uri + "'");
                        }
                        break;
                    case "iopolicy":
                        iopolicy = value.trim().toLowerCase(Locale.ROOT);
                        if (!IOPOLICIES.contains(iopolicy)) {
                            throw new IllegalArgumentException("iopolicy must be one of "
                                    + String.join(", ", IOPOLICIES) + ", not '" + value + "' in '" + uri + "'");
                        }
                        break;
                    case "dhchap_secret":
                        dhchapSecret = value;
                        break;
                    case "dhchap_ctrl_secret":
                        dhchapCtrlSecret = value;
                        break;
                    case "hipri":
                        switch (value.trim().toLowerCase(Locale.ROOT)) {
                            case "1":
                            case "true":
                            case "yes":
                                hipri = true;
                                break;
                            case "0":
                            case "false":
                            case "no":
                                hipri = false;
                                break;
                            default:
                                throw new IllegalArgumentException(
                                        "hipri must be 1 or 0, not '" + value + "' in '" + uri + "'");
                        }
                        break;
                    case "tls":
                        if (!value.equals("1") && !value.equals("0")) {
                            throw new IllegalArgumentException("tls must be 1 or 0, not '" + value + "'");
                        }
                        tlsFlag = value.equals("1");
                        break;
                    case "psk":
                        // the message of a bad key names what is wrong, never the key, and the URI is not quoted
                        psk = io.nvmeof.core.tls.ConfiguredPsk.parse(value);
                        break;
                    case "psk_file":
                        pskFile = value;
                        psk = TlsUriOptions.readKeyFile(value);
                        break;
                    case "psk_identity":
                        pskIdentity = (int) parseInt(name, value, 0, 1, uri);
                        break;
                    case "tls_hash":
                        switch (value) {
                            case "sha256" -> tlsHash = io.nvmeof.core.tls.PskHash.SHA256;
                            case "sha384" -> tlsHash = io.nvmeof.core.tls.PskHash.SHA384;
                            default ->
                                throw new IllegalArgumentException(
                                        "tls_hash must be sha256 or sha384, not '" + value + "'");
                        }
                        break;
                    case "psk_derivation":
                        pskDerivation = io.nvmeof.core.tls.PskDerivation.ofConfigName(value);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option '" + name + "' in '" + uri
                                + "' (known: nsid, queues, depth, digest, hostnqn, kato, keep_alive_tmo, timeout, engine, hipri, "
                                + "reconnect_delay, ctrl_loss_tmo, fast_io_fail_tmo, iopolicy, dhchap_secret, dhchap_ctrl_secret, "
                                + "tls, psk, psk_file, psk_identity, psk_derivation, tls_hash)");
                }
            }
        }
        boolean discovery = nqn == null || Nqn.DISCOVERY.equals(nqn);
        if (kato < 0) {
            kato = discovery
                    ? 0
                    : DEFAULT_KATO_MILLIS; // discovery: KATO 0 like nvme discover (nvmeof-protocol.md §3.7, §7.2)
        }
        if (addresses.size() > 1 && discovery) {
            throw new IllegalArgumentException("several addresses name the paths to one subsystem: give its NQN in '"
                    + uri + "' (a discovery controller has one address)");
        }
        if (dhchapSecret == null && dhchapCtrlSecret != null) {
            throw new IllegalArgumentException("dhchap_ctrl_secret needs dhchap_secret too in '" + uri + "'");
        }
        DhchapKeys keys = null;
        if (dhchapSecret != null) {
            try {
                keys = DhchapKeys.parse(dhchapSecret, dhchapCtrlSecret);
            } catch (IllegalArgumentException e) {
                // The parser's message never contains the key.
                throw new IllegalArgumentException(e.getMessage() + " (dhchap option of '" + uri + "')");
            }
        }
        boolean tlsOn = tlsFlag != null ? tlsFlag : psk != null;
        if (tlsOn && !"tcp".equals(transport)) {
            throw new IllegalArgumentException("tls is for nvme+tcp only");
        }
        TlsUriOptions tls = tlsOn || pskIdentity != 0 || pskDerivation != null || tlsHash != null
                ? new TlsUriOptions(tlsOn, psk, pskFile, pskIdentity, pskDerivation, tlsHash)
                : TlsUriOptions.NONE;
        return new NvmeUri(
                transport,
                addresses,
                nqn,
                nsid,
                queues,
                depth,
                hdgst,
                ddgst,
                hostNqn,
                kato,
                timeout,
                engine,
                hipri,
                iopolicy,
                reconnectDelay,
                ctrlLossTmo,
                fastIoFailTmo,
                keys,
                tls);
    }

    /** {@code uri} with the value of a psk= option hidden, for error messages. */
    private static String redact(String text) {
        return text == null
                ? null
                : text.replaceAll("(?i)(psk=)[^&' ]*", "$1(hidden)").replaceAll("NVMeTLSkey-[^&' ]*", "(hidden)");
    }

    /** This URI with other TLS options (the programmatic way to give a key). */
    public NvmeUri withTls(TlsUriOptions options) {
        return new NvmeUri(
                transport,
                addresses,
                subsystemNqn,
                nsid,
                queues,
                depth,
                headerDigest,
                dataDigest,
                hostNqn,
                katoMillis,
                timeout,
                engine,
                hipri,
                iopolicy,
                reconnectDelay,
                ctrlLossTmo,
                fastIoFailTmo,
                dhchap,
                options == null ? TlsUriOptions.NONE : options);
    }

    /** The TLS options ({@link TlsUriOptions#NONE} without TLS). */
    public TlsUriOptions tls() {
        return tls;
    }

    /** {@code uri} with the values of its dhchap options replaced, for messages. */
    private static String redacted(String uri) {
        return redact(uri.replaceAll("(?i)(dhchap_(?:ctrl_)?secret=)[^&]*", "$1<secret>"));
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
        return new NvmeUri(
                trtype,
                List.of(new Address(entry.traddr().trim(), p)),
                entry.subnqn(),
                0,
                queues,
                depth,
                headerDigest,
                dataDigest,
                hostNqn,
                katoMillis == 0 && isDiscovery() ? DEFAULT_KATO_MILLIS : katoMillis,
                timeout,
                engine,
                hipri,
                iopolicy,
                reconnectDelay,
                ctrlLossTmo,
                fastIoFailTmo,
                dhchap,
                tls);
    }

    /** This URI naming another subsystem (null: the discovery controller). */
    public NvmeUri withSubsystem(String nqn) {
        boolean discovery = nqn == null || Nqn.DISCOVERY.equals(nqn);
        int kato = isDiscovery() == discovery ? katoMillis : (discovery ? 0 : DEFAULT_KATO_MILLIS);
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
                tls);
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
            out.add(new NvmeUri(
                    transport,
                    List.of(a),
                    subsystemNqn,
                    nsid,
                    queues,
                    depth,
                    headerDigest,
                    dataDigest,
                    hostNqn,
                    katoMillis,
                    timeout,
                    engine,
                    hipri,
                    iopolicy,
                    reconnectDelay,
                    ctrlLossTmo,
                    fastIoFailTmo,
                    dhchap,
                    tls));
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

    /** One {@code HOST[:PORT]} or {@code [IPV6][:PORT]}. */
    private static Address parseAuthority(String authority, String uri) {
        String host;
        int port = DEFAULT_PORT;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("unterminated IPv6 address in '" + uri + "' (write [fe80::1]:4420)");
            }
            host = authority.substring(1, close);
            String tail = authority.substring(close + 1);
            if (!tail.isEmpty()) {
                if (!tail.startsWith(":")) {
                    throw new IllegalArgumentException(
                            "unexpected '" + tail + "' after the IPv6 address in '" + uri + "'");
                }
                port = parsePort(tail.substring(1), uri);
            }
            if (host.isEmpty() || host.indexOf(':') < 0) {
                throw new IllegalArgumentException(
                        "brackets are for IPv6 addresses, not '" + host + "' in '" + uri + "'");
            }
        } else {
            int colon = authority.lastIndexOf(':');
            if (colon >= 0) {
                if (authority.indexOf(':') != colon) {
                    throw new IllegalArgumentException(
                            "an IPv6 address goes in brackets: nvme+tcp://[" + authority + "]/... (in '" + uri + "')");
                }
                host = authority.substring(0, colon);
                port = parsePort(authority.substring(colon + 1), uri);
            } else {
                host = authority;
            }
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("no host in '" + uri + "' (e.g. nvme+tcp://192.0.2.10:4420/NQN)");
        }
        return new Address(host, port);
    }

    private static int parsePort(String text, String uri) {
        try {
            int p = Integer.parseInt(text);
            if (p < 1 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad port '" + text + "' in '" + uri + "' (1..65535)");
        }
    }

    private static int parseInt(String name, String value, long min, long max, String uri) {
        long v;
        try {
            v = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number, not '" + value + "' in '" + uri + "'");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(
                    name + " must be " + min + ".." + max + ", not " + v + " in '" + uri + "'");
        }
        return (int) v;
    }

    /**
     * A Linux fabrics time option: a plain number of seconds ({@code 10}), or {@code 500ms}, {@code 30s}, {@code 2m};
     * {@code -1} (returned as {@link #NEVER}) where {@code minusOne} allows it.
     */
    static Duration parseSeconds(String name, String value, boolean minusOne, String uri) {
        String v = value.trim();
        if (minusOne && v.equals("-1")) {
            return NEVER;
        }
        if (!v.isEmpty() && v.chars().allMatch(Character::isDigit)) {
            v = v + "s";
        }
        try {
            return parseDuration(name, v, uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + " must be a number of seconds" + (minusOne ? " (-1: none)" : "")
                    + " or a duration such as 500ms, 30s, 2m, not '" + value + "' in '" + uri + "'");
        }
    }

    /** {@code 500ms}, {@code 30s}, {@code 2m}, or a plain number of milliseconds. */
    static Duration parseDuration(String name, String value, String uri) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        long unitMillis = 1;
        if (v.endsWith("ms")) {
            v = v.substring(0, v.length() - 2);
        } else if (v.endsWith("s")) {
            v = v.substring(0, v.length() - 1);
            unitMillis = 1000;
        } else if (v.endsWith("m")) {
            v = v.substring(0, v.length() - 1);
            unitMillis = 60_000;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < 0 || n > Integer.MAX_VALUE) {
                throw new NumberFormatException();
            }
            return Duration.ofMillis(n * unitMillis);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a duration such as 500ms, 30s, 2m or a number of "
                    + "milliseconds, not '" + value + "' in '" + uri + "'");
        }
    }

    private static void checkNqn(String nqn, String what, String uri) {
        if (!nqn.startsWith("nqn.")) {
            throw new IllegalArgumentException(
                    "the " + what + " must start with 'nqn.', not '" + nqn + "' in '" + uri + "'");
        }
        if (nqn.getBytes(StandardCharsets.UTF_8).length > 223) {
            throw new IllegalArgumentException(
                    "the " + what + " has more than 223 bytes in '" + uri + "' (nvmeof-protocol.md §0)");
        }
    }

    private static String percentDecode(String s, String uri) {
        if (s.indexOf('%') < 0) {
            return s;
        }
        try {
            return java.net.URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad %-escape in '" + s + "' in '" + uri + "'");
        }
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

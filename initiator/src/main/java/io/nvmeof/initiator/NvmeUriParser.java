package io.nvmeof.initiator;

import static io.nvmeof.initiator.NvmeUri.*;

import io.nvmeof.core.command.Nqn;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Parses the text form of an {@link NvmeUri} (the grammar and options are in its class comment): the scheme, one or
 * more authorities, the NQN, each option checked and turned into its value. Every error is an
 * {@link IllegalArgumentException} that names the part that is wrong and never carries a secret (a DH-HMAC-CHAP
 * secret or a TLS PSK given in the URI).
 */
final class NvmeUriParser {
    private NvmeUriParser() {}

    /** See {@link NvmeUri#parse}. */
    static NvmeUri parse(String uri) {
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
        boolean disableSqflow = false;
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
                        hipri = flag(name, value, uri);
                        break;
                    case "disable_sqflow":
                        disableSqflow = flag(name, value, uri);
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
                                + "' (known: nsid, queues, depth, digest, hostnqn, kato, keep_alive_tmo, timeout, engine, hipri, disable_sqflow, "
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
                tls,
                disableSqflow);
    }

    /** {@code uri} with the value of a psk= option hidden, for error messages. */
    private static String redact(String text) {
        return text == null
                ? null
                : text.replaceAll("(?i)(psk=)[^&' ]*", "$1(hidden)").replaceAll("NVMeTLSkey-[^&' ]*", "(hidden)");
    }

    /** {@code uri} with the values of its dhchap options replaced, for messages. */
    private static String redacted(String uri) {
        return redact(uri.replaceAll("(?i)(dhchap_(?:ctrl_)?secret=)[^&]*", "$1<secret>"));
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

    /** A yes/no option: 1, true or yes; 0, false or no. */
    private static boolean flag(String name, String value, String uri) {
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "1":
            case "true":
            case "yes":
                return true;
            case "0":
            case "false":
            case "no":
                return false;
            default:
                throw new IllegalArgumentException(name + " must be 1 or 0, not '" + value + "' in '" + uri + "'");
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
}

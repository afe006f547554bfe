package io.nvmeof.perf;

import io.nvmeof.core.spi.Transport;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.target.daemon.TargetDaemon;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;

/**
 * A way of reaching the target that {@code compare} puts side by side: a transport plus initiator URI options and
 * flags for the target daemon we start. Adding a transport is one entry in {@link #BASE}.
 *
 * @param name        as typed on the command line: tcp, tcp-io_uring, tcp-digest, tcp-tls, tcp-tls-digest, rdma;
 *                    "-hipri" variants add busy polling
 * @param transport   URI scheme suffix and target listen scheme: tcp, rdma
 * @param description for tables and the HTML report
 * @param uriOptions  initiator URI options this setup needs (the setup is unavailable if the initiator lacks them)
 * @param targetArgs  target daemon flags this setup needs (unavailable if our daemon lacks them; ignored for a
 *                    remote --target, which is configured by whoever runs it)
 * @param preferredUriOptions  applied only when the initiator supports them (e.g. engine=epoll pins the default)
 * @param preferredTargetArgs  applied only when our daemon supports them
 * @param emulated    the transport is emulated in software (NVMe/RDMA over the software RNIC): labelled in every
 *                    output
 */
public record Setup(
        String name,
        String transport,
        String description,
        Map<String, String> uriOptions,
        List<String> targetArgs,
        Map<String, String> preferredUriOptions,
        List<String> preferredTargetArgs,
        boolean emulated) {

    /** The setups, in display order. */
    static final List<Setup> BASE = List.of(
            base(
                    "tcp",
                    "tcp",
                    "NVMe/TCP, epoll",
                    Map.of(),
                    List.of(),
                    Map.of("engine", "epoll"),
                    List.of("--io-engine", "epoll")),
            base(
                    "tcp-io_uring",
                    "tcp",
                    "NVMe/TCP, io_uring",
                    Map.of("engine", "io_uring"),
                    List.of("--io-engine", "io_uring"),
                    Map.of(),
                    List.of()),
            base(
                    "tcp-digest",
                    "tcp",
                    "NVMe/TCP, epoll, header+data digests (CRC32C)",
                    Map.of("digest", "header,data"),
                    List.of(),
                    Map.of("engine", "epoll"),
                    List.of("--io-engine", "epoll")),
            base(
                    "tcp-tls",
                    "tcp",
                    "NVMe/TCP, epoll, TLS 1.3 (PSK, TLS_AES_128_GCM_SHA256, BouncyCastle)",
                    PerfTlsKey.uriOptions(false),
                    PerfTlsKey.targetArgs(),
                    Map.of("engine", "epoll"),
                    List.of("--io-engine", "epoll")),
            base(
                    "tcp-tls-digest",
                    "tcp",
                    "NVMe/TCP, epoll, TLS 1.3 (PSK) + header+data digests",
                    PerfTlsKey.uriOptions(true),
                    PerfTlsKey.targetArgs(),
                    Map.of("engine", "epoll"),
                    List.of("--io-engine", "epoll")),
            rdma());

    /**
     * NVMe/RDMA over the provider this machine has: DiSNI on a real RNIC or Soft-RoCE, else the software RNIC. The
     * description names it with the provider's own label ("DiSNI on rxe0", "software RNIC (emulated)"), and a
     * software RNIC makes the setup {@code emulated}. The target process chooses its provider the same way (auto,
     * or {@code -Dnvmeof.rdma.provider}), so both sides use the same one.
     */
    static Setup rdma() {
        String provider;
        boolean emulated;
        try {
            io.nvmeof.transport.rdma.RdmaTransport t = new io.nvmeof.transport.rdma.RdmaTransport();
            provider = t.providerDescription(io.nvmeof.core.spi.IoMode.DEFAULT);
            emulated = t.providerEmulated(io.nvmeof.core.spi.IoMode.DEFAULT);
        } catch (java.io.IOException | RuntimeException | LinkageError e) {
            provider = "no RDMA provider available";
            emulated = false;
        }
        return new Setup("rdma", "rdma", "NVMe/RDMA, " + provider, Map.of(), List.of(), Map.of(), List.of(), emulated);
    }

    private static Setup base(
            String name,
            String transport,
            String description,
            Map<String, String> uri,
            List<String> target,
            Map<String, String> prefUri,
            List<String> prefTarget) {
        return new Setup(name, transport, description, uri, target, prefUri, prefTarget, false);
    }

    /** Every setup name that {@link #named} accepts. */
    public static List<String> names() {
        List<String> out = new ArrayList<>();
        for (Setup s : BASE) {
            out.add(s.name);
        }
        for (Setup s : BASE) {
            out.add(s.name + "-hipri");
        }
        return out;
    }

    /** A setup by name: a base name, optionally with "-hipri" (busy polling on both sides, fio's --hipri). */
    public static Setup named(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        boolean hipri = n.endsWith("-hipri");
        String baseName = hipri ? n.substring(0, n.length() - "-hipri".length()) : n;
        for (Setup s : BASE) {
            if (s.name.equals(baseName)) {
                return hipri ? s.withHipri() : s;
            }
        }
        throw new IllegalArgumentException(
                "unknown setup '" + name + "': expected one of " + String.join(", ", names()));
    }

    /** Busy polling on the initiator's queues (hipri=1) and on the target's event loops (--busy-poll). */
    public Setup withHipri() {
        Map<String, String> uri = new LinkedHashMap<>(uriOptions);
        uri.put("hipri", "1");
        List<String> target = new ArrayList<>(targetArgs);
        target.add("--busy-poll");
        return new Setup(
                name + "-hipri",
                transport,
                description + ", busy polling (hipri)",
                uri,
                target,
                preferredUriOptions,
                preferredTargetArgs,
                emulated);
    }

    public boolean hipri() {
        return uriOptions.containsKey("hipri");
    }

    /**
     * Why this setup cannot run here (null if it can, as far as can be known without connecting).
     *
     * @param embedded whether the target is ours, started by this tool (then target flags matter)
     */
    public String unavailableReason(boolean embedded) {
        try {
            Transport t = Transport.find(transport);
            if (!t.isAvailable()) {
                return "the " + transport + " transport is not available here: " + t.unavailableReason();
            }
        } catch (RuntimeException e) {
            return "no " + transport + " transport on the class path";
        }
        for (Map.Entry<String, String> o : uriOptions.entrySet()) {
            if (!initiatorAccepts(o.getKey(), o.getValue())) {
                return "the initiator has no URI option " + o.getKey() + "=" + o.getValue() + " yet";
            }
        }
        if (embedded) {
            for (String flag : targetArgs) {
                if (flag.startsWith("--") && !daemonHasOption(flag)) {
                    return "the target daemon has no " + flag + " option yet";
                }
            }
        }
        return null;
    }

    /** The URI options to use: required ones plus the preferred ones the initiator accepts. */
    public Map<String, String> effectiveUriOptions() {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> o : preferredUriOptions.entrySet()) {
            if (initiatorAccepts(o.getKey(), o.getValue())) {
                out.put(o.getKey(), o.getValue());
            }
        }
        out.putAll(uriOptions);
        return out;
    }

    /** The target daemon flags to use: required ones plus the preferred ones the daemon has. */
    public List<String> effectiveTargetArgs() {
        List<String> out = new ArrayList<>();
        if (!preferredTargetArgs.isEmpty() && daemonHasOption(preferredTargetArgs.get(0))) {
            out.addAll(preferredTargetArgs);
        }
        out.addAll(targetArgs);
        return out;
    }

    static boolean initiatorAccepts(String key, String value) {
        try {
            NvmeUri.parse("nvme+tcp://127.0.0.1:4420/nqn.2024-01.io.nvmeof:probe?" + key + "=" + value);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    static boolean daemonHasOption(String flag) {
        try {
            return CommandLine.Model.CommandSpec.forAnnotatedObject(new TargetDaemon())
                            .findOption(flag)
                    != null;
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }
}

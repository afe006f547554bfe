package io.nvmeof.target.daemon;

import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.Sizes;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.metrics.MetricsEndpoint;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * What {@link TargetDaemon} prints once the target is up, before "ready": each subsystem's namespaces, allowed hosts
 * and DH-HMAC-CHAP hosts (never their keys), the memory budget, every bound listener and the metrics address.
 * Stateless; owns nothing (the writer is the daemon's).
 */
final class StartupBanner {
    private StartupBanner() {}

    /** Prints the whole banner for {@code target}, started from {@code cfg}; {@code metrics} is null without --metrics. */
    static void print(PrintWriter out, TargetConfig cfg, NvmeTarget target, MetricsEndpoint metrics) {
        subsystems(out, cfg);
        out.printf("memory budget %s%n", Sizes.format(cfg.memoryBudgetBytes()));
        listeners(out, cfg, target);
        metrics(out, metrics);
    }

    private static void subsystems(PrintWriter out, TargetConfig cfg) {
        for (SubsystemConfig s : cfg.subsystems()) {
            for (NamespaceConfig n : s.namespaces()) {
                out.printf(
                        "subsystem %s namespace %d: %s, block size %d%s%n",
                        s.nqn(),
                        n.nsid(),
                        Sizes.format(n.sizeBytes()),
                        n.blockSize(),
                        n.readOnly() ? ", read-only" : "");
            }
            out.printf(
                    "subsystem %s: %s%n",
                    s.nqn(),
                    s.allowAnyHost() ? "any host may connect" : "hosts allowed: " + String.join(", ", s.hosts()));
            for (io.nvmeof.target.config.HostAuth a : s.hostAuth()) {
                out.printf(
                        "subsystem %s: host %s must authenticate (DH-HMAC-CHAP%s; hashes %s; DH groups %s)%n",
                        s.nqn(),
                        a.hostNqn(),
                        a.ctrlKey() == null ? "" : ", bidirectional possible",
                        a.hashes().stream().map(h -> h.shortName()).toList(),
                        a.groups().stream().map(g -> g.groupName()).toList());
            }
        }
    }

    private static void listeners(PrintWriter out, TargetConfig cfg, NvmeTarget target) {
        List<InetSocketAddress> bound = target.boundAddresses();
        // bound can be longer than cfg.listeners(): an SPDK-shape --config opens its listeners over RPC
        for (int i = 0; i < bound.size(); i++) {
            InetSocketAddress a = bound.get(i);
            String host = a.getAddress().getHostAddress();
            boolean configured = i < cfg.listeners().size();
            IoMode m = configured ? cfg.listeners().get(i).ioMode() : IoMode.DEFAULT;
            out.printf(
                    "listening on %s://%s:%d%s%s%n",
                    configured
                            ? cfg.listeners().get(i).transport()
                            : target.listeners().get(i).portInfo().transportType() == PortInfo.TRTYPE_RDMA
                                    ? "rdma"
                                    : "tcp",
                    bracketed(host),
                    a.getPort(),
                    m.equals(IoMode.DEFAULT)
                            ? ""
                            : " (io engine " + m.engine() + (m.busyPoll() ? ", busy-poll" : "") + ")",
                    configured && cfg.listeners().get(i).secureChannel().tls()
                            ? " (TLS " + cfg.listeners().get(i).secureChannel().configName() + ")"
                            : "");
        }
    }

    private static void metrics(PrintWriter out, MetricsEndpoint m) {
        if (m == null) {
            return;
        }
        String host = m.address().getAddress().getHostAddress();
        out.printf(
                "metrics on http://%s:%d/metrics%n",
                bracketed(host), m.address().getPort());
    }

    /** An IPv6 address in brackets, as in a URI. */
    private static String bracketed(String host) {
        return host.contains(":") ? "[" + host + "]" : host;
    }
}

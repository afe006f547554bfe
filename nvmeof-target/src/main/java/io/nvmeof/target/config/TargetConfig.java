package io.nvmeof.target.config;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Everything a target runs with.
 *
 * @param listeners         ports to listen on
 * @param subsystems        NVM subsystems (the discovery subsystem always exists besides them)
 * @param memoryBudgetBytes the most namespace RAM all namespaces together may use; a write that needs more fails with
 *                          Capacity Exceeded. 0 picks the default, {@link #defaultMemoryBudget()}.
 * @param discoveryKatoMillis keep-alive timeout used for discovery controllers that connect with KATO 0 (nvmet: 120 s)
 * @param tlsKeys           the hosts' TLS PSKs, for listeners with TLS
 */
public record TargetConfig(
        List<ListenerConfig> listeners,
        List<SubsystemConfig> subsystems,
        long memoryBudgetBytes,
        int discoveryKatoMillis,
        List<TlsKeyConfig> tlsKeys) {
    public static final int DEFAULT_DISCOVERY_KATO_MILLIS = 120_000;

    public TargetConfig {
        listeners = listeners == null ? List.of() : List.copyOf(listeners);
        subsystems = subsystems == null ? List.of() : List.copyOf(subsystems);
        tlsKeys = tlsKeys == null ? List.of() : List.copyOf(tlsKeys);
        if (memoryBudgetBytes < 0) {
            throw new IllegalArgumentException("memory budget cannot be negative");
        }
        if (memoryBudgetBytes == 0) {
            memoryBudgetBytes = defaultMemoryBudget();
        }
        if (discoveryKatoMillis <= 0) {
            discoveryKatoMillis = DEFAULT_DISCOVERY_KATO_MILLIS;
        }
        Set<String> nqns = new HashSet<>();
        for (SubsystemConfig s : subsystems) {
            if (!nqns.add(s.nqn())) {
                throw new IllegalArgumentException("subsystem NQN used twice: " + s.nqn());
            }
            Set<Integer> nsids = new HashSet<>();
            for (NamespaceConfig n : s.namespaces()) {
                if (n.nsid() != 0 && !nsids.add(n.nsid())) {
                    throw new IllegalArgumentException("nsid " + n.nsid() + " used twice in " + s.nqn());
                }
            }
            for (AnaStateConfig a : s.anaStates()) {
                if (!listeners.isEmpty() && a.listener() > listeners.size()) {
                    throw new IllegalArgumentException("ANA state of group " + a.group() + " in " + s.nqn()
                            + " names listener " + a.listener() + ", but there are only " + listeners.size()
                            + " (listeners are numbered from 1 in configuration order)");
                }
            }
        }
    }

    public TargetConfig(
            List<ListenerConfig> listeners,
            List<SubsystemConfig> subsystems,
            long memoryBudgetBytes,
            int discoveryKatoMillis) {
        this(listeners, subsystems, memoryBudgetBytes, discoveryKatoMillis, List.of());
    }

    public TargetConfig(List<ListenerConfig> listeners, List<SubsystemConfig> subsystems) {
        this(listeners, subsystems, 0, 0);
    }

    /** This configuration with these TLS keys. */
    public TargetConfig withTlsKeys(List<TlsKeyConfig> keys) {
        return new TargetConfig(listeners, subsystems, memoryBudgetBytes, discoveryKatoMillis, keys);
    }

    /** Half of the machine's physical memory, read from /proc/meminfo (1 GiB if that cannot be read). */
    public static long defaultMemoryBudget() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    long kib = Long.parseLong(line.replaceAll("[^0-9]", ""));
                    return kib * 1024 / 2;
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            // fall through to the conservative default
        }
        return 1L << 30;
    }
}

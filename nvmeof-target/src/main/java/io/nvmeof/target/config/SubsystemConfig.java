package io.nvmeof.target.config;

import java.util.List;

/**
 * One NVM subsystem.
 *
 * @param nqn          the subsystem NQN (at most 223 bytes; not the discovery NQN; without the {@code nqn.}
 *                     prefix it is accepted with a warning, as nvmet accepts it)
 * @param allowAnyHost whether every host may connect; if false only {@code hosts} may
 * @param hosts        host NQNs allowed to connect when {@code allowAnyHost} is false
 * @param namespaces   its namespaces
 * @param serial       Identify SN (at most 20 ASCII characters; null: derived from the NQN)
 * @param model        Identify MN (at most 40 ASCII characters; null: "nvmeof-java")
 * @param anaStates    ANA group states per listener (a group without one is optimized on that listener)
 * @param listeners    the listeners hosts reach it on, by number in {@link TargetConfig#listeners()} from 1 (their
 *                     PORTIDs); null: every listener of the target, an empty list: none until one is added at run time
 * @param hostAuth     DH-HMAC-CHAP keys per host (docs/security.md); those hosts are allowed and must authenticate
 */
public record SubsystemConfig(
        String nqn,
        boolean allowAnyHost,
        List<String> hosts,
        List<NamespaceConfig> namespaces,
        String serial,
        String model,
        List<AnaStateConfig> anaStates,
        List<Integer> listeners,
        List<HostAuth> hostAuth) {
    public SubsystemConfig {
        if (nqn == null || nqn.isBlank()) {
            throw new IllegalArgumentException("a subsystem needs an NQN");
        }
        if (!nqn.startsWith("nqn.")) {
            // The spec's NQN starts with "nqn." (or is a UUID NQN, which does too); nvmet accepts any name but the
            // discovery NQN, and test suites rely on that: accepted, with a warning.
            System.getLogger("io.nvmeof.target")
                    .log(
                            System.Logger.Level.WARNING,
                            "subsystem NQN '" + nqn + "' does not start with 'nqn.' as the NVMe specification asks;"
                                    + " accepted as nvmet does");
        }
        if (nqn.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 223) {
            throw new IllegalArgumentException("an NQN has at most 223 bytes: " + nqn);
        }
        hosts = hosts == null ? List.of() : List.copyOf(hosts);
        namespaces = namespaces == null ? List.of() : List.copyOf(namespaces);
        anaStates = anaStates == null ? List.of() : List.copyOf(anaStates);
        if (listeners != null) {
            listeners = List.copyOf(listeners);
            for (int l : listeners) {
                if (l < 1 || l > 65535) {
                    throw new IllegalArgumentException("subsystem " + nqn + ": a listener number is 1..65535: " + l);
                }
            }
        }
        hostAuth = hostAuth == null ? List.of() : List.copyOf(hostAuth);
        java.util.Set<String> authHosts = new java.util.HashSet<>();
        for (HostAuth a : hostAuth) {
            if (!authHosts.add(a.hostNqn())) {
                throw new IllegalArgumentException("host " + a.hostNqn() + " has two DH-HMAC-CHAP settings on " + nqn);
            }
        }
        java.util.Set<Long> anaKeys = new java.util.HashSet<>();
        for (AnaStateConfig a : anaStates) {
            if (!anaKeys.add(((long) a.listener() << 32) | a.group())) {
                throw new IllegalArgumentException(
                        "ANA group " + a.group() + " has two states on listener " + a.listener());
            }
        }
        if (serial != null && (serial.length() > 20 || !serial.chars().allMatch(c -> c >= 0x20 && c < 0x7F))) {
            throw new IllegalArgumentException("serial must be at most 20 printable ASCII characters: " + serial);
        }
        if (model != null && (model.length() > 40 || !model.chars().allMatch(c -> c >= 0x20 && c < 0x7F))) {
            throw new IllegalArgumentException("model must be at most 40 printable ASCII characters: " + model);
        }
    }

    /** A subsystem whose ANA groups are optimized on every listener. */
    public SubsystemConfig(
            String nqn,
            boolean allowAnyHost,
            List<String> hosts,
            List<NamespaceConfig> namespaces,
            String serial,
            String model) {
        this(nqn, allowAnyHost, hosts, namespaces, serial, model, List.of(), null, List.of());
    }

    /** A subsystem reachable on every listener, without DH-HMAC-CHAP keys. */
    public SubsystemConfig(
            String nqn,
            boolean allowAnyHost,
            List<String> hosts,
            List<NamespaceConfig> namespaces,
            String serial,
            String model,
            List<AnaStateConfig> anaStates) {
        this(nqn, allowAnyHost, hosts, namespaces, serial, model, anaStates, null, List.of());
    }

    /** This subsystem with these ANA states. */
    public SubsystemConfig withAnaStates(List<AnaStateConfig> states) {
        return new SubsystemConfig(nqn, allowAnyHost, hosts, namespaces, serial, model, states, listeners, hostAuth);
    }

    /** This subsystem reachable only on these listeners (numbers from 1; empty: none yet). */
    public SubsystemConfig withListeners(List<Integer> numbers) {
        return new SubsystemConfig(nqn, allowAnyHost, hosts, namespaces, serial, model, anaStates, numbers, hostAuth);
    }

    /** This subsystem with these DH-HMAC-CHAP settings. */
    public SubsystemConfig withHostAuth(List<HostAuth> auth) {
        return new SubsystemConfig(nqn, allowAnyHost, hosts, namespaces, serial, model, anaStates, listeners, auth);
    }
}

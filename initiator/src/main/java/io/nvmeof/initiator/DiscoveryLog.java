package io.nvmeof.initiator;

import java.util.List;

/**
 * A discovery log page read consistently (nvmeof-protocol.md §3.3): every entry comes from the same generation.
 *
 * @param generation GENCTR
 * @param entries    the entries, in the controller's order
 */
public record DiscoveryLog(long generation, List<DiscoveryEntry> entries) {
    public DiscoveryLog {
        entries = List.copyOf(entries);
    }

    /** The entries naming NVM subsystems (SUBTYPE 2), the ones {@code nvme connect-all} would connect to. */
    public List<DiscoveryEntry> nvmSubsystems() {
        return entries.stream().filter(DiscoveryEntry::isNvmSubsystem).toList();
    }
}

package io.nvmeof.target.stats;

import java.util.List;

/**
 * The target's statistics at one moment ({@code NvmeTarget.stats()}): namespace memory against its budget, transport
 * connections accepted, and per subsystem, namespace and connected queue (a controller is its queues with one CNTLID).
 * Taking it costs no I/O anything: the queues count in their own fields and this reads them.
 */
public record TargetStats(
        long memoryUsedBytes,
        long memoryBudgetBytes,
        long connectionsAccepted,
        List<SubsystemStats> subsystems,
        List<NamespaceStats> namespaces,
        List<QueueStats> queues) {
    public TargetStats {
        subsystems = List.copyOf(subsystems);
        namespaces = List.copyOf(namespaces);
        queues = List.copyOf(queues);
    }
}

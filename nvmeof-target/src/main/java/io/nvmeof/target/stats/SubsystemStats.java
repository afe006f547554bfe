package io.nvmeof.target.stats;

import java.util.Map;

/**
 * One subsystem since the target started (closed queues included): successful reads and writes, errors by status,
 * asynchronous event notifications sent, keep-alive expiries, and what is connected now.
 */
public record SubsystemStats(
        String subsystem,
        int controllers,
        int queues,
        IoCounts io,
        Map<Integer, Long> errorsByStatus,
        long aensSent,
        long keepAliveExpiries) {
    public SubsystemStats {
        errorsByStatus = Map.copyOf(errorsByStatus);
    }
}

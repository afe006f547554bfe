package io.nvmeof.target.stats;

import java.util.Map;

/**
 * One connected queue (QID 0 is the admin queue): successful reads and writes, other commands, errors by status
 * (the key is the status with SCT and SC only, as {@code io.nvmeof.core.command.Status.of} builds it), commands in
 * flight and completion latency of reads, writes and other commands. Fabrics commands are not counted.
 */
public record QueueStats(
        String subsystem,
        int cntlid,
        String hostNqn,
        int qid,
        IoCounts io,
        long otherCommands,
        long inFlight,
        Map<Integer, Long> errorsByStatus,
        LatencyStats readLatency,
        LatencyStats writeLatency,
        LatencyStats otherLatency) {
    public QueueStats {
        errorsByStatus = Map.copyOf(errorsByStatus);
    }
}

package io.nvmeof.target;

import io.nvmeof.target.stats.IoCounts;
import io.nvmeof.target.stats.NamespaceStats;
import io.nvmeof.target.stats.QueueStats;
import io.nvmeof.target.stats.SubsystemStats;
import io.nvmeof.target.stats.TargetStats;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The target's statistics: the {@link QueueCounters} of every connected queue, the totals of queues that closed (so
 * subsystem and namespace counts never go back), and the admin-path events (AENs sent, keep-alive expiries,
 * connections accepted). One per {@link NvmeTarget}. Queues register at Connect and retire at close under this
 * object's monitor, and {@link #snapshot} reads under it too; the I/O path never touches it.
 */
final class StatsRegistry {
    /** What the closed queues of one subsystem, and its admin events, add up to. */
    private static final class Totals {
        IoCounts io = IoCounts.ZERO;
        final Map<Integer, Long> errors = new TreeMap<>();
        final Map<Integer, IoCounts> namespaces = new TreeMap<>();
        final AtomicLong aens = new AtomicLong();
        final AtomicLong keepAliveExpiries = new AtomicLong();
    }

    private final LinkedHashSet<QueueCounters> live = new LinkedHashSet<>();
    private final Map<String, Totals> totals = new ConcurrentHashMap<>();
    private final AtomicLong connectionsAccepted = new AtomicLong();

    private Totals totals(Subsystem s) {
        return totals.computeIfAbsent(s.nqn(), n -> new Totals());
    }

    void connectionAccepted() {
        connectionsAccepted.incrementAndGet();
    }

    void aenSent(Subsystem s) {
        totals(s).aens.incrementAndGet();
    }

    void keepAliveExpired(Subsystem s) {
        totals(s).keepAliveExpiries.incrementAndGet();
    }

    synchronized void register(QueueCounters q) {
        live.add(q);
    }

    /** The queue closed (called on its own thread, after its last completion): its counts go into the totals. */
    synchronized void retire(QueueCounters q) {
        if (!live.remove(q)) {
            return;
        }
        Totals t = totals(q.subsystem);
        t.io = t.io.plus(io(q));
        q.errorsByStatus().forEach((status, n) -> t.errors.merge(status, n, Long::sum));
        for (int nsid = 1; nsid <= q.maxNsid(); nsid++) {
            long[] ns = q.namespace(nsid);
            if (ns != null) {
                t.namespaces.merge(nsid, io(ns), IoCounts::plus);
            }
        }
    }

    private static IoCounts io(QueueCounters q) {
        return new IoCounts(
                q.count(QueueCounters.READS),
                q.count(QueueCounters.WRITES),
                q.count(QueueCounters.BYTES_READ),
                q.count(QueueCounters.BYTES_WRITTEN));
    }

    private static IoCounts io(long[] ns) {
        return new IoCounts(
                ns[QueueCounters.READS],
                ns[QueueCounters.WRITES],
                ns[QueueCounters.BYTES_READ],
                ns[QueueCounters.BYTES_WRITTEN]);
    }

    /** Everything now: the subsystems given (the discovery subsystem first), their namespaces and live queues. */
    synchronized TargetStats snapshot(List<Subsystem> subsystems, long memoryUsed, long memoryBudget) {
        List<QueueStats> queues = new ArrayList<>();
        Map<String, IoCounts> subsystemIo = new HashMap<>();
        Map<String, Map<Integer, Long>> subsystemErrors = new HashMap<>();
        Map<String, Map<Integer, IoCounts>> namespaceIo = new HashMap<>();
        Map<String, Integer> queueCount = new HashMap<>();
        for (QueueCounters q : live) {
            String nqn = q.subsystem.nqn();
            IoCounts io = io(q);
            Map<Integer, Long> errors = q.errorsByStatus();
            queues.add(new QueueStats(
                    nqn,
                    q.controller.cntlid(),
                    q.controller.hostNqn(),
                    q.qid,
                    io,
                    q.count(QueueCounters.OTHER),
                    q.inFlight(),
                    errors,
                    q.latency(QueueCounters.LATENCY_READ),
                    q.latency(QueueCounters.LATENCY_WRITE),
                    q.latency(QueueCounters.LATENCY_OTHER)));
            subsystemIo.merge(nqn, io, IoCounts::plus);
            errors.forEach((status, n) ->
                    subsystemErrors.computeIfAbsent(nqn, k -> new TreeMap<>()).merge(status, n, Long::sum));
            queueCount.merge(nqn, 1, Integer::sum);
            for (int nsid = 1; nsid <= q.maxNsid(); nsid++) {
                long[] ns = q.namespace(nsid);
                if (ns != null) {
                    namespaceIo.computeIfAbsent(nqn, k -> new TreeMap<>()).merge(nsid, io(ns), IoCounts::plus);
                }
            }
        }
        List<SubsystemStats> subs = new ArrayList<>();
        List<NamespaceStats> namespaces = new ArrayList<>();
        for (Subsystem s : subsystems) {
            String nqn = s.nqn();
            Totals t = totals(s);
            Map<Integer, Long> errors = new TreeMap<>(t.errors);
            subsystemErrors.getOrDefault(nqn, Map.of()).forEach((status, n) -> errors.merge(status, n, Long::sum));
            subs.add(new SubsystemStats(
                    nqn,
                    s.controllers().size(),
                    queueCount.getOrDefault(nqn, 0),
                    t.io.plus(subsystemIo.getOrDefault(nqn, IoCounts.ZERO)),
                    errors,
                    t.aens.get(),
                    t.keepAliveExpiries.get()));
            Map<Integer, IoCounts> liveNs = namespaceIo.getOrDefault(nqn, Map.of());
            for (var ns : s.namespaces()) {
                int nsid = ns.nsid();
                IoCounts io =
                        t.namespaces.getOrDefault(nsid, IoCounts.ZERO).plus(liveNs.getOrDefault(nsid, IoCounts.ZERO));
                namespaces.add(new NamespaceStats(nqn, nsid, io));
            }
        }
        return new TargetStats(memoryUsed, memoryBudget, connectionsAccepted.get(), subs, namespaces, queues);
    }
}

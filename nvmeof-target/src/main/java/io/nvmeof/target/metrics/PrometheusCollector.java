package io.nvmeof.target.metrics;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.stats.IoCounts;
import io.nvmeof.target.stats.LatencyStats;
import io.nvmeof.target.stats.NamespaceStats;
import io.nvmeof.target.stats.QueueStats;
import io.nvmeof.target.stats.SubsystemStats;
import io.nvmeof.target.stats.TargetStats;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Exemplars;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * Turns {@link NvmeTarget#stats()} into Prometheus metric families at scrape time (the metric names are listed in
 * docs/target-config.md, "Metrics and logs"). Nothing is recorded here: the queues count in their own fields, and a
 * scrape reads them, so the I/O path pays nothing for a scrape.
 */
public final class PrometheusCollector implements MultiCollector {
    private static final String[] QUEUE_LABELS = {"subsystem", "cntlid", "host", "qid"};

    private final NvmeTarget target;

    public PrometheusCollector(NvmeTarget target) {
        this.target = target;
    }

    @Override
    public MetricSnapshots collect() {
        TargetStats s = target.stats();
        MetricSnapshots.Builder out = MetricSnapshots.builder();
        out.metricSnapshot(gauge("nvmeof_memory_used_bytes", "namespace memory in use", s.memoryUsedBytes()));
        out.metricSnapshot(gauge(
                "nvmeof_memory_budget_bytes",
                "the most memory namespaces may use (memoryBudget)",
                s.memoryBudgetBytes()));
        out.metricSnapshot(CounterSnapshot.builder()
                .name("nvmeof_connections_accepted")
                .help("transport connections (queues) accepted")
                .dataPoint(counter(s.connectionsAccepted(), Labels.EMPTY))
                .build());

        // per subsystem, since the target started
        Families sub = new Families("nvmeof_subsystem_");
        for (SubsystemStats ss : s.subsystems()) {
            Labels l = Labels.of("subsystem", ss.subsystem());
            sub.gauge("controllers", "controllers connected", l, ss.controllers());
            sub.gauge("queues", "queues connected (admin and I/O)", l, ss.queues());
            sub.io(ss.io(), l);
            sub.errors(ss.errorsByStatus(), l);
            sub.counter("aens_sent", "asynchronous event notifications sent", l, ss.aensSent());
            sub.counter(
                    "keep_alive_expiries", "controllers torn down by keep-alive timeout", l, ss.keepAliveExpiries());
        }
        sub.addTo(out);

        Families ns = new Families("nvmeof_namespace_");
        for (NamespaceStats n : s.namespaces()) {
            ns.io(n.io(), Labels.of("subsystem", n.subsystem(), "nsid", Integer.toString(n.nsid())));
        }
        ns.addTo(out);

        // per connected queue (a controller is its queues with one CNTLID)
        Families q = new Families("nvmeof_queue_");
        HistogramSnapshot.Builder lat = HistogramSnapshot.builder()
                .name("nvmeof_queue_latency_seconds")
                .help("command latency from capsule arrival to completion, by op (read, write, other)");
        boolean anyLatency = false;
        for (QueueStats qs : s.queues()) {
            Labels l = Labels.of(QUEUE_LABELS, new String[] {
                qs.subsystem(), Integer.toString(qs.cntlid()), qs.hostNqn(), Integer.toString(qs.qid())
            });
            q.io(qs.io(), l);
            q.counter("other_commands", "commands other than Read and Write completed", l, qs.otherCommands());
            q.gauge("in_flight", "commands received and not completed yet", l, qs.inFlight());
            q.errors(qs.errorsByStatus(), l);
            lat.dataPoint(histogram(qs.readLatency(), l.add("op", "read")));
            lat.dataPoint(histogram(qs.writeLatency(), l.add("op", "write")));
            lat.dataPoint(histogram(qs.otherLatency(), l.add("op", "other")));
            anyLatency = true;
        }
        q.addTo(out);
        if (anyLatency) {
            out.metricSnapshot(lat.build());
        }
        return out.build();
    }

    private static GaugeSnapshot gauge(String name, String help, long value) {
        return GaugeSnapshot.builder()
                .name(name)
                .help(help)
                .dataPoint(GaugeDataPointSnapshot.builder().value(value).build())
                .build();
    }

    private static CounterDataPointSnapshot counter(long value, Labels labels) {
        return CounterDataPointSnapshot.builder().value(value).labels(labels).build();
    }

    private static HistogramDataPointSnapshot histogram(LatencyStats h, Labels labels) {
        long[] ns = LatencyStats.UPPER_BOUNDS_NANOS;
        double[] bounds = new double[ns.length + 1];
        for (int i = 0; i < ns.length; i++) {
            bounds[i] = ns[i] / 1e9;
        }
        bounds[ns.length] = Double.POSITIVE_INFINITY;
        return new HistogramDataPointSnapshot(
                ClassicHistogramBuckets.of(bounds, h.bucketCounts()), h.sumNanos() / 1e9, labels, Exemplars.EMPTY, 0);
    }

    /** The families of one prefix, filled one data point at a time in a fixed order. */
    private static final class Families {
        private final String prefix;
        private final Map<String, Object> builders = new LinkedHashMap<>();

        Families(String prefix) {
            this.prefix = prefix;
        }

        void counter(String name, String help, Labels labels, long value) {
            ((CounterSnapshot.Builder) builders.computeIfAbsent(
                            name,
                            n -> CounterSnapshot.builder().name(prefix + n).help(help)))
                    .dataPoint(PrometheusCollector.counter(value, labels));
        }

        void gauge(String name, String help, Labels labels, long value) {
            ((GaugeSnapshot.Builder) builders.computeIfAbsent(
                            name, n -> GaugeSnapshot.builder().name(prefix + n).help(help)))
                    .dataPoint(GaugeDataPointSnapshot.builder()
                            .value(value)
                            .labels(labels)
                            .build());
        }

        void io(IoCounts io, Labels l) {
            count("reads", "Read commands completed successfully", l, io, IoCounts::reads);
            count("writes", "Write commands completed successfully", l, io, IoCounts::writes);
            count("read_bytes", "bytes read by successful Read commands", l, io, IoCounts::bytesRead);
            count("written_bytes", "bytes written by successful Write commands", l, io, IoCounts::bytesWritten);
        }

        private void count(String name, String help, Labels l, IoCounts io, ToLongFunction<IoCounts> f) {
            counter(name, help, l, f.applyAsLong(io));
        }

        void errors(Map<Integer, Long> byStatus, Labels l) {
            if (byStatus.isEmpty()) {
                builders.computeIfAbsent("errors", n -> errorsFamily());
            }
            byStatus.forEach((status, n) -> ((CounterSnapshot.Builder)
                            builders.computeIfAbsent("errors", k -> errorsFamily()))
                    .dataPoint(PrometheusCollector.counter(
                            n,
                            l.add("sct", hex(Status.sct(status)))
                                    .add("sc", hex(Status.sc(status)))
                                    .add("status", Status.name(status)))));
        }

        private CounterSnapshot.Builder errorsFamily() {
            return CounterSnapshot.builder()
                    .name(prefix + "errors")
                    .help("commands completed with an error status, by status (SCT, SC and its name)");
        }

        void addTo(MetricSnapshots.Builder out) {
            List<Object> all = new ArrayList<>(builders.values());
            for (Object b : all) {
                if (b instanceof CounterSnapshot.Builder c) {
                    out.metricSnapshot(c.build());
                } else {
                    out.metricSnapshot(((GaugeSnapshot.Builder) b).build());
                }
            }
        }

        private static String hex(int v) {
            return "0x" + Integer.toHexString(v);
        }
    }
}

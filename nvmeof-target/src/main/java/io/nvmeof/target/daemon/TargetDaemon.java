package io.nvmeof.target.daemon;

import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.AnaStateConfig;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.Sizes;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.config.TlsKeyConfig;
import io.nvmeof.target.metrics.MetricsEndpoint;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nvmeof-target}: the RAM-backed NVMe-oF target daemon. Starts from a JSON config file or from flags for the
 * common case, logs connects and disconnects, and stops cleanly on SIGTERM or Ctrl-C.
 */
@Command(
        name = "nvmeof-target",
        mixinStandardHelpOptions = true,
        version = "nvmeof-target 0.1.0",
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "A RAM-backed NVMe over Fabrics target that the Linux kernel host (nvme connect), SPDK and our "
                    + "initiator can connect to.",
            "",
            "Examples:",
            "  nvmeof-target --listen tcp://0.0.0.0:4420 --namespace size=1G",
            "  nvmeof-target --nqn nqn.2024-01.io.nvmeof:disk1 --namespace size=1T --namespace size=64G,bs=512 "
                    + "--allow-host nqn.2014-08.org.nvmexpress:uuid:...",
            "  nvmeof-target --config target.json"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:stopped cleanly", "1:could not start (e.g. port in use)", "2:bad arguments or config"})
public final class TargetDaemon implements Callable<Integer> {
    /** The subsystem NQN used when only flags are given. */
    public static final String DEFAULT_NQN = "nqn.2024-01.io.nvmeof:disk1";

    @Spec
    CommandSpec spec;

    @Option(
            names = {"-c", "--config"},
            paramLabel = "FILE",
            description = "JSON config file (listeners, subsystems, namespaces, allowed hosts, memory budget). "
                    + "See docs/target-config.md.")
    Path config;

    @Option(
            names = {"-l", "--listen"},
            paramLabel = "URI",
            description = "Listen address, repeatable (default tcp://0.0.0.0:4420).")
    List<String> listen = new ArrayList<>();

    @Option(
            names = {"-n", "--nqn"},
            paramLabel = "NQN",
            description = "Subsystem NQN (default " + DEFAULT_NQN + ").")
    String nqn;

    @Option(
            names = "--namespace",
            paramLabel = "SPEC",
            description = "A namespace, repeatable: size=1G[,bs=4096|512][,nsid=N][,uuid=U][,ro][,ana-group=G]"
                    + "[,file=PATH][,prealloc]. Memory is used only for blocks written; with prealloc all of it is "
                    + "taken at start, as SPDK's malloc bdev does. With file=PATH the namespace lives in "
                    + "that file (memory-mapped; created sparse if missing, an existing one must have the same size) "
                    + "and keeps its data across restarts.")
    List<String> namespaces = new ArrayList<>();

    @Option(
            names = "--ana-state",
            paramLabel = "SPEC",
            description = "An ANA group's state on one listener, repeatable: listener=P,group=G,state=S with P the "
                    + "listener's number (1 = the first --listen), S optimized, non-optimized, inaccessible, "
                    + "persistent-loss or change. Groups are optimized on every listener unless set.")
    List<String> anaStates = new ArrayList<>();

    @Option(
            names = "--allow-host",
            paramLabel = "HOSTNQN",
            description = "Only these hosts may connect (repeatable). Without it any host may connect.")
    List<String> allowHosts = new ArrayList<>();

    @Option(
            names = "--tls",
            paramLabel = "MODE",
            description = "TLS 1.3 with PSKs on every tcp --listen that does not say ?tls=: required, allowed or none "
                    + "(default none). Hosts need --tls-key.")
    String tls;

    @Option(
            names = "--tls-key",
            paramLabel = "SPEC",
            description = "A host's TLS PSK, repeatable (for listeners with ?tls=required|allowed): "
                    + "host=NQN,psk=NVMeTLSkey-1:...: or host=NQN,psk-file=PATH, optionally ,subsystem=NQN (default: "
                    + "every subsystem) and ,derivation=compat (keys from nvme-cli before 2.16; default rfc8446). "
                    + "Also with --config.")
    List<String> tlsKeys = new ArrayList<>();

    @Option(
            names = "--dhchap-host",
            paramLabel = "SPEC",
            description = "A host that must authenticate with DH-HMAC-CHAP (repeatable; it is allowed too): "
                    + "host=NQN,key-file=PATH[,ctrl-key-file=PATH][,hashes=sha256:sha384][,dhgroups=null:ffdhe2048]. "
                    + "Each file holds a DHHC-1 secret (bin/nvmeof gen-dhchap-key), mode 0600. ctrl-key-file makes "
                    + "bidirectional authentication possible. key=SECRET and ctrl-key=SECRET take the secret itself "
                    + "(visible in ps: prefer the files). See docs/security.md.")
    List<String> dhchapHosts = new ArrayList<>();

    @Option(
            names = "--memory-budget",
            paramLabel = "SIZE",
            description = "Most RAM all namespaces may use together; writes beyond it fail with Capacity Exceeded "
                    + "(default: half the machine's memory).")
    String memoryBudget;

    @Option(
            names = "--max-queue-size",
            paramLabel = "N",
            description = "Largest I/O queue a host may connect (default ${DEFAULT-VALUE}).")
    int maxQueueSize = ListenerOptions.DEFAULT_MAX_QUEUE_SIZE;

    @Option(
            names = "--in-capsule-data-size",
            paramLabel = "SIZE",
            description = "In-capsule data accepted on I/O queues (default 16k).")
    String inCapsuleDataSize;

    @Option(
            names = "--io-engine",
            paramLabel = "ENGINE",
            description = "Event-loop engine of every listener: auto, epoll, io_uring or nio (default auto: the best "
                    + "available). An engine asked for by name that cannot load is an error.")
    String ioEngine;

    @Option(
            names = "--busy-poll",
            description = "Busy-poll on the queue threads while their queues are in use (fio's --hipri) instead of "
                    + "polling 200 us after each event and then sleeping: lowest latency, but each I/O thread spins one "
                    + "core. One I/O thread per two cores unless configured.")
    boolean busyPoll;

    // ---- metrics and logs (docs/target-config.md, "Metrics and logs") ----

    @Option(
            names = "--metrics",
            paramLabel = "ADDR:PORT",
            description = "Serve Prometheus metrics at http://ADDR:PORT/metrics (a bare PORT means 127.0.0.1). Off by "
                    + "default; an address that is not loopback also needs --metrics-allow-remote.")
    String metrics;

    @Option(
            names = "--metrics-allow-remote",
            description = "Allow --metrics on an address that is not loopback (anyone who reaches it reads the "
                    + "metrics).")
    boolean metricsAllowRemote;

    @Option(
            names = "--log-format",
            paramLabel = "text|json",
            description = "Log lines as text (default) or as one JSON object per line (time, level, logger, message, "
                    + "thrown).")
    String logFormat;

    private volatile MetricsEndpoint metricsEndpoint;

    // ---- management over JSON-RPC (io.nvmeof.target.rpc; docs/target-config.md "Management (JSON-RPC)") ----

    /** The default RPC socket, as SPDK's /var/tmp/spdk.sock. */
    public static final String DEFAULT_RPC_SOCKET = "/var/tmp/nvmeof-target.sock";

    @Option(
            names = "--rpc-socket",
            paramLabel = "PATH",
            description = "JSON-RPC Unix socket, mode 0600 (default " + DEFAULT_RPC_SOCKET + ", SPDK's methods).")
    Path rpcSocket;

    @Option(
            names = "--rpc-listen",
            paramLabel = "ADDR:PORT",
            description = "Also serve JSON-RPC on TCP (loopback only unless --rpc-allow-remote).")
    String rpcListen;

    @Option(names = "--rpc-allow-remote", description = "Let --rpc-listen use a non-loopback address.")
    boolean rpcAllowRemote;

    @Option(names = "--no-rpc", description = "No JSON-RPC server.")
    boolean noRpc;

    /** The config file in SPDK's save_config shape, replayed after start; null for our own format. */
    private com.fasterxml.jackson.databind.JsonNode spdkConfig;

    private volatile io.nvmeof.target.rpc.RpcServer rpcServer;

    /** The engines --io-engine accepts (the TCP transport's; see transport-tcp/README.md). */
    public static final List<String> IO_ENGINES = List.of("auto", "epoll", "io_uring", "nio");

    /** Lets tests stop a running daemon without a signal. */
    private final CountDownLatch stop = new CountDownLatch(1);

    private volatile NvmeTarget running;

    public static void main(String[] args) {
        // One line per log record: "2026-11-21 12:00:00 INFO io.nvmeof.target.X: message".
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tF %1$tT %4$s %3$s: %5$s%6$s%n");
        }
        System.exit(run(args));
    }

    /** Runs the daemon; returns its exit code. */
    public static int run(String... args) {
        return commandLine(new TargetDaemon()).execute(args);
    }

    static CommandLine commandLine(TargetDaemon daemon) {
        CommandLine cl = new CommandLine(daemon);
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            if (ex instanceof IllegalArgumentException) {
                err.println("nvmeof-target: " + ex.getMessage());
                return 2;
            }
            if (ex instanceof IOException) {
                err.println("nvmeof-target: " + ex.getMessage());
                return 1;
            }
            err.println("nvmeof-target: unexpected error: " + ex);
            ex.printStackTrace(err);
            return 1;
        });
        return cl;
    }

    /** Builds the configuration from the file or the flags, with the file's and the flags' TLS keys. */
    TargetConfig buildConfig() {
        List<TlsKeyConfig> keys = new ArrayList<>();
        for (String spec : tlsKeys) {
            keys.add(TlsKeyConfig.parse(spec));
        }
        TargetConfig cfg = buildConfigWithoutFlagKeys();
        if (keys.isEmpty()) {
            return cfg;
        }
        List<TlsKeyConfig> all = new ArrayList<>(cfg.tlsKeys());
        all.addAll(keys);
        return cfg.withTlsKeys(all);
    }

    private TargetConfig buildConfigWithoutFlagKeys() {
        boolean flags = nqn != null
                || !namespaces.isEmpty()
                || !allowHosts.isEmpty()
                || !dhchapHosts.isEmpty()
                || !anaStates.isEmpty()
                || !listen.isEmpty()
                || tls != null
                || inCapsuleDataSize != null
                || maxQueueSize != ListenerOptions.DEFAULT_MAX_QUEUE_SIZE;
        long budget = memoryBudget == null ? 0 : Sizes.parse(memoryBudget);
        if (rpcListen != null) {
            io.nvmeof.target.rpc.RpcStartup.tcpAddress(rpcListen, rpcAllowRemote); // checked before anything starts
        }
        if (config != null) {
            if (flags) {
                throw new IllegalArgumentException("--config cannot be combined with --listen/--nqn/--namespace/"
                        + "--allow-host/--dhchap-host/--ana-state/--max-queue-size/--in-capsule-data-size/--tls: put"
                        + " those in the file");
            }
            spdkConfig = io.nvmeof.target.rpc.SpdkConfigFile.readIfSpdkShape(config);
            TargetConfig fromFile =
                    spdkConfig != null ? new TargetConfig(List.of(), List.of(), 0, 0) : ConfigFile.load(config);
            List<TlsKeyConfig> fileKeys = fromFile.tlsKeys();
            if (ioEngine != null || busyPoll) {
                // The flags override the file's per-listener ioEngine/busyPoll for every listener.
                IoMode mode = ioMode();
                List<ListenerConfig> ls = new ArrayList<>();
                for (ListenerConfig l : fromFile.listeners()) {
                    ls.add(l.withIoMode(new IoMode(
                            ioEngine != null ? mode.engine() : l.ioMode().engine(),
                            busyPoll || l.ioMode().busyPoll())));
                }
                fromFile = new TargetConfig(
                        ls,
                        fromFile.subsystems(),
                        fromFile.memoryBudgetBytes(),
                        fromFile.discoveryKatoMillis(),
                        fileKeys);
            }
            if (budget == 0) {
                return fromFile;
            }
            return new TargetConfig(
                    fromFile.listeners(), fromFile.subsystems(), budget, fromFile.discoveryKatoMillis(), fileKeys);
        }
        IoMode mode = ioMode();
        int inCapsule = inCapsuleDataSize == null
                ? ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE
                : (int) Sizes.parse(inCapsuleDataSize);
        List<ListenerConfig> listeners = new ArrayList<>();
        for (String uri : listen.isEmpty() ? List.of("tcp://0.0.0.0:" + ListenerConfig.DEFAULT_PORT) : listen) {
            ListenerConfig lc =
                    ListenerConfig.parse(uri, maxQueueSize, inCapsule).withIoMode(mode);
            if (tls != null && !uri.contains("?tls=") && "tcp".equals(lc.transport())) {
                lc = lc.withSecureChannel(io.nvmeof.core.tls.SecureChannel.ofConfigName(tls));
            }
            listeners.add(lc);
        }
        List<NamespaceConfig> ns = new ArrayList<>();
        for (int i = 0; i < namespaces.size(); i++) {
            try {
                ns.add(NamespaceSpec.parse(namespaces.get(i), i + 1));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--namespace " + namespaces.get(i) + ": " + e.getMessage());
            }
        }
        if (ns.isEmpty()) {
            throw new IllegalArgumentException("no namespace: add e.g. --namespace size=1G (or use --config FILE)");
        }
        List<AnaStateConfig> ana = new ArrayList<>();
        for (String spec : anaStates) {
            try {
                ana.add(AnaStateSpec.parse(spec));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--ana-state " + spec + ": " + e.getMessage());
            }
        }
        List<io.nvmeof.target.config.HostAuth> auth = new ArrayList<>();
        for (String spec : dhchapHosts) {
            auth.add(DhchapHostSpec.parse(spec));
        }
        SubsystemConfig subsystem = new SubsystemConfig(
                nqn == null ? DEFAULT_NQN : nqn,
                allowHosts.isEmpty() && auth.isEmpty(),
                allowHosts,
                ns,
                null,
                null,
                ana,
                null, // every listener the flags name
                auth);
        return new TargetConfig(listeners, List.of(subsystem), budget, 0);
    }

    /** --io-engine and --busy-poll, checked. */
    IoMode ioMode() {
        return new IoMode(checkEngine(ioEngine, "--io-engine"), busyPoll);
    }

    /**
     * Checks an engine name (null: auto).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static String checkEngine(String engine, String what) {
        if (engine == null) {
            return "auto";
        }
        String e = engine.trim().toLowerCase(Locale.ROOT);
        if (!IO_ENGINES.contains(e)) {
            throw new IllegalArgumentException(
                    what + " must be one of " + String.join(", ", IO_ENGINES) + ", not '" + engine + "'");
        }
        return e;
    }

    @Override
    public Integer call() throws IOException {
        TargetConfig cfg = buildConfig();
        boolean jsonLogs = checkLogFormat(logFormat);
        MetricsAddress metricsAt = metrics == null ? null : MetricsAddress.parse(metrics);
        if (jsonLogs) {
            JsonLogFormatter.install();
        }
        PrintWriter out = spec.commandLine().getOut();
        NvmeTarget target = NvmeTarget.create(cfg);
        try {
            target.start();
            if (metricsAt != null) {
                metricsEndpoint = MetricsEndpoint.start(target, metricsAt.host(), metricsAt.port(), metricsAllowRemote);
            }
        } catch (IOException | RuntimeException e) {
            target.close();
            throw e;
        }
        running = target;
        try {
            rpcServer = io.nvmeof.target.rpc.RpcStartup.start(
                    target, spdkConfig, noRpc, rpcSocket, DEFAULT_RPC_SOCKET, rpcListen, rpcAllowRemote, out);
        } catch (IOException | RuntimeException e) {
            target.close();
            throw e;
        }
        java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        Thread hook = new Thread(
                () -> {
                    // SIGTERM / Ctrl-C: close every queue and listener, then let the JVM exit.
                    out.println("stopping");
                    out.flush();
                    stopOnce(target, closed);
                    out.println("stopped");
                    out.flush();
                    stop.countDown();
                },
                "nvmeof-target-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        StartupBanner.print(out, cfg, target, metricsEndpoint);
        out.println("ready (Ctrl-C to stop)");
        out.flush();
        try {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException alreadyShuttingDown) {
            return 0; // the hook closes the target and reports it
        }
        stopOnce(target, closed);
        out.println("stopped");
        out.flush();
        return 0;
    }

    /** Stops a daemon started with {@link #call()} (for tests). */
    void stop() {
        stop.countDown();
    }

    NvmeTarget target() {
        return running;
    }

    /** The metrics endpoint, or null without --metrics. */
    MetricsEndpoint metricsEndpoint() {
        return metricsEndpoint;
    }

    /** --log-format: true for json, false for text. */
    static boolean checkLogFormat(String format) {
        if (format == null || format.equals("text")) {
            return false;
        }
        if (format.equals("json")) {
            return true;
        }
        throw new IllegalArgumentException("--log-format must be text or json, not '" + format + "'");
    }

    private void stopOnce(NvmeTarget target, java.util.concurrent.atomic.AtomicBoolean closed) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        MetricsEndpoint m = metricsEndpoint;
        if (m != null) {
            m.close();
        }
        if (rpcServer != null) {
            rpcServer.close();
        }
        try {
            target.close();
        } catch (RuntimeException e) {
            System.err.println("nvmeof-target: error while stopping: " + e);
        }
    }
}

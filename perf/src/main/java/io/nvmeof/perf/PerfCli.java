package io.nvmeof.perf;

import com.fasterxml.jackson.databind.SerializationFeature;
import io.nvmeof.initiator.NvmeException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nvmeof-perf}: a fio-like benchmark for NVMe-oF targets. {@code nvmeof-perf [fio options]} runs one
 * workload; {@code nvmeof-perf compare} runs the same workloads over several setups and prints them side by side.
 */
@Command(
        name = "nvmeof-perf",
        mixinStandardHelpOptions = true,
        version = FioOutput.VERSION,
        sortOptions = false,
        usageHelpAutoWidth = true,
        subcommands = CompareCommand.class,
        description = {
            "Measure an NVMe-oF target like fio does: IOPS, bandwidth, latency percentiles, and the CPU "
                    + "each I/O costs on the initiator and on the target.",
            "",
            "Examples:",
            "  nvmeof-perf --rw=randread --bs=4k --iodepth=32 --runtime=10 --ramp_time=2",
            "  nvmeof-perf --target nvme+tcp://192.0.2.10:4420/nqn.2024-01.io.nvmeof:disk1 --rw randrw "
                    + "--rwmixread 70 --numjobs 4 --output-format json",
            "  nvmeof-perf --rw=randwrite --bs=16k --size=64m --verify=crc32c",
            "  nvmeof-perf compare                      (about a minute: tcp vs tcp-digest)",
            "  nvmeof-perf compare --setups all --iodepth 1,4,16,64 --bs 4k,128k --report report.html"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:the run failed (I/O error, verify mismatch, target unreachable)", "2:bad options"})
public final class PerfCli implements Callable<Integer> {
    @Mixin
    WorkloadOptions common = new WorkloadOptions();

    @Option(
            names = "--rw",
            paramLabel = "PATTERN",
            description = "read, write, randread, randwrite, rw, randrw " + "(default ${DEFAULT-VALUE}).")
    String rw = "randread";

    @Option(
            names = "--bs",
            paramLabel = "SIZE",
            description = "Bytes per I/O: 4k, 128k, 1m (default ${DEFAULT-VALUE}).")
    String bs = "4k";

    @Option(
            names = "--iodepth",
            paramLabel = "N",
            description = "I/Os in flight per job, 1..1023 (default " + "${DEFAULT-VALUE}).")
    String iodepth = "1";

    @Option(
            names = "--verify",
            paramLabel = "crc32c",
            description = "Write blocks with a CRC32C header, read them "
                    + "back and check them; a mismatch fails the run (exit 1) naming the LBA.")
    String verify;

    @Option(
            names = "--setup",
            paramLabel = "NAME",
            description =
                    "How to reach the target: tcp (default), "
                            + "tcp-io_uring, tcp-digest, rdma (the default for an nvme+rdma:// --target), or any of them with -hipri.")
    String setup;

    @Option(
            names = "--controllers",
            paramLabel = "N",
            description = "Open N controllers (connections) to the target, each with --nr_io_queues I/O queues, and "
                    + "run one job per queue; instead of --numjobs (default: one controller per job).")
    String controllers;

    @Option(
            names = "--nr_io_queues",
            paramLabel = "M",
            description = "I/O queues per controller, each driven by its own job (nvme-cli's --nr-io-queues, "
                    + "spdk_nvme_perf's -P); jobs = controllers x M (default 1).")
    String nrIoQueues;

    @Option(
            names = "--idle_seconds",
            paramLabel = "TIME",
            description = "Before the I/O, hold every queue connected with no I/O for this long and report the CPU "
                    + "both sides used meanwhile (default 0: no idle phase).")
    String idleSeconds;

    PrintStream out = System.out;
    PrintStream err = System.err;

    public static void main(String[] args) {
        System.exit(run(System.out, System.err, args));
    }

    /** Runs the tool; returns the exit code. */
    public static int run(PrintStream out, PrintStream err, String... args) {
        // the initiator logs every connect and close at INFO: keep the report clean, warnings still show
        java.util.logging.Logger.getLogger("io.nvmeof").setLevel(java.util.logging.Level.WARNING);
        PerfCli cli = new PerfCli();
        cli.out = out;
        cli.err = err;
        CommandLine cl = new CommandLine(cli);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setParameterExceptionHandler((ex, a) -> {
            err.println("nvmeof-perf: " + ex.getMessage());
            err.println("(nvmeof-perf --help lists the options)");
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof IllegalArgumentException) {
                err.println("nvmeof-perf: " + ex.getMessage());
                return 2;
            }
            if (ex instanceof NvmeException || ex instanceof IOException) {
                err.println("nvmeof-perf: " + ex.getMessage());
                return 1;
            }
            err.println("nvmeof-perf: unexpected error: " + ex);
            ex.printStackTrace(err);
            return 1;
        });
        return cl.execute(args);
    }

    static boolean verifyFlag(String verify) {
        if (verify == null) {
            return false;
        }
        return switch (verify.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "crc32c", "crc32c-intel" -> true;
            case "0", "none", "" -> false;
            default -> throw Units.bad("verify", verify, "crc32c (the only verify method implemented)");
        };
    }

    @Override
    public Integer call() throws Exception {
        boolean doVerify = verifyFlag(verify);
        Workload w = common.workload(rw, bs, iodepth, "10", doVerify ? "0" : "2", doVerify);
        Topology topo = topology(w);
        w = w.withJobs(topo.queues());
        Setup s = Setup.named(
                setup != null
                        ? setup
                        : common.target != null
                                        && common.target
                                                .toLowerCase(java.util.Locale.ROOT)
                                                .startsWith("nvme+rdma:")
                                ? "rdma"
                                : "tcp");
        if (WorkloadOptions.flag("hipri", common.hipri) && !s.hipri()) {
            s = s.withHipri();
        }
        boolean groupReporting = WorkloadOptions.flag("group_reporting", common.groupReporting);
        boolean embedded = common.target == null;
        String reason = s.unavailableReason(embedded);
        if (reason != null) {
            err.println("nvmeof-perf: setup " + s.name() + " cannot run here: " + reason);
            return 1;
        }
        if (!embedded) {
            io.nvmeof.initiator.NvmeUri.parse(common.target); // a malformed URI is a bad option (exit 2)
            String mismatch = transportMismatch(s, common.target);
            if (mismatch != null) {
                throw new IllegalArgumentException("invalid value '" + s.name() + "' for --setup: " + mismatch);
            }
        }
        Machine machine = Machine.here();
        Consumer<String> progress = liveProgress(w, err);
        RunResult r;
        EmbeddedTarget t = null;
        try {
            String uri = common.target;
            if (embedded) {
                t = EmbeddedTarget.start(s.transport(), common.embeddedNamespaceBytes(), s.effectiveTargetArgs());
                uri = t.uri();
            }
            r = Runner.run(w, topo, s, uri, embedded, progress);
        } finally {
            if (progress != null) {
                err.print("\r\033[K");
                err.flush();
            }
            if (t != null) {
                t.close();
            }
        }
        String text;
        if (common.json()) {
            text = FioOutput.JSON
                            .writer()
                            .with(SerializationFeature.INDENT_OUTPUT)
                            .writeValueAsString(FioOutput.json(r, groupReporting, machine))
                    + "\n";
        } else {
            text = FioOutput.human(r, groupReporting, machine);
        }
        write(common.output, text, out);
        if (r.failure() != null) {
            err.println("nvmeof-perf: " + r.failure());
            return 1;
        }
        return 0;
    }

    /** The controllers × queues layout and the idle phase from the options; fio's one controller per job by default. */
    Topology topology(Workload w) {
        long idle = idleSeconds == null ? 0 : Units.timeNanos("idle_seconds", idleSeconds);
        if (controllers == null && nrIoQueues == null) {
            return new Topology(w.numjobs(), 1, idle);
        }
        if (w.numjobs() != 1) {
            throw new IllegalArgumentException(
                    "--numjobs and --controllers/--nr_io_queues both set the jobs: use --controllers N "
                            + "--nr_io_queues M (N x M jobs, one per queue) or --numjobs alone");
        }
        int c = controllers == null ? 1 : Units.integer("controllers", controllers, 1, Topology.MAX_CONTROLLERS);
        int q = nrIoQueues == null
                ? 1
                : Units.integer("nr_io_queues", nrIoQueues, 1, io.nvmeof.initiator.NvmeUri.MAX_QUEUES);
        if (c * q > Topology.MAX_QUEUES) {
            throw new IllegalArgumentException("--controllers " + c + " x --nr_io_queues " + q + " = " + c * q
                    + " queues: at most " + Topology.MAX_QUEUES + " in one run");
        }
        return new Topology(c, q, idle);
    }

    /** Why {@code setup} cannot reach {@code targetUri} (its scheme names another transport), or null. */
    static String transportMismatch(Setup setup, String targetUri) {
        String t = io.nvmeof.initiator.NvmeUri.parse(targetUri).transport();
        return t.equals(setup.transport())
                ? null
                : "it uses " + setup.transport() + " and the target is nvme+" + t + "://";
    }

    static void write(String file, String text, PrintStream out) throws IOException {
        if (file == null || file.equals("-")) {
            out.print(text);
            out.flush();
        } else {
            Files.writeString(Path.of(file), text, StandardCharsets.UTF_8);
        }
    }

    /** A live status line on a terminal, for runs longer than a few seconds. */
    static Consumer<String> liveProgress(Workload w, PrintStream err) {
        if (System.console() == null || w.runtimeNanos() + w.rampNanos() < 3_000_000_000L && !w.verify()) {
            return null;
        }
        return line -> {
            err.print("\r\033[K" + line);
            err.flush();
        };
    }
}

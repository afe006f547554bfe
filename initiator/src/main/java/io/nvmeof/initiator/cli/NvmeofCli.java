package io.nvmeof.initiator.cli;

import io.nvmeof.initiator.NvmeException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code nvmeof}: talk to any NVMe-oF target from the command line, with nvme-cli's verbs and option names where they
 * exist. Output is human-readable by default and JSON with {@code --output-format json}. Exit codes: 0 success, 1 the
 * target could not be reached or failed the command, 2 bad arguments.
 */
@Command(
        name = "nvmeof",
        mixinStandardHelpOptions = true,
        version = "nvmeof 0.1.0",
        usageHelpAutoWidth = true,
        description = {
            "An NVMe over Fabrics host in Java: discover, inspect and read/write any NVMe-oF target "
                    + "(our own, Linux nvmet, SPDK).",
            "",
            "URIs look like nvme+tcp://HOST[:PORT][/SUBSYSTEM-NQN][?nsid=1&queues=4&digest=header,data&timeout=30s]"
                    + " (port 4420 by default; no NQN: the discovery controller).",
            "",
            "Examples:",
            "  nvmeof discover nvme+tcp://192.0.2.10:4420",
            "  nvmeof list nvme+tcp://192.0.2.10/nqn.2024-01.io.nvmeof:disk1",
            "  nvmeof read nvme+tcp://192.0.2.10/nqn.2024-01.io.nvmeof:disk1 --start-block 0 --data-size 4096 > blk0",
            "  nvmeof gen-dhchap-key --hmac 1 --nqn nqn.2014-08.org.nvmexpress:uuid:..."
        },
        subcommands = {
            DiscoverCommand.class,
            ListCommand.class,
            IdCtrlCommand.class,
            IdNsCommand.class,
            ReadCommand.class,
            WriteCommand.class,
            GenTlsKeyCommand.class,
            CheckTlsKeyCommand.class,
            GenDhchapKeyCommand.class
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:connection failed or the target failed the command", "2:bad arguments"})
public final class NvmeofCli {
    /** Where binary data comes from and goes to (stdin/stdout unless a test says otherwise). */
    static final ThreadLocal<InputStream> STDIN = ThreadLocal.withInitial(() -> System.in);

    static final ThreadLocal<OutputStream> STDOUT = ThreadLocal.withInitial(() -> System.out);

    public static void main(String[] args) {
        // One line per log record, and only warnings: the CLI's own output is what matters.
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s %3$s: %5$s%6$s%n");
        }
        java.util.logging.Logger.getLogger("io.nvmeof").setLevel(java.util.logging.Level.WARNING);
        System.exit(run(System.in, System.out, System.err, args));
    }

    /** Runs the CLI with the given streams; returns the exit code. */
    public static int run(InputStream in, PrintStream out, PrintStream err, String... args) {
        STDIN.set(in);
        STDOUT.set(out);
        try {
            CommandLine cl = new CommandLine(new NvmeofCli());
            cl.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
            cl.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
            cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
                PrintWriter e = commandLine.getErr();
                if (ex instanceof IllegalArgumentException) {
                    e.println("nvmeof: " + ex.getMessage());
                    return 2;
                }
                if (ex instanceof NvmeException || ex instanceof java.io.IOException) {
                    e.println("nvmeof: " + ex.getMessage());
                    return 1;
                }
                e.println("nvmeof: unexpected error: " + ex);
                ex.printStackTrace(e);
                return 1;
            });
            int code = cl.execute(args);
            out.flush();
            return code;
        } finally {
            STDIN.remove();
            STDOUT.remove();
        }
    }
}

package io.nvmeof.perf;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Our RAM-backed target in a <em>separate</em> process (so its CPU is its own): {@code java -cp <this class path>
 * io.nvmeof.target.daemon.TargetDaemon --listen tcp://127.0.0.1:0 ...}; the port comes from its "listening on" line.
 * The target of the {@code rdma} setup listens on rdma://127.0.0.1:0 and picks its provider as this process does.
 * {@link #close()} stops it with SIGTERM (then SIGKILL after 5 s); a shutdown hook does the same on Ctrl-C, so no
 * target process outlives the tool.
 */
public final class EmbeddedTarget implements AutoCloseable {
    public static final String NQN = "nqn.2024-01.io.nvmeof:perf";
    private static final Pattern LISTENING = Pattern.compile("listening on (\\w+)://([^\\s]+):(\\d+)");
    private final Process process;
    private final Thread hook;
    private final ArrayDeque<String> lastLines = new ArrayDeque<>();
    private final String uri;
    private final List<String> command;

    private EmbeddedTarget(Process process, List<String> command, String uri, Thread hook) {
        this.process = process;
        this.command = command;
        this.uri = uri;
        this.hook = hook;
    }

    /** The first JVM option of the target process: how it (and an orphan of it) can be told apart. */
    static final String MARKER = "-Dnvmeof.perf.embeddedTarget=true";

    /**
     * Starts the daemon and waits until it listens (at most 60 s).
     *
     * @param transport      listen scheme (tcp, rdma)
     * @param namespaceBytes namespace size (RAM is used only where written)
     * @param extraArgs      setup flags, e.g. --io-engine io_uring
     */
    public static EmbeddedTarget start(String transport, long namespaceBytes, List<String> extraArgs)
            throws IOException {
        return start(transport, namespaceBytes, extraArgs, 0);
    }

    /**
     * {@link #start(String, long, List)} on {@code port} of 127.0.0.1 (0: a free one), e.g. to start a target again
     * where a host expects it (a reconnect).
     */
    public static EmbeddedTarget start(String transport, long namespaceBytes, List<String> extraArgs, int port)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaBinary());
        // Names the process near the start of its command line, which ps and ProcessHandle.Info show in full (the
        // JDK cuts Info.commandLine() at 4096 bytes, well before the main class behind a long class path).
        cmd.add(MARKER);
        cmd.add("-Xms256m");
        cmd.add("-Xmx1g");
        cmd.add("-XX:MaxDirectMemorySize=" + Math.max(2L << 30, namespaceBytes + (1L << 30)));
        cmd.add("-XX:+UseG1GC");
        cmd.addAll(jvmOptions(System.getenv(TARGET_JAVA_OPTS)));
        cmd.add("--add-exports"); // DiSNI (NVMe/RDMA on a real RNIC) reaches into sun.nio.ch
        cmd.add("java.base/sun.nio.ch=ALL-UNNAMED");
        String provider = System.getProperty("nvmeof.rdma.provider");
        if (provider != null) { // the target picks the same RDMA provider as this process
            cmd.add("-Dnvmeof.rdma.provider=" + provider);
        }
        String softDir = System.getProperty("nvmeof.softrnic.dir");
        if (softDir != null) { // the software RNIC's peers must share its directory
            cmd.add("-Dnvmeof.softrnic.dir=" + softDir);
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("io.nvmeof.target.daemon.TargetDaemon");
        cmd.add("--listen");
        cmd.add(transport + "://127.0.0.1:" + port);
        cmd.add("--nqn");
        cmd.add(NQN);
        cmd.add("--namespace");
        cmd.add("size=" + namespaceBytes + ",bs=4096");
        cmd.addAll(extraArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Process p = pb.start();
        Thread hook = new Thread(() -> kill(p), "nvmeof-perf-stop-target");
        Runtime.getRuntime().addShutdownHook(hook);
        ArrayDeque<String> lines = new ArrayDeque<>();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String found = null;
        Thread timeout = new Thread(
                () -> {
                    try {
                        Thread.sleep(60_000);
                        p.destroyForcibly();
                    } catch (InterruptedException e) {
                        // started in time
                    }
                },
                "nvmeof-perf-target-start-timeout");
        timeout.setDaemon(true);
        timeout.start();
        try {
            String line;
            while ((line = out.readLine()) != null) {
                remember(lines, line);
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    found = "nvme+" + m.group(1) + "://" + m.group(2) + ":" + m.group(3) + "/" + NQN;
                }
                if (found != null && line.startsWith("ready")) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    break;
                }
            }
        } finally {
            timeout.interrupt();
        }
        if (found == null || !p.isAlive()) {
            kill(p);
            removeHook(hook);
            throw new IOException("the target process did not start ("
                    + String.join(" ", cmd.subList(cmd.indexOf("io.nvmeof.target.daemon.TargetDaemon"), cmd.size()))
                    + "): "
                    + (lines.isEmpty() ? "no output" : String.join(" | ", lines)));
        }
        EmbeddedTarget t = new EmbeddedTarget(p, cmd, found, hook);
        synchronized (t.lastLines) {
            t.lastLines.addAll(lines);
        }
        Thread drain = new Thread(
                () -> {
                    try {
                        String line;
                        while ((line = out.readLine()) != null) {
                            synchronized (t.lastLines) {
                                remember(t.lastLines, line);
                            }
                        }
                    } catch (IOException e) {
                        // the process ended
                    }
                },
                "nvmeof-perf-target-output");
        drain.setDaemon(true);
        drain.start();
        return t;
    }

    private static void remember(ArrayDeque<String> lines, String line) {
        lines.addLast(line);
        while (lines.size() > 20) {
            lines.removeFirst();
        }
    }

    /** Environment variable with extra JVM options for the target (whitespace-separated), e.g. GC logging. */
    public static final String TARGET_JAVA_OPTS = "NVMEOF_TARGET_JAVA_OPTS";

    /**
     * The target JVM's tuning options beyond the heap: Netty's leak detector off, its recycler's chunk size and the
     * largest buffer its allocator's thread caches keep, as the launchers have them (bin/lib.sh),
     * then {@code extra} (the {@value #TARGET_JAVA_OPTS} variable), which wins (a later -D overrides).
     */
    static List<String> jvmOptions(String extra) {
        List<String> o = new ArrayList<>();
        o.add("-Dio.netty.leakDetection.level=disabled");
        o.add("-Dio.netty.recycler.chunkSize=256"); // as bin/lib.sh: no recycler chunk allocation in I/O bursts
        // as bin/lib.sh: the thread caches keep 64 KiB socket read buffers, so those skip the arena's lock
        o.add("-Dio.netty.allocator.maxCachedBufferCapacity=65536");
        if (extra != null && !extra.isBlank()) {
            o.addAll(List.of(extra.trim().split("\\s+")));
        }
        return o;
    }

    static String javaBinary() {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return java.toFile().canExecute()
                ? java.toString()
                : ProcessHandle.current().info().command().orElse("java");
    }

    /** nvme+tcp://127.0.0.1:PORT/NQN */
    public String uri() {
        return uri;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The last lines the target printed (for error messages). */
    public String recentOutput() {
        synchronized (lastLines) {
            return String.join("\n", lastLines);
        }
    }

    /** The daemon's command line after the class name. */
    public List<String> daemonArgs() {
        return command.subList(command.indexOf("io.nvmeof.target.daemon.TargetDaemon") + 1, command.size());
    }

    @Override
    public void close() {
        kill(process);
        removeHook(hook);
    }

    private static void kill(Process p) {
        if (!p.isAlive()) {
            return;
        }
        p.destroy(); // SIGTERM: the daemon closes its queues and listeners
        try {
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // shutting down already: the hook runs
        }
    }
}

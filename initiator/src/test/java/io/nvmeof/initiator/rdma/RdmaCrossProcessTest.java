package io.nvmeof.initiator.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.ControllerState;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.transport.rdma.RdmaTransport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Our initiator in this JVM, our target daemon in another process ({@code TargetDaemon --listen
 * rdma://127.0.0.1:0}, what {@code bin/nvmeof-target} runs), over the software RNIC's shared memory: verified I/O,
 * zero-copy host buffers across processes, then the target killed with SIGKILL mid-I/O: every outstanding command
 * fails and none hangs, and the dead process's shared-memory files are gone after cleanup (a target that starts
 * removes them; one that stops in order removes its own).
 */
class RdmaCrossProcessTest {
    static final String NQN = "nqn.2024-01.io.nvmeof:xproc";
    static final Pattern LISTENING = Pattern.compile("listening on rdma://127\\.0\\.0\\.1:(\\d+)");

    /** A target daemon in a child process. */
    static final class Daemon implements AutoCloseable {
        final Process process;
        final int port;
        final List<String> output = java.util.Collections.synchronizedList(new ArrayList<>());

        Daemon() throws IOException {
            this(0);
        }

        /** A daemon listening on {@code listenPort} of 127.0.0.1 (0: a free one), with {@code extra} flags. */
        Daemon(int listenPort, String... extra) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m",
                    "--add-exports",
                    "java.base/sun.nio.ch=ALL-UNNAMED"));
            String dir = System.getProperty("nvmeof.softrnic.dir");
            if (dir != null) {
                cmd.add("-Dnvmeof.softrnic.dir=" + dir);
            }
            cmd.addAll(List.of(
                    "-cp",
                    System.getProperty("java.class.path"),
                    "io.nvmeof.target.daemon.TargetDaemon",
                    "--listen",
                    "rdma://127.0.0.1:" + listenPort,
                    "--nqn",
                    NQN,
                    "--namespace",
                    "size=64M,bs=4096"));
            cmd.addAll(List.of(extra));
            process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            BufferedReader r =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            int p = -1;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            String line;
            while (System.nanoTime() < deadline && (line = r.readLine()) != null) {
                output.add(line);
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    p = Integer.parseInt(m.group(1));
                }
                if (p > 0 && line.startsWith("ready")) {
                    break;
                }
            }
            if (p < 0) {
                process.destroyForcibly();
                throw new IOException("the target daemon did not start: " + output);
            }
            port = p;
            Thread drain = new Thread(
                    () -> {
                        try {
                            String l;
                            while ((l = r.readLine()) != null) {
                                output.add(l);
                            }
                        } catch (IOException e) {
                            // gone
                        }
                    },
                    "xproc-target-output");
            drain.setDaemon(true);
            drain.start();
        }

        String uri(String options) {
            return "nvme+rdma://127.0.0.1:" + port + "/" + NQN + (options.isEmpty() ? "" : "?" + options);
        }

        long pid() {
            return process.pid();
        }

        /** SIGTERM, as Ctrl-C or a service manager would stop it. */
        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(15, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(5, TimeUnit.SECONDS);
                }
            }
        }
    }

    private final List<Daemon> daemons = new ArrayList<>();

    @AfterEach
    void stopAll() throws Exception {
        for (Daemon d : daemons) {
            d.process.destroyForcibly();
            d.process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    Daemon start() throws IOException {
        Daemon d = new Daemon();
        daemons.add(d);
        return d;
    }

    static Path softDir() {
        return Path.of(System.getProperty("nvmeof.softrnic.dir", "/dev/shm/nvmeof-softrnic"));
    }

    static List<String> filesOf(long pid) throws IOException {
        if (!Files.isDirectory(softDir())) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(softDir())) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(pid + "-"))
                    .sorted()
                    .toList();
        }
    }

    static ByteBuffer pattern(int bytes, long seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes);
        RdmaEndToEndTest.fill(b, seed);
        return b;
    }

    @Test
    void verifiedIoWithATargetProcess() throws Exception {
        try (Daemon d = start();
                Controller c = Nvme.connect(d.uri("queues=2"))) {
            assertEquals("rdma", c.uri().transport());
            assertFalse(filesOf(d.pid()).isEmpty(), "the target maps its memory from " + softDir());
            Namespace ns = c.namespace();
            long lba = 0;
            for (int size : new int[] {4096, 8192, 65536, 1 << 20}) {
                ByteBuffer src = pattern(size, size);
                ns.write(lba, size / 4096, src);
                ByteBuffer dst = ByteBuffer.allocateDirect(size);
                ns.read(lba, size / 4096, dst);
                assertArrayEquals(RdmaEndToEndTest.bytes(src), RdmaEndToEndTest.bytes(dst), size + " bytes");
                lba += size / 4096;
            }
            // Zero copy on the host also across processes: the target RDMA-reads and -writes our registered buffer.
            ByteBuffer reg = c.allocateBuffer(256 << 10);
            RdmaEndToEndTest.fill(reg, 3);
            long copied = RdmaTransport.hostCopiedBytes();
            ns.write(1000, 64, reg);
            ByteBuffer back = c.allocateBuffer(256 << 10);
            ns.read(1000, 64, back);
            assertEquals(0, RdmaTransport.hostCopiedBytes() - copied);
            assertArrayEquals(RdmaEndToEndTest.bytes(reg), RdmaEndToEndTest.bytes(back));
        }
    }

    @Test
    void targetKilledMidIoFailsEveryCommandAndLeavesNoFilesAfterCleanup() throws Exception {
        Daemon d = start();
        long pid = d.pid();
        List<CompletableFuture<Void>> fs;
        try (Controller c = Nvme.connect(d.uri("queues=2&depth=64&ctrl_loss_tmo=0"))) {
            // Verified I/O first, then I/O from two threads while the target is killed with SIGKILL.
            ByteBuffer src = pattern(128 << 10, 11);
            c.namespace().write(0, 32, src);
            ByteBuffer dst = ByteBuffer.allocateDirect(128 << 10);
            c.namespace().read(0, 32, dst);
            assertArrayEquals(RdmaEndToEndTest.bytes(src), RdmaEndToEndTest.bytes(dst));
            assertFalse(filesOf(pid).isEmpty());
            fs = List.copyOf(RdmaTargetGoneTest.hammer(c, 2, () -> {
                try {
                    new ProcessBuilder("kill", "-9", Long.toString(pid)).start().waitFor(5, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }));
            assertTrue(d.process.waitFor(10, TimeUnit.SECONDS), "killed");
            assertEquals(137, d.process.exitValue(), "SIGKILL");
            int failed = RdmaTargetGoneTest.assertAllComplete(fs);
            assertTrue(failed > 0, "some of " + fs.size() + " commands were in flight when the target died");
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); // a bound for a loaded machine
            while (c.isOpen() && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            assertFalse(c.isOpen(), "the controller noticed the target is gone: " + c.failure());
        }
        // SIGKILL left the dead target's files behind; the next target to start removes them (stale owner), and
        // that one removes its own when it stops in order.
        Daemon next = start();
        long nextPid = next.pid();
        try (Controller c = Nvme.connect(next.uri("queues=1"))) {
            c.namespace().read(0, 1, ByteBuffer.allocateDirect(4096));
        }
        assertEquals(List.of(), filesOf(pid), "the killed target's files are gone once a target started");
        assertFalse(filesOf(nextPid).isEmpty());
        next.close();
        assertFalse(next.process.isAlive(), String.join("\n", next.output));
        assertEquals(List.of(), filesOf(nextPid), "a target stopped with SIGTERM removes its files");
    }

    /**
     * Reconnect over NVMe/RDMA: the target is killed with SIGKILL under blocking I/O and started again on the same
     * port; the controller reconnects (new QPs, the same Host ID, the namespace identity checked), the calls that were
     * waiting go on, and none fails. The namespace is RAM, so only what was written after the restart is checked.
     */
    @Test
    void reconnectsToATargetStartedAgainOnTheSamePort() throws Exception {
        Daemon d = start();
        List<ControllerState> states = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Controller c = Nvme.connect(
                NvmeUri.parse(d.uri("queues=2&reconnect_delay=200ms&ctrl_loss_tmo=60")),
                ConnectOptions.builder()
                        .stateListener(e -> states.add(e.state()))
                        .build())) {
            Namespace ns = c.namespace();
            java.util.concurrent.atomic.AtomicInteger ok = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.ConcurrentLinkedQueue<Throwable> failures =
                    new java.util.concurrent.ConcurrentLinkedQueue<>();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            Thread[] ts = new Thread[2];
            // One thread with registered memory of the first connections (used on the new ones after the reconnect),
            // one with a plain buffer.
            ByteBuffer registered = c.allocateBuffer(64 << 10);
            for (int t = 0; t < ts.length; t++) {
                int id = t;
                ts[t] = new Thread(() -> {
                    ByteBuffer b = id == 0 ? registered : ByteBuffer.allocateDirect(64 << 10);
                    for (int i = 0; !stop.get(); i++) {
                        try {
                            if (i % 2 == 0) {
                                ns.write(id * 1000L + i % 500, 16, b);
                            } else {
                                ns.read(id * 1000L + i % 500, 16, b);
                            }
                            ok.incrementAndGet();
                        } catch (NvmeException e) {
                            failures.add(e);
                        }
                    }
                });
                ts[t].start();
            }
            Thread.sleep(300);
            new ProcessBuilder("kill", "-9", Long.toString(d.pid())).start().waitFor(5, TimeUnit.SECONDS);
            assertTrue(d.process.waitFor(10, TimeUnit.SECONDS), "killed");
            daemons.add(new Daemon(d.port));
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.reconnectCount() == 0 && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            int before = ok.get();
            while (ok.get() < before + 100 && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            stop.set(true);
            for (Thread t : ts) {
                t.join(20_000);
                assertFalse(t.isAlive(), "a caller is stuck");
            }
            assertEquals(List.of(), List.copyOf(failures), "the calls waited for the reconnect");
            assertTrue(c.reconnectCount() >= 1, "states " + states);
            assertTrue(states.contains(ControllerState.RECONNECTING), states.toString());
            assertEquals(ControllerState.LIVE, c.state());
            ByteBuffer src = pattern(128 << 10, 12);
            ns.write(0, 32, src);
            ByteBuffer dst = ByteBuffer.allocateDirect(128 << 10);
            ns.read(0, 32, dst);
            assertArrayEquals(RdmaEndToEndTest.bytes(src), RdmaEndToEndTest.bytes(dst));
            // The buffer registered before the reconnect still moves data both ways.
            ByteBuffer old = registered.duplicate().clear();
            old.put(0, pattern(64 << 10, 13), 0, 64 << 10);
            ns.write(100, 16, old);
            ByteBuffer back = ByteBuffer.allocateDirect(64 << 10);
            ns.read(100, 16, back);
            assertArrayEquals(RdmaEndToEndTest.bytes(pattern(64 << 10, 13)), RdmaEndToEndTest.bytes(back));
            ns.read(0, 16, old);
            assertArrayEquals(
                    java.util.Arrays.copyOf(RdmaEndToEndTest.bytes(src), 64 << 10), RdmaEndToEndTest.bytes(old));
        }
    }

    /**
     * Reconnect over NVMe/RDMA with bidirectional DH-HMAC-CHAP: a target daemon with {@code --dhchap-host} is killed with
     * SIGKILL and started again on the same port with the same keys; the reconnect authenticates every queue again
     * (the restarted target refuses I/O on a queue that did not) and verified I/O goes on.
     */
    @Test
    void reconnectsWithDhchapToATargetStartedAgain() throws Exception {
        String host = "nqn.2014-08.org.nvmexpress:uuid:0a0b0c0d-1111-2222-3333-44445555bbbb";
        byte[] raw = new byte[32];
        new java.security.SecureRandom().nextBytes(raw);
        String key = io.nvmeof.core.auth.DhchapSecret.of(raw, io.nvmeof.core.auth.DhchapHash.SHA_256)
                .encode();
        new java.security.SecureRandom().nextBytes(raw);
        String ctrlKey = io.nvmeof.core.auth.DhchapSecret.of(raw, null).encode();
        String[] auth = {
            "--dhchap-host", "host=" + host + ",key=" + key + ",ctrl-key=" + ctrlKey + ",dhgroups=ffdhe2048"
        };
        Daemon d = new Daemon(0, auth);
        daemons.add(d);
        try (Controller c = Nvme.connect(
                NvmeUri.parse(d.uri("queues=2&reconnect_delay=200ms&ctrl_loss_tmo=60&hostnqn=" + host)),
                ConnectOptions.builder()
                        .dhchapSecret(key)
                        .dhchapCtrlSecret(ctrlKey)
                        .build())) {
            Namespace ns = c.namespace();
            new ProcessBuilder("kill", "-9", Long.toString(d.pid())).start().waitFor(5, TimeUnit.SECONDS);
            assertTrue(d.process.waitFor(10, TimeUnit.SECONDS), "killed");
            daemons.add(new Daemon(d.port, auth));
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.reconnectCount() == 0 && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            assertTrue(c.reconnectCount() >= 1, "reconnected");
            assertEquals(ControllerState.LIVE, c.state());
            for (int q = 0; q < 2; q++) { // one thread per I/O queue
                long lba = q * 64L;
                Throwable[] failed = new Throwable[1];
                Thread t = new Thread(() -> {
                    try {
                        ByteBuffer src = pattern(64 << 10, 20 + lba);
                        ns.write(lba, 16, src);
                        ByteBuffer dst = ByteBuffer.allocateDirect(64 << 10);
                        ns.read(lba, 16, dst);
                        assertArrayEquals(RdmaEndToEndTest.bytes(src), RdmaEndToEndTest.bytes(dst));
                    } catch (Throwable e) {
                        failed[0] = e;
                    }
                });
                t.start();
                t.join(20_000);
                assertEquals(null, failed[0]);
            }
        }
    }
}

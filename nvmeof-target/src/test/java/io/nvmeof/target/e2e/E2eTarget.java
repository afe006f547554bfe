package io.nvmeof.target.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * A real {@link NvmeTarget} on 127.0.0.1 with an ephemeral port, for loopback tests over the NVMe/TCP transport found
 * by ServiceLoader, plus a capture of everything logged at WARNING or above (Netty's leak detector included).
 */
public final class E2eTarget implements AutoCloseable {
    static final String NQN = "nqn.2026-01.io.nvmeof:e2e";
    static final String RESTRICTED_NQN = "nqn.2026-01.io.nvmeof:e2e-restricted";
    static final String ALLOWED_HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-4333-8444-555555555555";
    /** Namespace 1: 64 MiB in 4 KiB blocks; namespace 2: 8 MiB in 512-byte blocks. */
    static final long NS1_BYTES = 64L << 20;

    static final long NS2_BYTES = 8L << 20;

    final NvmeTarget target;
    final InetSocketAddress address;
    private final List<LogRecord> problems = new ArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                synchronized (problems) {
                    problems.add(r);
                }
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    E2eTarget() throws IOException {
        Logger.getLogger("").addHandler(capture);
        SubsystemConfig open = new SubsystemConfig(
                NQN,
                true,
                List.of(),
                List.of(NamespaceConfig.of(1, NS1_BYTES), new NamespaceConfig(2, NS2_BYTES, 512, null, false)),
                null,
                null);
        SubsystemConfig restricted = new SubsystemConfig(
                RESTRICTED_NQN, false, List.of(ALLOWED_HOST), List.of(NamespaceConfig.of(1, 1L << 20)), null, null);
        TargetConfig config = new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)), List.of(open, restricted), 1L << 30, 0);
        target = NvmeTarget.start(config);
        address = target.boundAddresses().get(0);
    }

    /** An admin queue: ICReq, Connect, enable. */
    RawTcpHost admin(boolean digests) throws IOException {
        RawTcpHost h = RawTcpHost.connect(address, digests, digests);
        RawTcpHost.expectOk(h.connectAdmin(NQN), "admin Connect");
        h.enable();
        return h;
    }

    /** I/O queue {@code qid} of the controller behind {@code admin}, with the in-capsule limit from IOCCSZ. */
    RawTcpHost io(RawTcpHost admin, int qid, boolean digests) throws IOException {
        RawTcpHost h = RawTcpHost.connect(address, digests, digests);
        RawTcpHost.expectOk(h.connectIo(qid, admin.cntlid(), NQN), "I/O Connect qid " + qid);
        h.inCapsuleLimit(ioccsz(admin) * 16 - 64);
        return h;
    }

    static int ioccsz(RawTcpHost admin) throws IOException {
        return le(admin.identifyController()).getInt(1792);
    }

    static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** WARNING+ records logged so far (target, transport, Netty). */
    List<LogRecord> problems() {
        synchronized (problems) {
            return List.copyOf(problems);
        }
    }

    /**
     * Fails if anything logged SEVERE (ERROR), a Netty LEAK report appeared, or a record carries an unexpected
     * throwable (anything but an I/O or protocol exception). Refused connects and protocol faults are warnings, fine.
     */
    void assertNoErrorsLogged() {
        for (LogRecord r : problems()) {
            assertTrue(
                    !isError(r),
                    "the target logged " + r.getLevel() + " " + r.getLoggerName() + ": " + r.getMessage()
                            + (r.getThrown() != null ? " / " + r.getThrown() : ""));
        }
    }

    /** ERROR level, a leak report, or a bug (an Error or RuntimeException) behind a warning. */
    public static boolean isError(LogRecord r) {
        Throwable t = r.getThrown();
        boolean bug = t != null
                && !(t instanceof IOException)
                && !t.getClass().getName().contains("Protocol");
        return r.getLevel().intValue() >= Level.SEVERE.intValue()
                || String.valueOf(r.getMessage()).contains("LEAK")
                || bug;
    }

    void awaitNoControllers(long timeoutMillis) throws InterruptedException {
        await(
                () -> target.controllers().isEmpty(),
                timeoutMillis,
                () -> "controllers still live: " + target.controllers());
    }

    static void await(BooleanSupplier condition, long timeoutMillis, java.util.function.Supplier<String> what)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                assertEquals(true, false, "timed out after " + timeoutMillis + " ms: " + what.get());
            }
            Thread.sleep(10);
        }
    }

    @Override
    public void close() {
        try {
            target.close();
        } finally {
            Logger.getLogger("").removeHandler(capture);
        }
    }
}

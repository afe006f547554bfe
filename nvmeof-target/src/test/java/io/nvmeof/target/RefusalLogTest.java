package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Commands refused for a reason other than a plain NVMe error leave a rate-limited WARNING naming the host. */
class RefusalLogTest {
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);
    private final Logger jul = Logger.getLogger("io.nvmeof.target");
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    @BeforeEach
    void captureLog() {
        jul.addHandler(capture);
    }

    @AfterEach
    void tearDown() {
        jul.removeHandler(capture);
        host.close();
        target.close();
    }

    private List<String> refusals() {
        return records.stream()
                .filter(r -> r.getLevel() == Level.WARNING && r.getMessage().startsWith("refused"))
                .map(LogRecord::getMessage)
                .collect(Collectors.toList());
    }

    @Test
    void transportRefusalNamesHostAndReasonAndIsRateLimited() {
        host.bringUp(TestTargets.NQN, 1);
        records.clear();
        int sent = 200;
        long start = System.nanoTime();
        for (int i = 0; i < sent; i++) {
            FakeRequest r = InJvmHost.keepAlive().transportStatus(Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID));
            assertEquals(
                    Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID),
                    host.admin(r).status());
        }
        long seconds = (System.nanoTime() - start) / 1_000_000_000L;
        List<String> lines = refusals();
        assertTrue(!lines.isEmpty(), "a WARNING for the refused command");
        String first = lines.get(0);
        assertTrue(first.contains("from host " + InJvmHost.HOST_NQN), first);
        assertTrue(first.contains("queue 0"), first);
        assertTrue(first.contains("sc=0x11"), first);
        assertTrue(
                lines.size() <= Refusals.LINES_PER_SECOND * (seconds + 2),
                lines.size() + " lines for " + sent + " refusals in " + seconds + " s");
        assertTrue(lines.size() < sent, "rate limited");
    }

    @Test
    void connectRefusalNamesTheHost() {
        FakeRequest r = host.connectAdmin("nqn.2024-01.io.nvmeof:no-such-subsystem", 0);
        assertEquals(Status.dnr(Status.CONNECT_INVALID_PARAMETERS), r.status());
        List<String> lines = refusals();
        assertEquals(1, lines.size(), String.valueOf(lines));
        assertTrue(lines.get(0).contains("no-such-subsystem"), lines.get(0));
        assertTrue(lines.get(0).contains("from host nqn."), lines.get(0));
    }

    @Test
    void psdtOrFuseRefusalIsLogged() {
        check(host.connectAdmin(TestTargets.NQN, 5000));
        host.enable();
        records.clear();
        FakeRequest prp = InJvmHost.keepAlive();
        prp.sqe().flags(0); // PSDT 00b: PRPs, which fabrics does not have
        assertEquals(Status.dnr(Status.INVALID_FIELD), host.admin(prp).status());
        List<String> lines = refusals();
        assertEquals(1, lines.size(), String.valueOf(lines));
        assertTrue(lines.get(0).contains("PSDT"), lines.get(0));
    }
}

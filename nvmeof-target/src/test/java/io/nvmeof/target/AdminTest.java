package io.nvmeof.target;

import static io.nvmeof.target.DiscoveryTest.await;
import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.config.NamespaceConfig;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Features, Keep Alive, AER and namespace-change events, Abort (nvmeof-protocol.md §3.1, §3.4–§3.6). */
class AdminTest {
    private final NvmeTarget target = TestTargets.standard(1L << 30, 0);
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    @Test
    void features() {
        check(host.connectAdmin(TestTargets.NQN, 5000));
        host.enable();
        FakeRequest many = check(host.admin(InJvmHost.setFeatures(0x07, 1000 | (5 << 16))));
        assertEquals(127 | (5 << 16), many.dw0(), "NSQA clamped to 128 queues, NCQA as asked");
        assertEquals(
                127 | (5 << 16),
                check(host.admin(InJvmHost.getFeatures(0x07, 0))).dw0());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.setFeatures(0x07, 0xFFFF)).status());
        // Once an I/O queue exists, Number of Queues is a Command Sequence Error (NVMe Base 2.0c §5.27.1.5, as SPDK).
        check(host.connectIo(1, 127));
        assertEquals(
                Status.dnr(Status.COMMAND_SEQUENCE_ERROR),
                host.admin(InJvmHost.setFeatures(0x07, 0)).status());
        assertEquals(
                127 | (5 << 16),
                check(host.admin(InJvmHost.getFeatures(0x07, 0))).dw0(),
                "unchanged");
        check(host.admin(InJvmHost.setFeatures(0x0F, 2500)));
        assertEquals(3000, check(host.admin(InJvmHost.getFeatures(0x0F, 0))).dw0(), "KATO rounded up to KAS (1 s)");
        check(host.admin(InJvmHost.setFeatures(0x0B, 0x100)));
        assertEquals(0x100, check(host.admin(InJvmHost.getFeatures(0x0B, 0))).dw0());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.setFeatures(0x0B, 0x200)).status());
        assertEquals(1, check(host.admin(InJvmHost.getFeatures(0x06, 0))).dw0(), "volatile write cache enabled");
        assertEquals(4, check(host.admin(InJvmHost.getFeatures(0x06, 3))).dw0(), "SEL 3: changeable");
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.setFeatures(0x0E, 0)).status(),
                "no Timestamp");
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.getFeatures(0x08, 0)).status(),
                "Interrupt Coalescing is PCIe only");
        assertEquals(
                Status.dnr(Status.FEATURE_NOT_SAVEABLE),
                host.admin(InJvmHost.setFeatures(0x0F | 0x80000000, 1000)).status());
        // Abort: "not aborted"
        FakeRequest abort = new FakeRequest().expect(0);
        abort.sqe().opcode(0x08).cdw(10, 5 << 16);
        assertEquals(1, check(host.admin(abort)).dw0() & 1);
        // unknown admin opcode; Create I/O SQ does not exist on fabrics
        FakeRequest create = new FakeRequest().expect(0);
        create.sqe().opcode(0x01);
        assertEquals(Status.dnr(Status.INVALID_OPCODE), host.admin(create).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.getLogPage(0x06, 0, 0, 512, false)).status(),
                "no Device Self-test log");
    }

    @Test
    void aerLimitAndNamespaceChangeEvent() {
        host.bringUp(TestTargets.NQN, 1);
        check(host.admin(InJvmHost.setFeatures(0x0B, 0x100)));
        List<FakeRequest> aers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            FakeRequest aer = InJvmHost.asyncEventRequest();
            aer.sqe().cid(31 + i);
            aers.add(host.admin.submit(aer));
        }
        assertEquals(
                Status.dnr(Status.ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED),
                host.admin(InJvmHost.asyncEventRequest()).status());
        for (FakeRequest aer : aers) {
            assertFalse(aer.done.isDone());
        }
        // a namespace appears at run time: one AER completes with "namespace attribute changed" (nvmeof-protocol.md
        // §3.6)
        int nsid = target.addNamespace(TestTargets.NQN, NamespaceConfig.of(0, 1L << 30))
                .nsid();
        assertEquals(4, nsid);
        FakeRequest event = await(aers.get(0));
        assertEquals(0x00040002, event.dw0());
        assertEquals(31, event.sqe().cid());
        // a second change before the log is read stays masked
        target.removeNamespace(TestTargets.NQN, 2);
        check(host.admin(InJvmHost.keepAlive())); // let the admin thread run the event
        assertFalse(aers.get(1).done.isDone());
        ByteBuffer changed = check(host.admin(InJvmHost.getLogPage(0x04, 0xFFFFFFFF, 0, 4096, false)))
                .dataBuffer();
        assertEquals(2, changed.getInt(0));
        assertEquals(4, changed.getInt(4));
        assertEquals(0, changed.getInt(8));
        ByteBuffer list = check(host.admin(InJvmHost.identify(0x02, 0))).dataBuffer();
        assertEquals(1, list.getInt(0));
        assertEquals(3, list.getInt(4));
        assertEquals(4, list.getInt(8));
        // read with RAE=0: the list is cleared and events flow again
        ByteBuffer empty = check(host.admin(InJvmHost.getLogPage(0x04, 0xFFFFFFFF, 0, 4096, false)))
                .dataBuffer();
        assertEquals(0, empty.getInt(0));
        target.addNamespace(TestTargets.NQN, NamespaceConfig.of(2, 1L << 20));
        assertEquals(0x00040002, await(aers.get(1)).dw0());
        // the new namespace is usable at once
        check(host.io(InJvmHost.write(4, 0, new byte[4096], 4096)));
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                host.io(InJvmHost.read(5, 0, 1, 4096)).status());
    }

    @Test
    void keepAliveExpiryClosesEveryQueue() throws Exception {
        check(host.connectAdmin(TestTargets.NQN, 1000));
        host.enable();
        check(host.admin(InJvmHost.setFeatures(0x07, 1 | (1 << 16))));
        check(host.connectIo(1, 127));
        check(host.connectIo(2, 127));
        FakeRequest aer = host.admin.submit(InJvmHost.asyncEventRequest());
        // keep it alive for a while, then stop
        for (int i = 0; i < 4; i++) {
            Thread.sleep(300);
            check(host.admin(InJvmHost.keepAlive()));
        }
        assertEquals(1, target.subsystem(TestTargets.NQN).controllers().size());
        assertTrue(host.admin.awaitClosed(3000), "admin queue closed by keep-alive expiry");
        assertTrue(host.io.get(1).awaitClosed(1000));
        assertTrue(host.io.get(2).awaitClosed(1000));
        assertEquals(0, target.subsystem(TestTargets.NQN).controllers().size());
        assertFalse(aer.done.isDone(), "held AERs are dropped, not completed after close");
    }

    @Test
    void keepAliveWithKato0IsInvalid() {
        check(host.connectAdmin(TestTargets.NQN, 0));
        host.enable();
        assertEquals(
                Status.KEEP_ALIVE_INVALID, host.admin(InJvmHost.keepAlive()).status());
    }

    @Test
    void discoveryControllerWithKato0UsesTheConfiguredTimer() {
        NvmeTarget t = TestTargets.standard(1L << 30, 500);
        try {
            InJvmHost h = new InJvmHost(t);
            check(h.connectAdmin(io.nvmeof.core.command.Nqn.DISCOVERY, 0));
            h.enable();
            check(h.admin(InJvmHost.keepAlive()));
            assertTrue(h.admin.awaitClosed(4000), "torn down after discoveryKatoMillis (rounded up to 1 s)");
        } finally {
            t.close();
        }
    }

    @Test
    void closingTheAdminQueueClosesTheIoQueues() {
        host.bringUp(TestTargets.NQN, 3);
        host.admin.close();
        for (InJvmQueue q : host.io.values()) {
            assertTrue(q.awaitClosed(2000));
        }
        assertEquals(0, target.controllers().size());
    }

    @Test
    void targetCloseClosesQueuesAndFreesMemory() {
        host.bringUp(TestTargets.NQN, 1);
        check(host.io(InJvmHost.write(1, 0, new byte[4096], 4096)));
        assertTrue(target.memoryUsedBytes() > 0);
        target.close();
        assertTrue(host.admin.awaitClosed(2000));
        assertTrue(host.io.get(1).awaitClosed(2000));
        assertEquals(0, target.memoryUsedBytes());
    }
}

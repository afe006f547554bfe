package io.nvmeof.target;

import static io.nvmeof.target.DiscoveryTest.await;
import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.SubsystemConfig;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The run-time API the JSON-RPC layer calls: what connected controllers see of each change. */
class LiveChangesTest {
    private final NvmeTarget target = TestTargets.standard(1L << 30, 0);
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    @Test
    void resizeRaisesTheNamespaceNoticeAndIdentifyShowsTheNewSize() throws Exception {
        host.bringUp(TestTargets.NQN, 1);
        check(host.admin(InJvmHost.setFeatures(0x0B, 0x100)));
        FakeRequest aer = host.admin.submit(InJvmHost.asyncEventRequest());
        target.resizeNamespace(TestTargets.NQN, 1, 128L << 20);
        assertEquals(0x00040002, await(aer).dw0(), "namespace attribute changed");
        ByteBuffer changed = check(host.admin(InJvmHost.getLogPage(0x04, 0xFFFFFFFF, 0, 4096, false)))
                .dataBuffer();
        assertEquals(1, changed.getInt(0));
        ByteBuffer id = check(host.admin(InJvmHost.identify(0x00, 1))).dataBuffer();
        assertEquals((128L << 20) / 4096, id.getLong(0), "NSZE");
        assertEquals((128L << 20) / 4096, id.getLong(8), "NCAP");
        check(host.io(InJvmHost.write(1, (100L << 20) / 4096, new byte[4096], 4096)));
    }

    @Test
    void removingTheHostsAccessOrTheSubsystemTearsDownItsController() throws Exception {
        host.bringUp(TestTargets.NQN, 1);
        assertEquals(1, target.subsystem(TestTargets.NQN).controllers().size());
        long gen = target.discoveryGeneration();
        target.setAllowAnyHost(TestTargets.NQN, false);
        host.admin.closed.get(5, TimeUnit.SECONDS);
        assertEquals(0, target.subsystem(TestTargets.NQN).controllers().size());
        assertTrue(target.discoveryGeneration() > gen);
        assertTrue(target.setHostAllowed(TestTargets.NQN, InJvmHost.HOST_NQN, true));
        assertFalse(target.setHostAllowed(TestTargets.NQN, InJvmHost.HOST_NQN, true));

        InJvmHost again = new InJvmHost(target);
        try {
            again.bringUp(TestTargets.NQN, 1);
            assertTrue(target.removeSubsystem(TestTargets.NQN));
            again.admin.closed.get(5, TimeUnit.SECONDS);
            assertNull(target.subsystem(TestTargets.NQN));
            assertFalse(target.removeSubsystem(TestTargets.NQN));
        } finally {
            again.close();
        }
    }

    @Test
    void subsystemsAndListenersChangeTheDiscoveryLog() throws Exception {
        long gen = target.discoveryGeneration();
        target.addSubsystem(
                new SubsystemConfig("nqn.2024-01.io.nvmeof:new", true, List.of(), List.of(), null, null, List.of()));
        assertTrue(target.discoveryGeneration() > gen);
        try {
            target.addSubsystem(new SubsystemConfig(
                    "nqn.2024-01.io.nvmeof:new", true, List.of(), List.of(), null, null, List.of()));
            org.junit.jupiter.api.Assertions.fail("a second subsystem with the same NQN");
        } catch (IllegalArgumentException expected) {
            assertEquals(3, target.subsystems().size());
        }
        gen = target.discoveryGeneration();
        var l = target.addListener(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384));
        assertTrue(target.discoveryGeneration() > gen);
        gen = target.discoveryGeneration();
        assertTrue(target.removeListener(l.portInfo().portId()));
        assertFalse(target.removeListener(l.portInfo().portId()));
        assertTrue(target.discoveryGeneration() > gen);
    }
}

package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.testsupport.TargetUri;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** nvmeof-protocol.md §7.1 bring-up and nvmeof-protocol.md §7.3 teardown against our target over the in-JVM loop transport. */
class BringUpTest {
    @RegisterExtension
    static NvmeofTargetExtension target = NvmeofTargetExtension.builder()
            .namespace("64M")
            .namespace("1M", 512)
            .maxQueueSize(64)
            .build();

    @Test
    void bringsUpTheControllerAndItsNamespaces(@TargetUri(options = "queues=3&depth=256") NvmeUri uri)
            throws Exception {
        try (Controller c = Nvme.connect(uri, ConnectOptions.defaults())) {
            assertTrue(c.isOpen());
            assertEquals(target.nqn(), c.subsystemNqn());
            assertEquals("nvmeof-java", c.modelNumber());
            assertFalse(c.serialNumber().isEmpty());
            assertEquals("1.3.0", c.version());
            assertTrue(c.cntlid() >= 1 && c.cntlid() <= 0xFFEF);
            assertEquals(c.cntlid(), c.identity().cntlid());
            assertEquals(3, c.ioQueueCount());
            assertEquals(64, c.ioQueueDepth(), "min(depth, MQES+1, MAXCMD)");
            assertEquals(16384, c.maxInCapsuleData(), "IOCCSZ*16-64");
            List<Namespace> ns = c.namespaces();
            assertEquals(2, ns.size());
            assertEquals(64L << 20, ns.get(0).sizeBytes());
            assertEquals(4096, ns.get(0).blockSize());
            assertEquals(512, ns.get(1).blockSize());
            assertEquals(2048, ns.get(1).blockCount());
            assertNotNull(ns.get(0).nguid());
            assertNotNull(ns.get(0).uuid());
            assertEquals(ns.get(0).uuid().toString().replace("-", ""), ns.get(0).nguid());
            assertEquals(1, c.namespace().nsid());
            assertEquals(2, c.namespace(2).nsid());
            assertThrows(NvmeException.class, () -> c.namespace(7));
            // one live controller on the target while connected
            assertEquals(
                    1, target.target().subsystem(target.nqn()).controllers().size());
        }
        // orderly shutdown: the target's controller is gone
        long end = System.currentTimeMillis() + 5000;
        while (!target.target().subsystem(target.nqn()).controllers().isEmpty() && System.currentTimeMillis() < end) {
            Thread.sleep(10);
        }
        assertTrue(target.target().subsystem(target.nqn()).controllers().isEmpty());
    }

    @Test
    void nsidOptionSelectsTheNamespace() throws Exception {
        try (Controller c = Nvme.connect(target.uri("nsid=2"))) {
            assertEquals(2, c.namespace().nsid());
        }
        NvmeException e = assertThrows(NvmeException.class, () -> Nvme.connect(target.uri("nsid=9")));
        assertTrue(e.getMessage().contains("namespace 9 is not active"), e.getMessage());
    }

    @Test
    void unknownSubsystemIsRefusedWithTheConnectStatus() {
        String uri = target.discoveryUri() + "/nqn.2024-01.io.nvmeof:nope";
        NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> Nvme.connect(uri));
        assertTrue(Status.is(e.status(), Status.CONNECT_INVALID_PARAMETERS), e.getMessage());
        assertTrue(e.getMessage().contains("unknown subsystem NQN"), e.getMessage());
    }

    @Test
    void blockIoRoundTrip() throws Exception {
        try (Controller c = Nvme.connect(target.uri())) {
            Namespace ns = c.namespace();
            ByteBuffer w = ByteBuffer.allocateDirect(8192);
            for (int i = 0; i < 8192; i++) {
                w.put(i, (byte) (i * 7));
            }
            ns.write(10, 2, w);
            ByteBuffer r = ByteBuffer.allocateDirect(8192);
            ns.read(10, 2, r);
            assertEquals(w, r);
        }
    }
}

package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Keep alive (nvmeof-protocol.md §3.5), namespace-change events (nvmeof-protocol.md §3.6) and digests (nvmeof-protocol.md §5.8) end to end over NVMe/TCP. */
class ControllerFeaturesTest {
    @RegisterExtension
    NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("8M").build();

    @Test
    void keepAliveKeepsAnIdleControllerPastKato() throws Exception {
        // KATO 2 s: without Keep Alive the target tears the controller down after 2 s (its timer checks every second)
        try (Controller c = Nvme.connect(target.uri("kato=2000&queues=1"))) {
            Thread.sleep(5500);
            assertTrue(c.isOpen(), "failure: " + c.failure());
            assertEquals(
                    1, target.target().subsystem(target.nqn()).controllers().size());
            c.namespace().write(0, 1, ByteBuffer.allocateDirect(4096));
        }
    }

    @Test
    void namespaceAddedAndRemovedAtRunTimeReachTheListener() throws Exception {
        try (Controller c = Nvme.connect(target.uri())) {
            LinkedBlockingQueue<NamespaceChangeEvent> events = new LinkedBlockingQueue<>();
            c.onNamespaceChange(events::add);
            assertEquals(1, c.namespaces().size());
            target.target().addNamespace(target.nqn(), new NamespaceConfig(0, 2 << 20, 512, null, false));
            NamespaceChangeEvent added = events.poll(5, TimeUnit.SECONDS);
            assertNotNull(added, "no event");
            assertEquals(List.of(2), added.changed());
            assertEquals(1, added.added().size());
            assertEquals(2, added.added().get(0).nsid());
            assertEquals(512, added.added().get(0).blockSize());
            assertEquals(2, c.namespaces().size());
            // the new namespace is usable at once
            Namespace ns2 = c.namespace(2);
            ns2.write(5, 2, ByteBuffer.allocateDirect(1024));

            // and the AER was re-issued: a second change arrives too
            target.target().removeNamespace(target.nqn(), 2);
            NamespaceChangeEvent removed = events.poll(5, TimeUnit.SECONDS);
            assertNotNull(removed, "no second event");
            assertEquals(List.of(2), removed.removed());
            assertEquals(1, c.namespaces().size());
            assertTrue(!ns2.isActive());
        }
    }

    @Test
    void digestsOnAndOff() throws Exception {
        for (String digest : new String[] {"none", "header", "data", "header,data"}) {
            try (Controller c = Nvme.connect(target.uri("queues=2&digest=" + digest))) {
                Namespace ns = c.namespace();
                for (int blocks : new int[] {1, 4, 33}) { // in-capsule and R2T writes, single and larger C2H reads
                    ByteBuffer w = ByteBuffer.allocateDirect(blocks * 4096);
                    for (int i = 0; i < w.capacity(); i++) {
                        w.put(i, (byte) (i * 13 + blocks + digest.length()));
                    }
                    ns.write(64, blocks, w);
                    ByteBuffer r = ByteBuffer.allocateDirect(blocks * 4096);
                    ns.read(64, blocks, r);
                    assertEquals(w, r, "digest=" + digest + " blocks=" + blocks);
                }
            }
        }
    }
}

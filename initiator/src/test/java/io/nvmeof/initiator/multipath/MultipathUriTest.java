package io.nvmeof.initiator.multipath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.NvmeUri;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Several comma-separated addresses in an NVMe URI, and iopolicy=. */
class MultipathUriTest {
    static final String NQN = "nqn.2024-01.io.nvmeof:disk1";

    @Test
    void severalAddressesGiveOnePathEach() {
        NvmeUri u = NvmeUri.parse(
                "nvme+tcp://192.0.2.10:4420,[fe80::1]:4421,host-b/" + NQN + "?queues=2&iopolicy=round-robin");
        assertTrue(u.isMultipath());
        assertEquals(
                List.of(
                        new NvmeUri.Address("192.0.2.10", 4420),
                        new NvmeUri.Address("fe80::1", 4421),
                        new NvmeUri.Address("host-b", 4420)),
                u.addresses());
        assertEquals("192.0.2.10", u.host());
        assertEquals(4420, u.port());
        assertEquals("round-robin", u.iopolicy());
        List<NvmeUri> paths = u.paths();
        assertEquals(3, paths.size());
        for (NvmeUri p : paths) {
            assertFalse(p.isMultipath());
            assertEquals(NQN, p.subsystemNqn());
            assertEquals(2, p.queues());
            assertEquals("round-robin", p.iopolicy());
        }
        assertEquals("fe80::1", paths.get(1).host());
        assertEquals(u, NvmeUri.parse(u.toString()), "the text form parses back: " + u);
        assertTrue(u.toString().startsWith("nvme+tcp://192.0.2.10:4420,[fe80::1]:4421,host-b:4420/"), u.toString());
    }

    @Test
    void iopolicyDefaultsToNuma() {
        NvmeUri u = NvmeUri.parse("nvme+tcp://a,b/" + NQN);
        assertEquals("numa", u.iopolicy());
        assertEquals(IoPolicy.NUMA, IoPolicy.parse(u.iopolicy()));
        assertEquals(IoPolicy.QUEUE_DEPTH, IoPolicy.parse("Queue-Depth"));
    }

    @Test
    void badMultipathUrisAreRefusedWithTheReason() {
        assertMessage("nvme+tcp://a:4420,a:4420/" + NQN, "given twice");
        assertMessage("nvme+tcp://a:4420,/" + NQN, "no host");
        assertMessage("nvme+tcp://a:4420,b:99999/" + NQN, "bad port");
        assertMessage("nvme+tcp://a,b", "give its NQN");
        assertMessage("nvme+tcp://a,b/" + NQN + "?iopolicy=fastest", "iopolicy must be one of");
        assertThrows(IllegalArgumentException.class, () -> IoPolicy.parse("service-time"));
    }

    private static void assertMessage(String uri, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(uri));
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}

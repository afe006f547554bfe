package io.nvmeof.initiator.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The CLI over NVMe/RDMA (the software RNIC on this machine): discovery entries of an RDMA port carry the RDMA
 * transport-specific address subtype (QPTYPE, PRTYPE, CMS, nvmeof-protocol.md §3.3), printed as nvme-cli prints them, not as SECTYPE.
 */
class NvmeofCliRdmaTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().transport("rdma").namespace("4M").build();

    @Test
    void discoverPrintsRdmaFields() throws Exception {
        NvmeofCliTest.Result r = NvmeofCliTest.run("discover", target.discoveryUri());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("trtype:  rdma"), r.out());
        assertTrue(r.out().contains("rdma_qptype: connected"), r.out());
        assertTrue(r.out().contains("rdma_prtype: not specified"), r.out());
        assertTrue(r.out().contains("rdma_cms:    rdma-cm"), r.out());
        assertTrue(!r.out().contains("sectype:"), r.out());

        NvmeofCliTest.Result j = NvmeofCliTest.run("discover", target.discoveryUri(), "--output-format", "json");
        assertEquals(0, j.code(), j.err());
        JsonNode e = new ObjectMapper().readTree(j.out()).get("records").get(1);
        assertEquals("rdma", e.get("trtype").asText());
        assertEquals("connected", e.get("rdma_qptype").asText());
        assertEquals("rdma-cm", e.get("rdma_cms").asText());
    }

    @Test
    void writeThenReadOverRdma() {
        byte[] data = new byte[8192];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31 + 7);
        }
        NvmeofCliTest.Result w =
                NvmeofCliTest.run(data, "write", target.uri(), "--start-block", "3", "--data-size", "8192");
        assertEquals(0, w.code(), w.err());
        NvmeofCliTest.Result rd = NvmeofCliTest.run("read", target.uri(), "--start-block", "3", "--data-size", "8192");
        assertEquals(0, rd.code(), rd.err());
        assertEquals(java.util.Arrays.toString(data), java.util.Arrays.toString(rd.outBytes()));
    }
}

package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.transport.rdma.RdmaTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code rdma} setup on this machine, which has no RDMA device: NVMe/RDMA over the software RNIC, labelled
 * emulated in the table, the JSON and the setup description; tiny workloads only (never a speed assertion).
 */
class RdmaSetupTest {
    @RegisterExtension
    static NvmeofTargetExtension target = NvmeofTargetExtension.builder()
            .transport("rdma")
            .namespace("64M")
            .blockSize(4096)
            .build();

    @Test
    void rdmaSetupNamesTheSoftwareRnic() {
        Setup s = Setup.named("rdma");
        assertEquals("rdma", s.transport());
        assertEquals("NVMe/RDMA, software RNIC (emulated)", s.description());
        assertTrue(s.emulated());
        assertEquals(null, s.unavailableReason(true));
        Setup h = Setup.named("rdma-hipri");
        assertTrue(h.emulated());
        assertEquals("1", h.effectiveUriOptions().get("hipri"));
        assertTrue(h.effectiveTargetArgs().contains("--busy-poll"));
        assertTrue(Setup.names().contains("rdma") && Setup.names().contains("rdma-hipri"));
        assertTrue(
                new CompareCommand()
                        .chosenSetups().stream().anyMatch(x -> x.name().equals("rdma")),
                "rdma is in the default compare set");
    }

    @Test
    void compareStartsAnRdmaTargetAndMarksTheColumnsEmulated() {
        // The embedded target: a separate process listening on rdma://127.0.0.1:0, plain and busy polling.
        Cli r = Cli.run(
                "compare",
                "--setups",
                "rdma",
                "--hipri",
                "--iodepth",
                "1",
                "--bs",
                "4k",
                "--runtime",
                "300ms",
                "--ramp_time",
                "100ms",
                "--size",
                "16m");
        assertEquals(0, r.exit(), r.toString());
        String out = r.out();
        assertTrue(out.contains("| rdma (EMULATED)"), out);
        assertTrue(out.contains("| rdma-hipri (EMULATED)"), out);
        assertTrue(out.contains("rdma = NVMe/RDMA, software RNIC (emulated)"), out);
        assertFalse(out.contains("unavailable"), out);
        assertFalse(out.contains("target CPU unknown"), "the target's CPU is read over the fabric: " + out);
    }

    @Test
    void compareJsonAgainstAnRdmaTargetUsesRegisteredBuffers() throws Exception {
        long copied = RdmaTransport.hostCopiedBytes();
        long zero = RdmaTransport.hostZeroCopyBytes();
        Cli j = Cli.run(
                "compare",
                "--target",
                target.uri(),
                "--setups",
                "rdma,tcp",
                "--iodepth",
                "4",
                "--bs",
                "16k",
                "--runtime",
                "300ms",
                "--ramp_time",
                "0",
                "--size",
                "8m",
                "--output-format",
                "json");
        assertEquals(0, j.exit(), j.toString());
        JsonNode root = new ObjectMapper().readTree(j.out()).get("nvmeof");
        JsonNode rdma = null;
        for (JsonNode s : root.get("setups")) {
            if (s.get("name").asText().equals("rdma")) {
                rdma = s;
            } else {
                assertTrue(s.get("unavailable").asText().contains("the target is nvme+rdma://"), s.toString());
            }
        }
        assertTrue(rdma != null && rdma.get("emulated").asBoolean(), root.toString());
        assertEquals(
                "NVMe/RDMA, software RNIC (emulated)", rdma.get("description").asText());
        JsonNode res = root.get("points").get(0).get("results").get("rdma");
        assertTrue(res.get("iops").asDouble() > 0);
        JsonNode fio = res.get("fio").get("jobs").get(0);
        assertTrue(fio.get("read").get("total_ios").asLong() > 0);
        assertTrue(res.get("fio").get("nvmeof") == null
                || res.get("fio").get("nvmeof").get("emulated").asBoolean());
        // The jobs' I/O buffers come from Controller.allocateBuffer: 16k reads move with no copy on the host.
        // The only host copies are the control commands' (Connect data, Identify pages, log page 0xC0): a few KiB
        // whatever the I/O.
        long copies = RdmaTransport.hostCopiedBytes() - copied;
        assertTrue(copies < 64 << 10, "no host copy for the perf tool's I/O buffers: " + copies + " bytes copied");
        assertTrue(RdmaTransport.hostZeroCopyBytes() - zero
                >= 16384L * fio.get("read").get("total_ios").asLong());
    }

    @Test
    void singleRunTakesTheSetupFromAnRdmaTarget() throws Exception {
        Cli j = Cli.run(
                "--target",
                target.uri(),
                "--rw=randwrite",
                "--bs=8k",
                "--iodepth=2",
                "--runtime=200ms",
                "--ramp_time=0",
                "--size=4m",
                "--output-format=json");
        assertEquals(0, j.exit(), j.toString());
        JsonNode n = new ObjectMapper().readTree(j.out()).get("jobs").get(0).get("nvmeof");
        if (n == null) {
            n = new ObjectMapper().readTree(j.out()).get("nvmeof");
        }
        assertEquals("rdma", n.get("setup").asText(), n.toString());
        assertEquals("rdma", n.get("transport").asText());
        assertTrue(n.get("emulated").asBoolean());
        assertEquals(
                "NVMe/RDMA, software RNIC (emulated)",
                n.get("setup_description").asText());
        Cli h = Cli.run("--target", target.uri(), "--runtime=100ms", "--ramp_time=0", "--size=4m");
        assertEquals(0, h.exit(), h.toString());
        assertTrue(h.out().contains("EMULATED"), h.out());
        Cli bad = Cli.run("--target", target.uri(), "--setup", "tcp", "--runtime=100ms");
        assertEquals(2, bad.exit(), bad.toString());
        assertTrue(bad.err().contains("the target is nvme+rdma://"), bad.err());
    }
}

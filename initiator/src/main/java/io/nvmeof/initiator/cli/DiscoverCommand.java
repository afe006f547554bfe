package io.nvmeof.initiator.cli;

import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.DiscoveryLog;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeUri;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code nvmeof discover URI}: the discovery log, printed like {@code nvme discover}. */
@Command(
        name = "discover",
        mixinStandardHelpOptions = true,
        description = "Read the discovery log of a discovery controller (the URI's NQN, if any, is ignored).")
final class DiscoverCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Override
    public Integer call() throws Exception {
        NvmeUri uri = common.parsedUri();
        DiscoveryLog log = Nvme.discover(uri, common.connectOptions());
        PrintWriter out = spec.commandLine().getOut();
        if (common.json()) {
            List<Map<String, Object>> records = new ArrayList<>();
            for (DiscoveryEntry e : log.entries()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("trtype", e.transportName());
                m.put("adrfam", e.addressFamilyName());
                m.put("subtype", e.subtypeName());
                m.put("treq", e.treqDescription());
                m.put("portid", e.portid());
                m.put("trsvcid", e.trsvcid());
                m.put("subnqn", e.subnqn());
                m.put("traddr", e.traddr());
                m.put("eflags", e.eflags() == 0 ? "none" : "0x" + Integer.toHexString(e.eflags()));
                if (e.trtype() == DiscoveryEntry.TRTYPE_RDMA) {
                    m.put("rdma_prtype", e.rdmaPrtypeName());
                    m.put("rdma_qptype", e.rdmaQptypeName());
                    m.put("rdma_cms", e.rdmaCmsName());
                    m.put("rdma_pkey", String.format("0x%04x", e.rdmaPkey()));
                } else {
                    m.put("sectype", e.sectypeName());
                }
                m.put("cntlid", e.cntlid());
                m.put("asqsz", e.asqsz());
                records.add(m);
            }
            Map<String, Object> root = new LinkedHashMap<>();
            root.put("genctr", log.generation());
            root.put("records", records);
            CommonOptions.printJson(out, root);
            return 0;
        }
        out.printf(
                "%nDiscovery Log Number of Records %d, Generation counter %d%n",
                log.entries().size(), log.generation());
        int i = 0;
        for (DiscoveryEntry e : log.entries()) {
            out.printf("=====Discovery Log Entry %d======%n", i++);
            out.printf("trtype:  %s%n", e.transportName());
            out.printf("adrfam:  %s%n", e.addressFamilyName());
            out.printf("subtype: %s%n", e.subtypeName());
            out.printf("treq:    %s%n", e.treqDescription());
            out.printf("portid:  %d%n", e.portid());
            out.printf("trsvcid: %s%n", e.trsvcid());
            out.printf("subnqn:  %s%n", e.subnqn());
            out.printf("traddr:  %s%n", e.traddr());
            out.printf("eflags:  %s%n", e.eflags() == 0 ? "none" : "0x" + Integer.toHexString(e.eflags()));
            if (e.trtype() == DiscoveryEntry.TRTYPE_RDMA) {
                // nvme-cli prints the RDMA transport-specific address subtype fields instead of SECTYPE
                // (nvmeof-protocol.md §3.3).
                out.printf("rdma_prtype: %s%n", e.rdmaPrtypeName());
                out.printf("rdma_qptype: %s%n", e.rdmaQptypeName());
                out.printf("rdma_cms:    %s%n", e.rdmaCmsName());
                out.printf("rdma_pkey: 0x%04x%n", e.rdmaPkey());
            } else {
                out.printf("sectype: %s%n", e.sectypeName());
            }
        }
        out.flush();
        return 0;
    }
}

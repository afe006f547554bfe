package io.nvmeof.initiator.cli;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
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

/** {@code nvmeof list URI}: the subsystem's controller identity and its namespaces. */
@Command(name = "list", mixinStandardHelpOptions = true, description = "List the namespaces of a subsystem.")
final class ListCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        try (Controller c = common.connect()) {
            if (common.json()) {
                List<Map<String, Object>> nss = new ArrayList<>();
                for (Namespace ns : c.namespaces()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("nsid", ns.nsid());
                    m.put("size_bytes", ns.sizeBytes());
                    m.put("block_size", ns.blockSize());
                    m.put("blocks", ns.blockCount());
                    m.put("read_only", ns.readOnly());
                    m.put("nguid", ns.nguid());
                    m.put("eui64", ns.eui64());
                    m.put("uuid", ns.uuid() == null ? null : ns.uuid().toString());
                    nss.add(m);
                }
                Map<String, Object> root = new LinkedHashMap<>();
                root.put("subnqn", c.subsystemNqn());
                root.put("model", c.modelNumber());
                root.put("serial", c.serialNumber());
                root.put("firmware", c.firmwareRevision());
                root.put("cntlid", c.cntlid());
                root.put("version", c.version());
                root.put("namespaces", nss);
                CommonOptions.printJson(out, root);
                return 0;
            }
            out.printf("Subsystem %s%n", c.subsystemNqn());
            out.printf(
                    "Model %s, SN %s, FW Rev %s, NVMe %s, controller %d%n%n",
                    c.modelNumber(), c.serialNumber(), c.firmwareRevision(), c.version(), c.cntlid());
            out.printf("%-10s %-14s %-16s %-9s %s%n", "Namespace", "Usage", "Format", "Access", "UUID");
            out.printf(
                    "%-10s %-14s %-16s %-9s %s%n",
                    "---------",
                    "-------------",
                    "---------------",
                    "--------",
                    "------------------------------------");
            for (Namespace ns : c.namespaces()) {
                out.printf(
                        "%-10d %-14s %-16s %-9s %s%n",
                        ns.nsid(),
                        CommonOptions.size(ns.sizeBytes()),
                        ns.blockSize() + " B + 0 B",
                        ns.readOnly() ? "ro" : "rw",
                        ns.uuid() != null ? ns.uuid() : ns.nguid() != null ? ns.nguid() : "-");
            }
            out.flush();
            return 0;
        }
    }
}

package io.nvmeof.initiator.cli;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.NamespaceIdentity;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code nvmeof id-ns URI [-n NSID]}: Identify Namespace, like {@code nvme id-ns}. */
@Command(
        name = "id-ns",
        mixinStandardHelpOptions = true,
        description = "Identify Namespace (nvmeof-protocol.md §3.2.2).")
final class IdNsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Option(
            names = {"-n", "--namespace-id"},
            paramLabel = "NSID",
            description = "Namespace ID (default: the URI's nsid, else the first active one)")
    Integer nsid;

    @Override
    public Integer call() throws Exception {
        if (nsid != null && nsid < 1) {
            throw new IllegalArgumentException("--namespace-id must be at least 1: " + nsid);
        }
        try (Controller c = common.connect()) {
            Namespace ns = nsid != null ? c.namespace(nsid) : c.namespace();
            NamespaceIdentity id = ns.identity();
            PrintWriter out = spec.commandLine().getOut();
            if (common.json()) {
                CommonOptions.printJson(out, id);
                return 0;
            }
            out.printf("NVME Identify Namespace %d:%n", ns.nsid());
            IdCtrlCommand.printRecord(out, id);
            out.printf(
                    "%-9s : %d bytes (%s), block size %d%n",
                    "size", id.sizeBytes(), CommonOptions.size(id.sizeBytes()), id.blockSize());
            out.flush();
            return 0;
        }
    }
}

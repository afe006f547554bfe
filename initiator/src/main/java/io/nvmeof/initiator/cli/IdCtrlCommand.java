package io.nvmeof.initiator.cli;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.ControllerIdentity;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeUri;
import java.io.PrintWriter;
import java.lang.reflect.RecordComponent;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code nvmeof id-ctrl URI}: Identify Controller, like {@code nvme id-ctrl}. Works on discovery controllers too. */
@Command(
        name = "id-ctrl",
        mixinStandardHelpOptions = true,
        description =
                "Identify Controller (nvmeof-protocol.md §3.2.1) of a subsystem's controller or of a discovery controller.")
final class IdCtrlCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Override
    public Integer call() throws Exception {
        NvmeUri uri = common.parsedUri();
        try (Controller c = Nvme.connect(uri, common.connectOptions())) {
            ControllerIdentity id = c.identity();
            PrintWriter out = spec.commandLine().getOut();
            if (common.json()) {
                CommonOptions.printJson(out, id);
                return 0;
            }
            out.println("NVME Identify Controller:");
            printRecord(out, id);
            return 0;
        }
    }

    /** One "name      : value" line per record component, numbers in hex where nvme-cli prints hex. */
    static void printRecord(PrintWriter out, Record r) throws ReflectiveOperationException {
        for (RecordComponent rc : r.getClass().getRecordComponents()) {
            Object v = rc.getAccessor().invoke(r);
            String text;
            if (v instanceof Integer i && !isDecimal(rc.getName())) {
                text = "0x" + Integer.toHexString(i);
            } else if (v instanceof Long l && !isDecimal(rc.getName())) {
                text = "0x" + Long.toHexString(l);
            } else {
                text = String.valueOf(v);
            }
            out.printf(Locale.ROOT, "%-9s : %s%n", rc.getName(), text);
        }
        out.flush();
    }

    private static boolean isDecimal(String field) {
        switch (field) {
            case "cntlid":
            case "kas":
            case "maxcmd":
            case "nn":
            case "mdts":
            case "acl":
            case "aerl":
            case "elpe":
            case "ioccsz":
            case "iorcsz":
            case "icdoff":
            case "msdbd":
            case "rab":
            case "nsid":
            case "nsze":
            case "ncap":
            case "nuse":
            case "nlbaf":
            case "lbads":
            case "ms":
                return true;
            default:
                return false;
        }
    }
}

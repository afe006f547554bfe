package io.nvmeof.initiator.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeUri;
import java.io.PrintWriter;
import java.util.Locale;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Options every verb shares (a Picocli mixin): the URI, the output format and the host NQN. */
final class CommonOptions {
    enum Format {
        normal,
        json
    }

    @Parameters(
            index = "0",
            paramLabel = "URI",
            description = "nvme+tcp://HOST[:PORT][/NQN][?OPTIONS] (port 4420 unless given)")
    String uri;

    @Option(
            names = {"-o", "--output-format"},
            paramLabel = "FMT",
            description = "normal (default) or json")
    Format format = Format.normal;

    @Option(
            names = {"-q", "--hostnqn"},
            paramLabel = "NQN",
            description = "Host NQN (default: /etc/nvme/hostnqn or " + "one derived from the machine ID)")
    String hostNqn;

    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    NvmeUri parsedUri() {
        return NvmeUri.parse(uri);
    }

    @Option(
            names = {"-S", "--dhchap-secret"},
            paramLabel = "DHHC-1:..",
            description = "The host's DH-HMAC-CHAP secret (nvme-cli's option; docs/security.md).")
    String dhchapSecret;

    @Option(
            names = {"-C", "--dhchap-ctrl-secret"},
            paramLabel = "DHHC-1:..",
            description = "The controller's secret: authenticate the controller too (bidirectional).")
    String dhchapCtrlSecret;

    ConnectOptions connectOptions() {
        if (hostNqn == null && dhchapSecret == null && dhchapCtrlSecret == null) {
            return ConnectOptions.defaults();
        }
        if (hostNqn != null && !hostNqn.startsWith("nqn.")) {
            throw new IllegalArgumentException("--hostnqn must start with 'nqn.': " + hostNqn);
        }
        return ConnectOptions.builder()
                .hostIdentity(hostNqn == null ? null : HostIdentity.of(hostNqn))
                .dhchapSecret(dhchapSecret)
                .dhchapCtrlSecret(dhchapCtrlSecret)
                .build();
    }

    Controller connect() throws NvmeException {
        NvmeUri u = parsedUri();
        if (u.isDiscovery()) {
            throw new IllegalArgumentException("'" + uri + "' names no subsystem: add its NQN, e.g. "
                    + "nvme+tcp://HOST:4420/nqn.2024-01.io.nvmeof:disk1 (or use 'nvmeof discover')");
        }
        return Nvme.connect(u, connectOptions());
    }

    boolean json() {
        return format == Format.json;
    }

    static void printJson(PrintWriter out, Object value) {
        try {
            out.println(JSON.writeValueAsString(value));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        out.flush();
    }

    /** E.g. 1073741824 → "1.07 GB" like nvme-cli's Usage column... we print binary units: "1.00 GiB". */
    static String size(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.2f %s", v, units[u]);
    }
}

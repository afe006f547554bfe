package io.nvmeof.target.daemon;

import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.target.config.HostAuth;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code --dhchap-host} flag: {@code host=NQN,key-file=PATH[,ctrl-key-file=PATH][,hashes=A:B][,dhgroups=A:B]}
 * (or {@code key=}/{@code ctrl-key=} with the secret itself). Errors name the flag's part, never a secret.
 */
final class DhchapHostSpec {
    private DhchapHostSpec() {}

    static HostAuth parse(String spec) {
        String host = null;
        String key = null;
        String keyFile = null;
        String ctrlKey = null;
        String ctrlKeyFile = null;
        List<String> hashes = List.of();
        List<String> groups = List.of();
        for (String part : spec.split(",")) {
            int eq = part.indexOf('=');
            String name = eq < 0 ? part : part.substring(0, eq).trim();
            String value = eq < 0 ? "" : part.substring(eq + 1).trim();
            switch (name) {
                case "host":
                    host = value;
                    break;
                case "key":
                    key = value;
                    break;
                case "key-file":
                    keyFile = value;
                    break;
                case "ctrl-key":
                    ctrlKey = value;
                    break;
                case "ctrl-key-file":
                    ctrlKeyFile = value;
                    break;
                case "hashes":
                    hashes = Arrays.asList(value.split(":"));
                    break;
                case "dhgroups":
                    groups = Arrays.asList(value.split(":"));
                    break;
                default:
                    throw new IllegalArgumentException("--dhchap-host: unknown part '" + name
                            + "' (host, key-file, ctrl-key-file, key, ctrl-key, hashes, dhgroups)");
            }
        }
        if (host == null || host.isEmpty() || (key == null) == (keyFile == null)) {
            throw new IllegalArgumentException("--dhchap-host needs host=NQN and one of key-file=PATH or key=SECRET");
        }
        if (ctrlKey != null && ctrlKeyFile != null) {
            throw new IllegalArgumentException("--dhchap-host: give ctrl-key-file or ctrl-key, not both");
        }
        try {
            DhchapSecret ctrl = ctrlKey == null && ctrlKeyFile == null
                    ? null
                    : DhchapSecrets.read(ctrlKey, ctrlKeyFile, "ctrl-key");
            return new HostAuth(
                    host,
                    DhchapSecrets.read(key, keyFile, "key"),
                    ctrl,
                    HostAuth.hashes(hashes),
                    HostAuth.groups(groups));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--dhchap-host " + host + ": " + e.getMessage());
        }
    }
}

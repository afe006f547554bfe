package io.nvmeof.target.daemon;

import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.Sizes;
import java.nio.file.Path;
import java.util.Locale;
import java.util.UUID;

/**
 * Parses the daemon's {@code --namespace size=1G[,bs=4096][,nsid=N][,uuid=U][,ro][,ana-group=G][,file=PATH][,prealloc]}
 * option.
 */
final class NamespaceSpec {
    private NamespaceSpec() {}

    static NamespaceConfig parse(String spec, int defaultNsid) {
        Long size = null;
        int blockSize = 4096;
        int nsid = defaultNsid;
        UUID uuid = null;
        boolean readOnly = false;
        int anaGroup = 0;
        Path file = null;
        boolean preallocate = false;
        for (String part : spec.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            String key = (eq < 0 ? p : p.substring(0, eq)).toLowerCase(Locale.ROOT);
            String value = eq < 0 ? null : p.substring(eq + 1);
            switch (key) {
                case "size":
                    size = Sizes.parse(require(key, value));
                    break;
                case "bs":
                case "block-size":
                    blockSize = (int) Sizes.parse(require(key, value));
                    break;
                case "nsid":
                    try {
                        nsid = Integer.parseInt(require(key, value));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("nsid must be a number: " + value);
                    }
                    break;
                case "uuid":
                    uuid = UUID.fromString(require(key, value));
                    break;
                case "ana-group":
                    try {
                        anaGroup = Integer.parseInt(require(key, value));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("ana-group must be a number: " + value);
                    }
                    if (anaGroup < 1) {
                        throw new IllegalArgumentException(
                                "ana-group is 1.." + NamespaceConfig.MAX_ANA_GROUP + ": " + anaGroup);
                    }
                    break;
                case "file":
                    file = Path.of(require(key, value));
                    break;
                case "ro":
                case "read-only":
                    readOnly = true;
                    break;
                case "prealloc":
                case "preallocate":
                    preallocate = value == null || onOff(key, value);
                    break;
                default:
                    throw new IllegalArgumentException("unknown namespace setting '" + key
                            + "' (use size=1G,bs=4096|512,nsid=N,uuid=U,ro,ana-group=G,file=PATH,prealloc)");
            }
        }
        if (size == null) {
            throw new IllegalArgumentException("--namespace needs size=..., e.g. --namespace size=1G");
        }
        return new NamespaceConfig(nsid, size, blockSize, uuid, readOnly, anaGroup, file, preallocate);
    }

    private static boolean onOff(String key, String value) {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "on":
            case "true":
            case "yes":
            case "1":
                return true;
            case "off":
            case "false":
            case "no":
            case "0":
                return false;
            default:
                throw new IllegalArgumentException(
                        "namespace setting '" + key + "' is on or off (or given alone for on): " + value);
        }
    }

    private static String require(String key, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("namespace setting '" + key + "' needs a value");
        }
        return value;
    }
}

package io.nvmeof.initiator;

import io.nvmeof.core.command.Nqn;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * Who this host is to a controller: the host NQN and the 128-bit host identifier sent in every Connect (nvmeof-protocol.md §2.2).
 *
 * <p>The default is stable across runs on one machine, so access lists on targets keep working:
 * <ol>
 *   <li>{@code /etc/nvme/hostnqn} and {@code /etc/nvme/hostid} if they exist (what nvme-cli and the kernel host use),</li>
 *   <li>otherwise {@code nqn.2014-08.org.nvmexpress:uuid:<uuid>} with a UUID derived from {@code /etc/machine-id}
 *       (or the host name), and that same UUID as host identifier.</li>
 * </ol>
 *
 * @param hostNqn the host NQN
 * @param hostId  the host identifier, identical on every queue of a controller (nvmeof-protocol.md §2.2)
 */
public record HostIdentity(String hostNqn, UUID hostId) {
    private static volatile HostIdentity defaultIdentity;

    /** The default identity described above. */
    public static HostIdentity defaults() {
        HostIdentity d = defaultIdentity;
        if (d == null) {
            d = computeDefault();
            defaultIdentity = d;
        }
        return d;
    }

    /** The default host NQN. */
    public static String defaultHostNqn() {
        return defaults().hostNqn();
    }

    /** An identity for {@code hostNqn}: its UUID if it is a UUID NQN, else one derived from the NQN. */
    public static HostIdentity of(String hostNqn) {
        if (hostNqn == null) {
            return defaults();
        }
        if (hostNqn.equals(defaults().hostNqn())) {
            return defaults();
        }
        return new HostIdentity(hostNqn, uuidOf(hostNqn));
    }

    private static UUID uuidOf(String hostNqn) {
        if (hostNqn.startsWith(Nqn.UUID_PREFIX)) {
            try {
                return UUID.fromString(hostNqn.substring(Nqn.UUID_PREFIX.length()));
            } catch (IllegalArgumentException e) {
                // not a UUID after all: derive one below
            }
        }
        return UUID.nameUUIDFromBytes(hostNqn.getBytes(StandardCharsets.UTF_8));
    }

    private static HostIdentity computeDefault() {
        String nqn = readLine(Path.of("/etc/nvme/hostnqn"));
        if (nqn != null && nqn.startsWith("nqn.")) {
            UUID id = null;
            String hostId = readLine(Path.of("/etc/nvme/hostid"));
            if (hostId != null) {
                try {
                    id = UUID.fromString(hostId);
                } catch (IllegalArgumentException e) {
                    id = null;
                }
            }
            return new HostIdentity(nqn, id != null ? id : uuidOf(nqn));
        }
        String seed = readLine(Path.of("/etc/machine-id"));
        if (seed == null) {
            try {
                seed = InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                seed = System.getProperty("user.name", "nvmeof-java");
            }
        }
        UUID uuid = UUID.nameUUIDFromBytes(("nvmeof-java host " + seed).getBytes(StandardCharsets.UTF_8));
        return new HostIdentity(Nqn.UUID_PREFIX + uuid, uuid);
    }

    private static String readLine(Path p) {
        try {
            if (Files.isReadable(p)) {
                String s = Files.readString(p, StandardCharsets.US_ASCII).trim();
                return s.isEmpty() ? null : s;
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }
}

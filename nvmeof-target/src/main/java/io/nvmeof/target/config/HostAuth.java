package io.nvmeof.target.config;

import io.nvmeof.core.auth.DhGroup;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import java.util.List;

/**
 * The DH-HMAC-CHAP settings of one host on one subsystem (docs/security.md): the host's key, the controller's key
 * for bidirectional authentication (optional), and the hash functions and DH groups the controller may choose, in its
 * order of preference (it takes the first one the host offers). A host with these settings must authenticate on every
 * queue; it is on the subsystem's allow-list too.
 *
 * <p>{@link #toString()} shows the secrets' form, never their keys.
 *
 * @param hostNqn the host NQN
 * @param key     the host's secret (Kh is derived from it with the host NQN)
 * @param ctrlKey the controller's secret (Kc, with the subsystem NQN), or null: unidirectional only; a host asking
 *                for bidirectional authentication then fails
 * @param hashes  allowed hash functions in preference order; empty = SHA-256, SHA-384, SHA-512
 * @param groups  allowed DH groups in preference order; empty = null, ffdhe2048 ... ffdhe8192 (nvmet's default is
 *                null too)
 */
public record HostAuth(
        String hostNqn, DhchapSecret key, DhchapSecret ctrlKey, List<DhchapHash> hashes, List<DhGroup> groups) {
    public HostAuth {
        if (hostNqn == null || hostNqn.isBlank()) {
            throw new IllegalArgumentException("DH-HMAC-CHAP settings need a host NQN");
        }
        if (key == null) {
            throw new IllegalArgumentException("DH-HMAC-CHAP settings of " + hostNqn + " need the host key");
        }
        hashes = hashes == null || hashes.isEmpty() ? List.of(DhchapHash.values()) : List.copyOf(hashes);
        groups = groups == null || groups.isEmpty() ? List.of(DhGroup.values()) : List.copyOf(groups);
    }

    /** Settings with every hash and group allowed. */
    public HostAuth(String hostNqn, DhchapSecret key, DhchapSecret ctrlKey) {
        this(hostNqn, key, ctrlKey, List.of(), List.of());
    }

    /** Parses a list of hash names ({@code sha256}, {@code hmac(sha384)}, ...). */
    public static List<DhchapHash> hashes(List<String> names) {
        return names == null ? List.of() : names.stream().map(HostAuth::hash).toList();
    }

    /** Parses a list of DH group names ({@code null}, {@code ffdhe2048}, ...). */
    public static List<DhGroup> groups(List<String> names) {
        return names == null ? List.of() : names.stream().map(HostAuth::group).toList();
    }

    private static DhchapHash hash(String n) {
        DhchapHash h = DhchapHash.byName(n);
        if (h == null) {
            throw new IllegalArgumentException("unknown DH-HMAC-CHAP hash '" + n + "' (sha256, sha384, sha512)");
        }
        return h;
    }

    private static DhGroup group(String n) {
        DhGroup g = DhGroup.byName(n);
        if (g == null) {
            throw new IllegalArgumentException(
                    "unknown DH group '" + n + "' (null, ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144, ffdhe8192)");
        }
        return g;
    }
}

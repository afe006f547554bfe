package io.nvmeof.initiator;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.core.tls.PskHash;
import io.nvmeof.core.tls.TlsPsk;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The NVMe/TCP TLS options of an {@link NvmeUri} ({@code tls}, {@code psk}, {@code psk_file}, {@code psk_identity},
 * {@code psk_derivation}): whether to run TLS 1.3 before ICReq (NVMe/TCP Transport §3.6), with which configured PSK,
 * which PSK identity version (0: {@code NVMe0R0x host subsys}, what the Linux 6.12 host looks up and nvme-cli's
 * {@code gen-tls-key} inserts by default; 1: {@code NVMe1R0x host subsys digest}) and which HkdfLabel encoding
 * ({@link PskDerivation}). The key never appears in {@link #toString()} or in an {@link NvmeUri}'s text.
 *
 * @param enabled         whether the queues use TLS
 * @param psk             the configured PSK (required when enabled)
 * @param pskFile         the file it was read from, or null when given inline
 * @param identityVersion 0 or 1
 * @param derivation      RFC 8446 (default) or libnvme's compat encoding
 * @param tlsHash         the hash TLS binds the PSK to ({@code tls_hash=sha256|sha384}), null for the key's own; a
 *                        Linux target (tlshd, GnuTLS) takes a SHA-384 ("R02") key only bound to SHA-256
 */
public record TlsUriOptions(
        boolean enabled,
        ConfiguredPsk psk,
        String pskFile,
        int identityVersion,
        PskDerivation derivation,
        PskHash tlsHash) {
    /** No TLS. */
    public static final TlsUriOptions NONE = new TlsUriOptions(false, null, null, 0, PskDerivation.RFC8446, null);

    public TlsUriOptions {
        derivation = derivation == null ? PskDerivation.RFC8446 : derivation;
        if (identityVersion != 0 && identityVersion != 1) {
            throw new IllegalArgumentException("psk_identity is 0 or 1, not " + identityVersion);
        }
        if (enabled && psk == null) {
            throw new IllegalArgumentException("tls=1 needs a PSK: psk=NVMeTLSkey-1:...: or psk_file=PATH");
        }
    }

    /** TLS with this key, identity version 0, RFC 8446 derivation. */
    public static TlsUriOptions of(ConfiguredPsk psk) {
        return new TlsUriOptions(true, psk, null, 0, PskDerivation.RFC8446, null);
    }

    /** Reads a key file holding one key in the interchange format. */
    static ConfiguredPsk readKeyFile(String path) {
        try {
            return ConfiguredPsk.parse(Files.readString(Path.of(path)).strip());
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read psk_file " + path + ": " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("psk_file " + path + ": " + e.getMessage());
        }
    }

    /** The identity and TLS PSK this host offers to {@code subsysNqn}, or null without TLS. */
    public TlsPsk tlsPsk(String hostNqn, String subsysNqn) {
        if (!enabled) {
            return null;
        }
        TlsPsk p = psk.derive(hostNqn, subsysNqn, identityVersion, derivation);
        return tlsHash == null ? p : p.withTlsHash(tlsHash);
    }

    /** The query options, without the key (psk=... is shown as psk=(set)). */
    String query() {
        if (!enabled) {
            return "";
        }
        StringBuilder b = new StringBuilder("&tls=1");
        b.append(pskFile != null ? "&psk_file=" + pskFile : "&psk=(set)");
        if (identityVersion != 0) {
            b.append("&psk_identity=").append(identityVersion);
        }
        if (derivation != PskDerivation.RFC8446) {
            b.append("&psk_derivation=").append(derivation.configName());
        }
        if (tlsHash != null) {
            b.append("&tls_hash=").append(tlsHash == PskHash.SHA256 ? "sha256" : "sha384");
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return enabled ? "TLS" + query() : "no TLS";
    }
}

package io.nvmeof.core.tls;

import java.nio.charset.StandardCharsets;

/**
 * What a TLS 1.3 handshake needs for one NVMe/TCP connection: the PSK identity and the TLS PSK derived for it
 * ({@link PskDerivation}). The key is copied in and out and never printed.
 */
public final class TlsPsk {
    private final PskIdentity identity;
    private final byte[] key;
    private final PskHash tlsHash;

    public TlsPsk(PskIdentity identity, byte[] key) {
        this(identity, key, null);
    }

    private TlsPsk(PskIdentity identity, byte[] key, PskHash tlsHash) {
        if (identity == null || key == null || key.length != identity.hash().length()) {
            throw new IllegalArgumentException("a TLS PSK has an identity and as many bytes as its hash");
        }
        this.identity = identity;
        this.key = key.clone();
        this.tlsHash = tlsHash != null ? tlsHash : identity.hash();
    }

    /**
     * This PSK bound to another hash in TLS (the PSK binder, the key schedule and so the cipher suite). The spec binds
     * it to the identity's hash; tlshd (ktls-utils 1.0 with GnuTLS), which does the Linux kernel's handshakes, binds
     * every external PSK to SHA-256, so a host that talks to a Linux target with an "R02" key has to as well.
     */
    public TlsPsk withTlsHash(PskHash hash) {
        return new TlsPsk(identity, key, hash);
    }

    /** The hash TLS binds this PSK to: the identity's, unless {@link #withTlsHash} said otherwise. */
    public PskHash tlsHash() {
        return tlsHash;
    }

    public PskIdentity identity() {
        return identity;
    }

    /** The identity as the ClientHello carries it. */
    public byte[] identityBytes() {
        return identity.wire().getBytes(StandardCharsets.UTF_8);
    }

    /** The hash of the PSK, which selects the cipher suite. */
    public PskHash hash() {
        return identity.hash();
    }

    /** A copy of the TLS PSK bytes. */
    public byte[] key() {
        return key.clone();
    }

    @Override
    public String toString() {
        return "TlsPsk[" + identity.wire() + "]";
    }
}

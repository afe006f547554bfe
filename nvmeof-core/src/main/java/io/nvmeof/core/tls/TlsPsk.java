package io.nvmeof.core.tls;

import java.nio.charset.StandardCharsets;

/**
 * What a TLS 1.3 handshake needs for one NVMe/TCP connection: the PSK identity and the TLS PSK derived for it
 * ({@link PskDerivation}). The key is copied in and out and never printed.
 */
public final class TlsPsk {
    private final PskIdentity identity;
    private final byte[] key;

    public TlsPsk(PskIdentity identity, byte[] key) {
        if (identity == null || key == null || key.length != identity.hash().length()) {
            throw new IllegalArgumentException("a TLS PSK has an identity and as many bytes as its hash");
        }
        this.identity = identity;
        this.key = key.clone();
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

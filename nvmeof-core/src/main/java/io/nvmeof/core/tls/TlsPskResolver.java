package io.nvmeof.core.tls;

/**
 * The target's side of the PSK choice: given the identity a client offers in its ClientHello, the TLS PSK to use, or
 * null if the target has none for it (the handshake then fails). Called on the connection's event-loop thread during
 * the handshake, so it must not block; it may be called from several connections at once.
 */
@FunctionalInterface
public interface TlsPskResolver {
    /** A resolver that knows no identity. */
    TlsPskResolver NONE = identity -> null;

    /**
     * @param identity the identity the client offered (it travels in the clear, and may be logged)
     * @return the PSK for it, or null
     */
    TlsPsk resolve(String identity);
}

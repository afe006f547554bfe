package io.nvmeof.core.tls;

/**
 * Whether a listener speaks TLS, and what its discovery log entry says about it (nvmeof-protocol.md §3.3): TREQ bits
 * 1:0 (secure channel: 00 not specified, 01 required, 10 not required) and the TCP TSAS SECTYPE (0 none, 2 TLS 1.3).
 */
public enum SecureChannel {
    /** Plain NVMe/TCP only: TREQ "not specified", SECTYPE 0. */
    NONE(0, 0),
    /** TLS 1.3 or plain, the client chooses: TREQ "not required", SECTYPE 2 (nvmet's {@code addr_treq} not required). */
    ALLOWED(2, 2),
    /** TLS 1.3 only: TREQ "required", SECTYPE 2. */
    REQUIRED(1, 2);

    /** TSAS SECTYPE 2: TLS 1.3. */
    public static final int SECTYPE_TLS13 = 2;

    private final int treq;
    private final int sectype;

    SecureChannel(int treq, int sectype) {
        this.treq = treq;
        this.sectype = sectype;
    }

    /** TREQ bits 1:0. */
    public int treqBits() {
        return treq;
    }

    /** The TCP TSAS SECTYPE byte. */
    public int sectype() {
        return sectype;
    }

    /** Whether a TLS handshake may take place on this listener. */
    public boolean tls() {
        return this != NONE;
    }

    /** "none", "allowed" or "required" (the listener's {@code tls=} option). */
    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Parses "none", "allowed" or "required". */
    public static SecureChannel ofConfigName(String name) {
        for (SecureChannel s : values()) {
            if (s.configName().equalsIgnoreCase(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("tls is none, allowed or required, not " + name);
    }
}

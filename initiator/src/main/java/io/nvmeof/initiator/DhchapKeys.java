package io.nvmeof.initiator;

import io.nvmeof.core.auth.DhchapSecret;

/**
 * The host's DH-HMAC-CHAP secrets (docs/security.md): its own, and optionally the controller's, with which the host
 * also authenticates the controller (bidirectional). From the URI's {@code dhchap_secret} and
 * {@code dhchap_ctrl_secret} or {@link ConnectOptions.Builder#dhchapSecret}. {@link #toString()} never shows a key.
 *
 * @param secret     the host's secret (required)
 * @param ctrlSecret the controller's secret, or null: the host does not authenticate the controller
 */
public record DhchapKeys(DhchapSecret secret, DhchapSecret ctrlSecret) {
    public DhchapKeys {
        if (secret == null) {
            throw new IllegalArgumentException("DH-HMAC-CHAP needs the host's secret (dhchap_secret)");
        }
    }

    /** Parses the {@code DHHC-1:hh:BASE64:} texts; {@code ctrlSecret} may be null. */
    public static DhchapKeys parse(String secret, String ctrlSecret) {
        return new DhchapKeys(DhchapSecret.parse(secret), ctrlSecret == null ? null : DhchapSecret.parse(ctrlSecret));
    }

    /** Whether the host also authenticates the controller. */
    public boolean bidirectional() {
        return ctrlSecret != null;
    }
}

package io.nvmeof.core.tls;

/**
 * The hash of an NVMe/TCP TLS PSK (NVMe/TCP Transport §3.6.1.3, TP 8011): the two-digit code in the PSK interchange
 * format ({@code NVMeTLSkey-1:01:...}) and in the PSK identity ({@code NVMe0R01 ...}), and the TLS 1.3 cipher suite it
 * goes with.
 */
public enum PskHash {
    /** 01: SHA-256, 32-byte keys, TLS_AES_128_GCM_SHA256. */
    SHA256(1, "HmacSHA256", 32, "TLS_AES_128_GCM_SHA256"),
    /** 02: SHA-384, 48-byte keys, TLS_AES_256_GCM_SHA384. */
    SHA384(2, "HmacSHA384", 48, "TLS_AES_256_GCM_SHA384");

    private final int code;
    private final String hmac;
    private final int length;
    private final String cipherSuite;

    PskHash(int code, String hmac, int length, String cipherSuite) {
        this.code = code;
        this.hmac = hmac;
        this.length = length;
        this.cipherSuite = cipherSuite;
    }

    /** The code in the interchange format and the identity: 1 or 2. */
    public int code() {
        return code;
    }

    /** The JCA name of the HMAC over this hash. */
    public String hmacAlgorithm() {
        return hmac;
    }

    /** The hash output length in bytes, which is also the key length: 32 or 48. */
    public int length() {
        return length;
    }

    /** The TLS 1.3 cipher suite whose hash this is. */
    public String cipherSuite() {
        return cipherSuite;
    }

    /** The hash for code 1 or 2. */
    public static PskHash ofCode(int code) {
        for (PskHash h : values()) {
            if (h.code == code) {
                return h;
            }
        }
        throw new IllegalArgumentException("unknown PSK hash " + code + " (01 = SHA-256, 02 = SHA-384)");
    }

    /** The hash that goes with a key of {@code length} bytes: 32 → SHA-256, 48 → SHA-384 (libnvme's default). */
    public static PskHash ofKeyLength(int length) {
        for (PskHash h : values()) {
            if (h.length == length) {
                return h;
            }
        }
        throw new IllegalArgumentException("a TLS PSK is 32 or 48 bytes, not " + length);
    }
}

package io.nvmeof.core.auth;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The hash functions of DH-HMAC-CHAP (NVMe Base 2.0 §8.13.5, docs/security.md): the HashID of the negotiate and
 * challenge messages and of a {@code DHHC-1:xx:} secret, with the JDK's HMAC and digest for each. Identifier 0 is not
 * a hash here: in a secret it means "no key transformation" ({@link DhchapSecret#hash()} is null then).
 */
public enum DhchapHash {
    SHA_256(1, 32, "sha256", "HmacSHA256", "SHA-256"),
    SHA_384(2, 48, "sha384", "HmacSHA384", "SHA-384"),
    SHA_512(3, 64, "sha512", "HmacSHA512", "SHA-512");

    private final int id;
    private final int length;
    private final String shortName;
    private final String macAlgorithm;
    private final String digestAlgorithm;

    DhchapHash(int id, int length, String shortName, String macAlgorithm, String digestAlgorithm) {
        this.id = id;
        this.length = length;
        this.shortName = shortName;
        this.macAlgorithm = macAlgorithm;
        this.digestAlgorithm = digestAlgorithm;
    }

    /** The HashID on the wire: 1, 2 or 3. */
    public int id() {
        return id;
    }

    /** The hash length HL in bytes: 32, 48 or 64. */
    public int length() {
        return length;
    }

    /** SPDK's name ({@code sha256}); Linux nvmet names it {@code hmac(sha256)}. */
    public String shortName() {
        return shortName;
    }

    /** The hash for HashID {@code id}, or null for any other value (0 included). */
    public static DhchapHash of(int id) {
        for (DhchapHash h : values()) {
            if (h.id == id) {
                return h;
            }
        }
        return null;
    }

    /** Parses {@code sha256}, {@code SHA-256}, {@code hmac(sha256)} or the enum name; null if none matches. */
    public static DhchapHash byName(String name) {
        String n =
                name.trim().toLowerCase(java.util.Locale.ROOT).replace("-", "").replace("_", "");
        if (n.startsWith("hmac(") && n.endsWith(")")) {
            n = n.substring(5, n.length() - 1);
        }
        for (DhchapHash h : values()) {
            if (h.shortName.equals(n)) {
                return h;
            }
        }
        return null;
    }

    /** A new HMAC keyed with {@code key}. */
    public Mac mac(byte[] key) {
        try {
            Mac mac = Mac.getInstance(macAlgorithm);
            mac.init(new SecretKeySpec(key, macAlgorithm));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no " + macAlgorithm, e);
        }
    }

    /** H(data). */
    public byte[] digest(byte[] data) {
        try {
            return MessageDigest.getInstance(digestAlgorithm).digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no " + digestAlgorithm, e);
        }
    }
}

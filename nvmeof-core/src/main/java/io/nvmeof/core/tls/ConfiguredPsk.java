package io.nvmeof.core.tls;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;

/**
 * A configured PSK in the NVMe TLS PSK interchange format (NVMe/TCP Transport §3.6.1.5; libnvme
 * {@code nvme_import_tls_key_versioned} / {@code nvme_export_tls_key_versioned}, nvme-cli {@code gen-tls-key}):
 *
 * <pre>
 *   NVMeTLSkey-1:HH:BASE64:          HH = 00 (use as retained PSK), 01 (transform with SHA-256), 02 (SHA-384)
 *   BASE64 = base64(key || CRC-32(key) little-endian)      key = 32 bytes (00, 01) or 48 bytes (00, 02)
 * </pre>
 *
 * <p>The key bytes stay inside: {@link #toString()} shows only the hash code and the length, and no exception message
 * carries them.
 */
public final class ConfiguredPsk {
    private static final String PREFIX = "NVMeTLSkey-1:";

    private final int hmac;
    private final byte[] key;

    private ConfiguredPsk(int hmac, byte[] key) {
        this.hmac = hmac;
        this.key = key;
    }

    /**
     * A configured PSK from its bytes.
     *
     * @param hmac 0 (no transform), 1 (SHA-256) or 2 (SHA-384)
     * @param key  32 bytes (hmac 0 or 1) or 48 bytes (hmac 0 or 2); copied
     */
    public static ConfiguredPsk of(int hmac, byte[] key) {
        check(hmac, key.length);
        return new ConfiguredPsk(hmac, key.clone());
    }

    /** A new random key for {@code hash}, transformed with that hash (what {@code nvme gen-tls-key --hmac N} makes). */
    public static ConfiguredPsk generate(PskHash hash, SecureRandom random) {
        byte[] key = new byte[hash.length()];
        random.nextBytes(key);
        return new ConfiguredPsk(hash.code(), key);
    }

    /**
     * Parses the interchange format.
     *
     * @throws IllegalArgumentException saying what is wrong (prefix, hash code, length, base64 or CRC), never the key
     */
    public static ConfiguredPsk parse(String interchange) {
        String s = interchange == null ? "" : interchange.strip();
        if (!s.startsWith(PREFIX)) {
            throw new IllegalArgumentException("a TLS PSK starts with " + PREFIX + "HH: (PSK interchange format)");
        }
        if (s.length() < PREFIX.length() + 4 || s.charAt(PREFIX.length() + 2) != ':' || !s.endsWith(":")) {
            throw new IllegalArgumentException("a TLS PSK has the form " + PREFIX + "HH:BASE64:");
        }
        int hmac;
        try {
            hmac = Integer.parseInt(s.substring(PREFIX.length(), PREFIX.length() + 2), 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the TLS PSK's hash field is not two hex digits");
        }
        if (hmac > 2) {
            throw new IllegalArgumentException("the TLS PSK's hash is " + hmac + "; 00, 01 or 02 are defined");
        }
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(s.substring(PREFIX.length() + 3, s.length() - 1));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the TLS PSK's key is not valid base64");
        }
        int len = raw.length - 4;
        try {
            check(hmac, len);
            long crc = crc32(raw, len);
            long stored = (raw[len] & 0xFFL)
                    | (raw[len + 1] & 0xFFL) << 8
                    | (raw[len + 2] & 0xFFL) << 16
                    | (raw[len + 3] & 0xFFL) << 24;
            if (crc != stored) {
                throw new IllegalArgumentException("the TLS PSK's CRC-32 does not match its key (mistyped?)");
            }
            return new ConfiguredPsk(hmac, Arrays.copyOf(raw, len));
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    private static void check(int hmac, int len) {
        boolean ok = switch (hmac) {
            case 0 -> len == 32 || len == 48;
            case 1 -> len == 32;
            case 2 -> len == 48;
            default -> throw new IllegalArgumentException("TLS PSK hash must be 0, 1 or 2, not " + hmac);
        };
        if (!ok) {
            throw new IllegalArgumentException("a TLS PSK with hash " + String.format("%02x", hmac)
                    + " has 32 (00, 01) or 48 (00, 02) " + "key bytes, not " + Math.max(0, len));
        }
    }

    private static long crc32(byte[] b, int len) {
        CRC32 crc = new CRC32();
        crc.update(b, 0, len);
        return crc.getValue();
    }

    /** The interchange form: {@code NVMeTLSkey-1:HH:BASE64:}. */
    public String interchange() {
        byte[] raw = Arrays.copyOf(key, key.length + 4);
        long crc = crc32(key, key.length);
        for (int i = 0; i < 4; i++) {
            raw[key.length + i] = (byte) (crc >>> (8 * i));
        }
        String s =
                PREFIX + String.format("%02x", hmac) + ":" + Base64.getEncoder().encodeToString(raw) + ":";
        Arrays.fill(raw, (byte) 0);
        return s;
    }

    /** 0: the key is used as the retained PSK; 1, 2: it is transformed with that hash into the retained PSK. */
    public int hmac() {
        return hmac;
    }

    /** The hash of the TLS PSK and its cipher suite: the transform's hash, or by key length for hmac 0. */
    public PskHash hash() {
        return hmac == 0 ? PskHash.ofKeyLength(key.length) : PskHash.ofCode(hmac);
    }

    /** A copy of the key bytes. */
    public byte[] key() {
        return key.clone();
    }

    /** The TLS PSK and identity for this host and subsystem (see {@link PskDerivation}). */
    public TlsPsk derive(String hostNqn, String subsysNqn, int identityVersion, PskDerivation derivation) {
        return derivation.tlsPsk(this, hostNqn, subsysNqn, identityVersion);
    }

    byte[] keyRef() {
        return key;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConfiguredPsk p && p.hmac == hmac && java.security.MessageDigest.isEqual(p.key, key);
    }

    @Override
    public int hashCode() {
        return hmac * 31 + key.length;
    }

    @Override
    public String toString() {
        return "ConfiguredPsk[hmac " + String.format("%02d", hmac) + ", " + key.length + " bytes]";
    }
}

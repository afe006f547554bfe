package io.nvmeof.core.auth;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;
import javax.crypto.Mac;

/**
 * A DH-HMAC-CHAP secret in the representation nvme-cli, libnvme, the Linux kernel and SPDK exchange (NVMe Base 2.0
 * §8.13.5.8, docs/security.md): {@code DHHC-1:hh:BASE64:} where {@code hh} is the hash the key is transformed with
 * (00 none, 01 SHA-256, 02 SHA-384, 03 SHA-512) and BASE64 encodes the 32, 48 or 64 key bytes followed by their
 * CRC-32 (the IEEE polynomial, as zlib computes it) in little-endian order.
 *
 * <p>The key is a secret: {@link #toString()} never shows it and no message of this class contains it. Immutable; the
 * key bytes are copied in and out.
 */
public final class DhchapSecret {
    public static final String PREFIX = "DHHC-1:";
    /** The seventeen characters the key transformation appends to the NQN. */
    static final byte[] TRANSFORM_SEED = "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII);

    private final byte[] key;
    /** The transformation hash, or null for none (00). */
    private final DhchapHash hash;

    private DhchapSecret(byte[] key, DhchapHash hash) {
        if (key.length != 32 && key.length != 48 && key.length != 64) {
            throw new IllegalArgumentException("a DH-HMAC-CHAP key has 32, 48 or 64 bytes, not " + key.length);
        }
        this.key = key.clone();
        this.hash = hash;
    }

    /** A secret of these key bytes, transformed with {@code hash} (null: not transformed). */
    public static DhchapSecret of(byte[] key, DhchapHash hash) {
        return new DhchapSecret(key, hash);
    }

    /**
     * Parses {@code DHHC-1:hh:BASE64:} (the trailing colon may be missing, surrounding white space is ignored).
     *
     * @throws IllegalArgumentException naming what is wrong (never the key): the prefix, the hash identifier, the
     *     Base64, the length or the CRC
     */
    public static DhchapSecret parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("no DH-HMAC-CHAP secret");
        }
        String s = text.trim();
        if (!s.startsWith(PREFIX) || s.length() < PREFIX.length() + 3 || s.charAt(PREFIX.length() + 2) != ':') {
            throw new IllegalArgumentException("a DH-HMAC-CHAP secret has the form DHHC-1:hh:BASE64: (hh = 00..03)");
        }
        String hh = s.substring(PREFIX.length(), PREFIX.length() + 2);
        int id;
        try {
            id = Integer.parseInt(hh, 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("DH-HMAC-CHAP secret: hash identifier '" + hh + "' is not 00..03");
        }
        DhchapHash h = DhchapHash.of(id);
        if (id != 0 && h == null) {
            throw new IllegalArgumentException("DH-HMAC-CHAP secret: hash identifier " + hh + " is not 00..03");
        }
        String b64 = s.substring(PREFIX.length() + 3);
        if (b64.endsWith(":")) {
            b64 = b64.substring(0, b64.length() - 1);
        }
        byte[] decoded;
        try {
            decoded = Base64.getDecoder().decode(b64);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("DH-HMAC-CHAP secret: the key is not valid Base64");
        }
        try {
            if (decoded.length != 36 && decoded.length != 52 && decoded.length != 68) {
                throw new IllegalArgumentException("DH-HMAC-CHAP secret: " + decoded.length
                        + " bytes decoded; a key has 32, 48 or 64 bytes plus a 4-byte CRC");
            }
            int n = decoded.length - 4;
            long stored = (decoded[n] & 0xFFL)
                    | (decoded[n + 1] & 0xFFL) << 8
                    | (decoded[n + 2] & 0xFFL) << 16
                    | (decoded[n + 3] & 0xFFL) << 24;
            if (stored != crc32(decoded, n)) {
                throw new IllegalArgumentException("DH-HMAC-CHAP secret: CRC mismatch (mistyped or truncated key)");
            }
            return new DhchapSecret(Arrays.copyOf(decoded, n), h);
        } finally {
            Arrays.fill(decoded, (byte) 0);
        }
    }

    /**
     * A new secret as nvme-cli 2.x's {@code gen-dhchap-key} makes it from a raw secret: with a hash, the key is the
     * transformation of {@code raw} with {@code nqn} (HMAC(raw, NQN || "NVMe-over-Fabrics")), labelled with that
     * hash; without, {@code raw} itself, labelled 00.
     *
     * @param raw  32, 48 or 64 bytes (random, or the {@code --secret} given); with a hash, its length must be the
     *             hash's
     */
    public static DhchapSecret generate(byte[] raw, DhchapHash hmac, String nqn) {
        if (hmac == null) {
            return new DhchapSecret(raw, null);
        }
        if (raw.length != hmac.length()) {
            throw new IllegalArgumentException("with HMAC " + hmac.id() + " (" + hmac.shortName() + ") the key has "
                    + hmac.length() + " bytes, not " + raw.length);
        }
        if (nqn == null || nqn.isEmpty()) {
            throw new IllegalArgumentException("a transformed key needs the host NQN");
        }
        return new DhchapSecret(transform(raw, hmac, nqn), hmac);
    }

    /** The key transformation hash, or null (00: the key is used as it is). */
    public DhchapHash hash() {
        return hash;
    }

    /** Key bytes: 32, 48 or 64. */
    public int length() {
        return key.length;
    }

    /** A copy of the key bytes. */
    public byte[] key() {
        return key.clone();
    }

    /**
     * The transformed key Kh (or Kc) for {@code nqn} (NVMe Base 2.0 §8.13.5.8): the key itself for hash 00, else
     * HMAC(key, NQN || "NVMe-over-Fabrics") with the secret's hash, as long as that hash.
     */
    public byte[] transform(String nqn) {
        return hash == null ? key.clone() : transform(key, hash, nqn);
    }

    private static byte[] transform(byte[] key, DhchapHash h, String nqn) {
        Mac mac = h.mac(key);
        mac.update(nqn.getBytes(StandardCharsets.UTF_8));
        mac.update(TRANSFORM_SEED);
        return mac.doFinal();
    }

    /** The {@code DHHC-1:hh:BASE64:} text. It contains the key: keep it out of logs. */
    public String encode() {
        byte[] b = Arrays.copyOf(key, key.length + 4);
        long crc = crc32(key, key.length);
        for (int i = 0; i < 4; i++) {
            b[key.length + i] = (byte) (crc >>> (8 * i));
        }
        String out = String.format(
                "%s%02x:%s:",
                PREFIX, hash == null ? 0 : hash.id(), Base64.getEncoder().encodeToString(b));
        Arrays.fill(b, (byte) 0);
        return out;
    }

    /** The CRC-32 of the key (what {@code nvme check-dhchap-key} prints); not secret. */
    public long crc() {
        return crc32(key, key.length);
    }

    private static long crc32(byte[] b, int length) {
        CRC32 crc = new CRC32();
        crc.update(b, 0, length);
        return crc.getValue();
    }

    /** Shows the form, never the key. */
    @Override
    public String toString() {
        return String.format("%s%02x:<%d-byte key>:", PREFIX, hash == null ? 0 : hash.id(), key.length);
    }
}

package io.nvmeof.core.auth;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import javax.crypto.KeyAgreement;
import javax.crypto.interfaces.DHPublicKey;
import javax.crypto.spec.DHParameterSpec;
import javax.crypto.spec.DHPublicKeySpec;

/**
 * The Diffie-Hellman groups of DH-HMAC-CHAP (NVMe Base 2.0 §8.13.5.1): the null group (no exchange) and the RFC 7919
 * finite-field groups ffdhe2048 to ffdhe8192, generator 2, through the JDK's "DH" key agreement. The primes are read
 * once from {@code ffdhe-primes.txt} next to this class (RFC 7919 Appendix A). A public value and a shared secret are
 * unsigned big-endian numbers as long as the prime, zero-padded on the left, as the Linux kernel's DH sends and
 * computes them.
 */
public enum DhGroup {
    NULL(0, "null", 0, 0),
    FFDHE2048(1, "ffdhe2048", 2048, 256),
    FFDHE3072(2, "ffdhe3072", 3072, 320),
    FFDHE4096(3, "ffdhe4096", 4096, 384),
    FFDHE6144(4, "ffdhe6144", 6144, 448),
    FFDHE8192(5, "ffdhe8192", 8192, 512);

    private static final BigInteger GENERATOR = BigInteger.TWO;

    private final int id;
    private final String groupName;
    private final int bits;
    /** Private exponent bits: at least RFC 7919 §5.2's minimum (225, 275, 325, 375, 400), rounded up. */
    private final int exponentBits;

    private volatile DHParameterSpec spec;

    DhGroup(int id, String groupName, int bits, int exponentBits) {
        this.id = id;
        this.groupName = groupName;
        this.bits = bits;
        this.exponentBits = exponentBits;
    }

    /** The DH group identifier on the wire: 0 (null) to 5 (ffdhe8192). */
    public int id() {
        return id;
    }

    /** {@code null} or {@code ffdhe2048} ... {@code ffdhe8192}, as Linux and SPDK name it. */
    public String groupName() {
        return groupName;
    }

    /** Bytes of a public value or shared secret: the prime's length; 0 for the null group. */
    public int valueLength() {
        return bits / 8;
    }

    public boolean isNull() {
        return this == NULL;
    }

    /** The group for identifier {@code id}, or null for any other value. */
    public static DhGroup of(int id) {
        for (DhGroup g : values()) {
            if (g.id == id) {
                return g;
            }
        }
        return null;
    }

    /** Parses {@code null}, {@code ffdhe2048} (or {@code 2048}) ...; null if none matches. */
    public static DhGroup byName(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (DhGroup g : values()) {
            if (g.groupName.equals(n) || (g.bits > 0 && n.equals(Integer.toString(g.bits)))) {
                return g;
            }
        }
        return null;
    }

    /** The prime p (RFC 7919 Appendix A). Not for the null group. */
    public BigInteger prime() {
        return parameters().getP();
    }

    /** A fresh key pair (private exponent, public value g^x mod p). Not for the null group. */
    public KeyPair generateKeyPair(SecureRandom random) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("DH");
            g.initialize(parameters(), random);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("DH key generation failed for " + groupName, e);
        }
    }

    /** The public value of {@code pair}, {@link #valueLength()} bytes big-endian. */
    public byte[] publicValue(KeyPair pair) {
        return fixedLength(((DHPublicKey) pair.getPublic()).getY());
    }

    /**
     * The shared secret (g^xy mod p, {@link #valueLength()} bytes) of our {@code pair} and the peer's public value.
     *
     * @throws GeneralSecurityException if the peer's value has the wrong length or is not a valid public value (the
     *     JDK refuses 0, 1, p-1 and values outside the group)
     */
    public byte[] sharedSecret(KeyPair pair, byte[] peerPublic) throws GeneralSecurityException {
        if (peerPublic.length != valueLength()) {
            throw new GeneralSecurityException(
                    "a " + groupName + " public value has " + valueLength() + " bytes, not " + peerPublic.length);
        }
        DHParameterSpec p = parameters();
        KeyFactory kf = KeyFactory.getInstance("DH");
        DHPublicKey peer =
                (DHPublicKey) kf.generatePublic(new DHPublicKeySpec(new BigInteger(1, peerPublic), p.getP(), p.getG()));
        KeyAgreement ka = KeyAgreement.getInstance("DH");
        ka.init(pair.getPrivate());
        ka.doPhase(peer, true);
        return fixedLength(new BigInteger(1, ka.generateSecret()));
    }

    private byte[] fixedLength(BigInteger v) {
        byte[] raw = v.toByteArray(); // big-endian, possibly with a sign byte or shorter than the prime
        byte[] out = new byte[valueLength()];
        int n = Math.min(raw.length, out.length);
        System.arraycopy(raw, raw.length - n, out, out.length - n, n);
        return out;
    }

    private DHParameterSpec parameters() {
        if (this == NULL) {
            throw new IllegalStateException("the null DH group has no parameters");
        }
        DHParameterSpec s = spec;
        if (s == null) {
            BigInteger p = Primes.TABLE.get(groupName);
            if (p == null || p.bitLength() != bits) {
                throw new IllegalStateException("ffdhe-primes.txt lacks a " + bits + "-bit " + groupName);
            }
            s = new DHParameterSpec(p, GENERATOR, exponentBits);
            spec = s;
        }
        return s;
    }

    /** The primes, read once from the resource. */
    private static final class Primes {
        static final Map<String, BigInteger> TABLE = load();

        private static Map<String, BigInteger> load() {
            Map<String, BigInteger> m = new HashMap<>();
            try (InputStream in = DhGroup.class.getResourceAsStream("ffdhe-primes.txt")) {
                if (in == null) {
                    throw new IllegalStateException("ffdhe-primes.txt is missing from the class path");
                }
                for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                    line = line.trim();
                    int eq = line.indexOf('=');
                    if (line.isEmpty() || line.startsWith("#") || eq < 0) {
                        continue;
                    }
                    m.put(line.substring(0, eq), new BigInteger(line.substring(eq + 1), 16));
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot read ffdhe-primes.txt", e);
            }
            return m;
        }
    }
}

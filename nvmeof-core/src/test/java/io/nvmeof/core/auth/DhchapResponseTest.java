package io.nvmeof.core.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.spec.DHPrivateKeySpec;
import javax.crypto.spec.DHPublicKeySpec;
import org.junit.jupiter.api.Test;

/**
 * R1, R2, the augmented challenge and the ffdhe exchange, against values computed independently (Python's hmac,
 * hashlib and pow on the same inputs, with the layout of the kernel's nvme_auth_dhchap_setup_host_response,
 * nvmet_auth_ctrl_hash and nvme_auth_augmented_challenge), recorded here as facts.
 */
class DhchapResponseTest {
    static final String HOST = DhchapSecretTest.HOST;
    static final String SUB = "nqn.2024-01.io.nvmeof:disk1";
    private static final HexFormat HEX = HexFormat.of();

    private static byte[] range(int from, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (from + i);
        }
        return b;
    }

    private static byte[] c1() {
        byte[] c = new byte[32];
        for (int i = 0; i < 32; i++) {
            c[i] = (byte) (0xA0 + i % 16);
        }
        return c;
    }

    @Test
    void hostResponseNullGroup() {
        byte[] kh = DhchapSecret.of(range(0, 32), DhchapHash.SHA_256).transform(HOST);
        byte[] r1 = DhchapResponse.host(DhchapHash.SHA_256, kh, c1(), 0x12345678, 0x0102, HOST, SUB);
        assertArrayEquals(HEX.parseHex("9da227cfc36a2c97982d4021b55e8f329b3e1b03fd76af92de34cf878224b84e"), r1);
    }

    @Test
    void controllerResponseSha384UntransformedKey() {
        byte[] kc = DhchapSecret.of(range(100, 48), null).transform(SUB);
        byte[] c2 = new byte[48];
        Arrays.fill(c2, (byte) 0x55);
        byte[] r2 = DhchapResponse.controller(DhchapHash.SHA_384, kc, c2, 0x9abcdef0, 0x0102, SUB, HOST);
        assertArrayEquals(
                HEX.parseHex("872a6eaa9b674c0867b2d4acf9b83c52d0cd57c565ff5c113370cb845faf1c9d"
                        + "51d2b41ae972dadeb57811b2f07a3c7e"),
                r2);
    }

    @Test
    void augmentedChallengeAndResponse() {
        byte[] session = new byte[256];
        Arrays.fill(session, (byte) 7);
        byte[] aug = DhchapResponse.augmentedChallenge(DhchapHash.SHA_256, session, c1());
        assertArrayEquals(HEX.parseHex("fda4cb40fa1ce1b215e1438764541f46a3a0a2205bc3dc27f584b881795a4178"), aug);
        byte[] kh = DhchapSecret.of(range(0, 32), DhchapHash.SHA_256).transform(HOST);
        assertArrayEquals(
                HEX.parseHex("e602527d2d2c81c831618da9f58682aa5c64407c5af9645c556ea285d074115e"),
                DhchapResponse.host(DhchapHash.SHA_256, kh, aug, 0x12345678, 0x0102, HOST, SUB));
    }

    @Test
    void ffdhe2048KnownAnswer() throws Exception {
        DhGroup g = DhGroup.FFDHE2048;
        BigInteger p = g.prime();
        BigInteger x = new BigInteger("11".repeat(32), 16);
        BigInteger y = new BigInteger("22".repeat(32), 16);
        KeyFactory kf = KeyFactory.getInstance("DH");
        BigInteger gx = BigInteger.TWO.modPow(x, p);
        KeyPair ours = new KeyPair(
                kf.generatePublic(new DHPublicKeySpec(gx, p, BigInteger.TWO)),
                kf.generatePrivate(new DHPrivateKeySpec(x, p, BigInteger.TWO)));
        byte[] pub = g.publicValue(ours);
        assertEquals(256, pub.length);
        assertArrayEquals(
                HEX.parseHex("fa569bcaabef1d8f1f54479063612a15752ef5594fc9c4ff99cc74e552549a52"),
                MessageDigest.getInstance("SHA-256").digest(pub));
        byte[] peer = new byte[256];
        byte[] gy = BigInteger.TWO.modPow(y, p).toByteArray();
        System.arraycopy(
                gy, Math.max(0, gy.length - 256), peer, Math.max(0, 256 - gy.length), Math.min(256, gy.length));
        byte[] secret = g.sharedSecret(ours, peer);
        assertArrayEquals(
                HEX.parseHex("5a4b3ee2e31ff42c6cb608d5704f824ecf16e46605ccff5acd511373f59a3411"),
                MessageDigest.getInstance("SHA-256").digest(secret));
    }

    @Test
    void everyGroupAgreesAndRefusesBadPublicValues() throws Exception {
        SecureRandom r = new SecureRandom();
        for (DhGroup g : DhGroup.values()) {
            if (g.isNull()) {
                continue;
            }
            BigInteger p = g.prime();
            assertEquals(g.valueLength() * 8, p.bitLength(), g.groupName());
            // RFC 7919 primes have their top and bottom 64 bits set.
            assertEquals(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE), p.shiftRight(p.bitLength() - 64));
            assertEquals(
                    BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE),
                    p.and(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE)));
            if (g == DhGroup.FFDHE2048) {
                assertTrue(p.isProbablePrime(40) && p.shiftRight(1).isProbablePrime(40), "a safe prime");
            }
            if (g == DhGroup.FFDHE8192) {
                continue; // slow; FFDHE8192 is exercised end to end once
            }
            KeyPair a = g.generateKeyPair(r);
            KeyPair b = g.generateKeyPair(r);
            byte[] ab = g.sharedSecret(a, g.publicValue(b));
            assertArrayEquals(ab, g.sharedSecret(b, g.publicValue(a)), g.groupName());
            assertEquals(g.valueLength(), ab.length);
            byte[] one = new byte[g.valueLength()];
            one[one.length - 1] = 1;
            assertThrows(java.security.GeneralSecurityException.class, () -> g.sharedSecret(a, one));
            assertThrows(java.security.GeneralSecurityException.class, () -> g.sharedSecret(a, new byte[10]));
        }
    }
}

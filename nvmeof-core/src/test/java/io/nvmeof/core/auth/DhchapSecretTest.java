package io.nvmeof.core.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * The {@code DHHC-1} secret format, its CRC and the key transformation, against recorded facts: the values were
 * computed independently (Python's hmac, hashlib, zlib and base64, following the kernel's nvme_auth_extract_key and
 * nvme_auth_transform_key and nvme-cli 2.x's gen-dhchap-key), and the generated keys and the CRC are exactly what
 * nvme-cli 2.13 prints in the Linux 6.12 peer VM ({@code nvme gen-dhchap-key --secret 000102..1f --hmac 1 --nqn
 * HOST}, the 48- and 64-byte ranges with --hmac 2 and 3, --hmac 0; {@code nvme check-dhchap-key} of the 00 key:
 * "Key is valid (HMAC 0, length 32, CRC 91267e8a)"), which LinuxDhchapIT checks on every run.
 */
class DhchapSecretTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

    private static byte[] range(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    @Test
    void parsesAndEncodesTheUntransformedForm() {
        String text = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
        DhchapSecret s = DhchapSecret.parse(text);
        assertNull(s.hash());
        assertArrayEquals(range(32), s.key());
        assertEquals(0x91267e8aL, s.crc());
        assertEquals(text, s.encode());
        assertEquals(text, DhchapSecret.of(range(32), null).encode());
        assertArrayEquals(range(32), s.transform(HOST), "hash 00: no transformation");
        // The trailing colon is optional, surrounding white space ignored (a key read from a file).
        assertArrayEquals(
                range(32),
                DhchapSecret.parse("  " + text.substring(0, text.length() - 1) + "\n")
                        .key());
    }

    @Test
    void generatesAsNvmeCli2WithEachHmac() {
        assertEquals(
                "DHHC-1:01:bOHk6jHoMxpP5YJr/eF6XNOGuPAzh0iRniebpsVb9ydqVuR5:",
                DhchapSecret.generate(range(32), DhchapHash.SHA_256, HOST).encode());
        assertEquals(
                "DHHC-1:02:JzgkyQ7IBRNgZgoVJQTRqDZ62Hnj5/kZ+vrrqjiE4TzoZZv5ycVS5cOLCiZ1bQfVVxJqow==:",
                DhchapSecret.generate(range(48), DhchapHash.SHA_384, HOST).encode());
        assertEquals(
                "DHHC-1:03:D+Ucidhr9Oh00yaKCrMLB2s2c/hsojlyxwni12p59UZ78f4YQ6UMpEcQG4yaPnLJFkljK+euytryvvQe2rYShiu0Vv0=:",
                DhchapSecret.generate(range(64), DhchapHash.SHA_512, HOST).encode());
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.generate(range(32), DhchapHash.SHA_512, HOST));
    }

    @Test
    void transformsWithTheSecretsHash() {
        DhchapSecret s = DhchapSecret.of(range(32), DhchapHash.SHA_256);
        assertArrayEquals(
                HexFormat.of().parseHex("6ce1e4ea31e8331a4fe5826bfde17a5cd386b8f0338748919e279ba6c55bf727"),
                s.transform(HOST));
    }

    @Test
    void refusesBadSecretsWithoutShowingThem() {
        String good = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
        String badCrc = good.replace("KfiaR", "KfiaS");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse(badCrc));
        assertTrue(e.getMessage().contains("CRC"), e.getMessage());
        assertFalse(e.getMessage().contains("AAECAwQF"), "the key must not appear in the message");
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse(good.replace(":00:", ":04:")));
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse(good.replace("DHHC-1", "DHHC-2")));
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse("DHHC-1:00:AAEC:"));
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse("DHHC-1:00:!!!!:"));
        assertFalse(DhchapSecret.parse(good).toString().contains("AAECAwQF"));
    }
}

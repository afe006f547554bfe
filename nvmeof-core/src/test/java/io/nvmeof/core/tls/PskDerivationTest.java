package io.nvmeof.core.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * Known answers for the PSK interchange format, the retained-PSK and digest derivations and the PSK identities. Two
 * sources, recorded as facts: libnvme's own test vectors ({@code test/psk.c}, both the RFC 8446 and the "compat"
 * HkdfLabel encodings), and what nvme-cli 2.13 / libnvme 1.13 in the peer VM's Debian 13 guest printed and put into the
 * kernel's {@code .nvme} keyring for fixed secrets ({@code nvme gen-tls-key --secret ... --hmac N --identity I --insert},
 * the key descriptions from {@code /proc/keys} and the TLS PSKs read back with {@code keyctl pipe}).
 */
class PskDerivationTest {
    private static final HexFormat HEX = HexFormat.of();
    // libnvme test/psk.c
    private static final byte[] LIBNVME_32 =
            HEX.parseHex("5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03");
    private static final byte[] LIBNVME_48 = HEX.parseHex(
            "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03" + "ffc344bcf442e2dd6d8bc4870b5d5b03");
    private static final String LIBNVME_HOST = "nqn.psk-test-host";
    private static final String LIBNVME_SUBSYS = "nqn.psk-test-subsys";
    // the peer VM (nvme-cli 2.13, libnvme 1.13)
    private static final String VM_HOST = "nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6";
    private static final String VM_SUBSYS = "nqn.2024-01.io.nvmeof:tls-kat";
    private static final byte[] VM_32 =
            HEX.parseHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    private static final byte[] VM_48 = HEX.parseHex(
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" + "202122232425262728292a2b2c2d2e2f");

    @Test
    void interchangeFormatAsLibnvme() {
        assertEquals(
                "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
                ConfiguredPsk.of(1, LIBNVME_32).interchange());
        assertEquals(
                "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:",
                ConfiguredPsk.of(0, LIBNVME_32).interchange());
        assertEquals(
                "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
                ConfiguredPsk.of(2, LIBNVME_48).interchange());
        ConfiguredPsk parsed = ConfiguredPsk.parse(
                "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:");
        assertEquals(2, parsed.hmac());
        assertEquals(PskHash.SHA384, parsed.hash());
        assertArrayEquals(LIBNVME_48, parsed.key());
    }

    @Test
    void interchangeFormatAsNvmeCliInTheVm() {
        assertEquals(
                "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
                ConfiguredPsk.of(1, VM_32).interchange());
        assertEquals(
                "NVMeTLSkey-1:02:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vcSEgBQ==:",
                ConfiguredPsk.of(2, VM_48).interchange());
    }

    @Test
    void badInterchangeStringsSayWhatIsWrongWithoutTheKey() {
        String good = "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
        String badCrc = "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ConfiguredPsk.parse(badCrc));
        assertTrue(e.getMessage().contains("CRC"), e.getMessage());
        assertFalse(e.getMessage().contains("AAECAw"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ConfiguredPsk.parse(good.replace(":01:", ":02:")));
        assertThrows(IllegalArgumentException.class, () -> ConfiguredPsk.parse(good.replace(":01:", ":03:")));
        assertThrows(IllegalArgumentException.class, () -> ConfiguredPsk.parse(good.replace("NVMeTLSkey", "DHHC")));
        assertThrows(IllegalArgumentException.class, () -> ConfiguredPsk.parse(good.substring(0, good.length() - 1)));
        assertThrows(IllegalArgumentException.class, () -> ConfiguredPsk.parse("NVMeTLSkey-1:01:!!!!:"));
        assertEquals(
                "ConfiguredPsk[hmac 01, 32 bytes]", ConfiguredPsk.parse(good).toString());
    }

    @Test
    void version1IdentitiesAsLibnvmeRfc8446() {
        assertEquals(
                "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU=",
                identity(PskDerivation.RFC8446, ConfiguredPsk.of(1, LIBNVME_32), LIBNVME_HOST, LIBNVME_SUBSYS));
        assertEquals(
                "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys "
                        + "QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+XUD8f9td1VeH5h53yz2wKJG1a",
                identity(PskDerivation.RFC8446, ConfiguredPsk.of(2, LIBNVME_48), LIBNVME_HOST, LIBNVME_SUBSYS));
    }

    @Test
    void version1IdentitiesAsLibnvmeCompat() {
        assertEquals(
                "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys 66GuqV08TsAGII39teWUfwQwizjv06Jy8jOcX3NAAzM=",
                identity(PskDerivation.LIBNVME_COMPAT, ConfiguredPsk.of(1, LIBNVME_32), LIBNVME_HOST, LIBNVME_SUBSYS));
        assertEquals(
                "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys "
                        + "RsKmYJ3nAn1ApjjMloJFbAkLPivONDAX/xW327YBUsn2eGShXSjCZvBaOxscLqmz",
                identity(PskDerivation.LIBNVME_COMPAT, ConfiguredPsk.of(2, LIBNVME_48), LIBNVME_HOST, LIBNVME_SUBSYS));
    }

    @Test
    void identitiesAsNvmeCli213PutThemIntoTheKernelKeyring() {
        ConfiguredPsk k256 = ConfiguredPsk.of(1, VM_32);
        ConfiguredPsk k384 = ConfiguredPsk.of(2, VM_48);
        assertEquals("NVMe0R01 " + VM_HOST + " " + VM_SUBSYS, identity(PskDerivation.LIBNVME_COMPAT, k256, 0));
        assertEquals("NVMe0R02 " + VM_HOST + " " + VM_SUBSYS, identity(PskDerivation.LIBNVME_COMPAT, k384, 0));
        assertEquals(
                "NVMe1R01 " + VM_HOST + " " + VM_SUBSYS + " fJnx5l6+8fP+FuLMi7FvhJUAda5UiOib8FDO2aCKLxw=",
                identity(PskDerivation.LIBNVME_COMPAT, k256, 1));
        assertEquals(
                "NVMe1R02 " + VM_HOST + " " + VM_SUBSYS
                        + " 3g54M7Ig08SAPStfFC8D9QPGGK6mbxAEbcV3qbm6yx/HlqH+vFr0W5e8kXPOBzSt",
                identity(PskDerivation.LIBNVME_COMPAT, k384, 1));
    }

    /**
     * The TLS PSKs themselves, as nvme-cli 2.13 put them into the kernel's {@code .nvme} keyring (read back in the
     * guest with {@code keyctl pipe} after linking the keyring into a session keyring).
     */
    @Test
    void tlsPsksAsNvmeCli213PutThemIntoTheKernelKeyring() {
        ConfiguredPsk k256 = ConfiguredPsk.of(1, VM_32);
        ConfiguredPsk k384 = ConfiguredPsk.of(2, VM_48);
        assertEquals(
                "1553de5af9f0b93778262f271926809bfd2fb55419ce4d6f162c916a4ec79700",
                HEX.formatHex(k256.derive(VM_HOST, VM_SUBSYS, 0, PskDerivation.LIBNVME_COMPAT)
                        .key()));
        assertEquals(
                "c5c0c016aa72fcb34e981bfbf3634505a0ca6d6ed4aa0c6849d7eb6191edb449",
                HEX.formatHex(k256.derive(VM_HOST, VM_SUBSYS, 1, PskDerivation.LIBNVME_COMPAT)
                        .key()));
        assertEquals(
                "6b04a33206e582317dd4bbcaff7862dded0ec6f161ede5d0e9bc181f1a4bf0a8b87d18c3f3a4981e54227fc8be514087",
                HEX.formatHex(k384.derive(VM_HOST, VM_SUBSYS, 0, PskDerivation.LIBNVME_COMPAT)
                        .key()));
        assertEquals(
                "6c292db5bf7b54219b682c368bfff24f212b72fee63ae4c61d0289e0629c99992f10836a2efd602b43363311bfc13a91",
                HEX.formatHex(k384.derive(VM_HOST, VM_SUBSYS, 1, PskDerivation.LIBNVME_COMPAT)
                        .key()));
    }

    @Test
    void theDigestTellsTheTwoDerivationsApart() {
        ConfiguredPsk key = ConfiguredPsk.of(1, VM_32);
        for (PskDerivation d : PskDerivation.values()) {
            PskIdentity id = key.derive(VM_HOST, VM_SUBSYS, 1, d).identity();
            assertEquals(d, PskDerivation.matchingDigest(key, PskIdentity.parse(id.wire())));
        }
        ConfiguredPsk other = ConfiguredPsk.of(1, LIBNVME_32);
        assertNull(PskDerivation.matchingDigest(
                other, key.derive(VM_HOST, VM_SUBSYS, 1, PskDerivation.RFC8446).identity()));
    }

    @Test
    void tlsPskDependsOnEveryInput() {
        ConfiguredPsk key = ConfiguredPsk.of(1, VM_32);
        byte[] a = key.derive(VM_HOST, VM_SUBSYS, 0, PskDerivation.RFC8446).key();
        assertEquals(32, a.length);
        assertArrayEquals(
                a, key.derive(VM_HOST, VM_SUBSYS, 0, PskDerivation.RFC8446).key());
        assertNotEquals(
                HEX.formatHex(a),
                HEX.formatHex(key.derive(VM_HOST, VM_SUBSYS, 0, PskDerivation.LIBNVME_COMPAT)
                        .key()));
        assertNotEquals(
                HEX.formatHex(a),
                HEX.formatHex(
                        key.derive(VM_HOST, VM_SUBSYS, 1, PskDerivation.RFC8446).key()));
        assertNotEquals(
                HEX.formatHex(a),
                HEX.formatHex(key.derive(VM_HOST, VM_SUBSYS + "x", 0, PskDerivation.RFC8446)
                        .key()));
        assertEquals(
                48,
                ConfiguredPsk.of(2, VM_48)
                        .derive(VM_HOST, VM_SUBSYS, 0, PskDerivation.RFC8446)
                        .key()
                        .length);
        // hmac 00: the configured key is the retained key; the hash comes from the length
        assertEquals(PskHash.SHA384, ConfiguredPsk.of(0, VM_48).hash());
        assertArrayEquals(VM_32, PskDerivation.RFC8446.retainedPsk(ConfiguredPsk.of(0, VM_32), VM_HOST));
    }

    @Test
    void hkdfAsRfc5869TestCase3() {
        // RFC 5869 A.3: SHA-256, IKM 22 x 0x0b, no salt, no info, L 42
        byte[] prk = PskDerivation.extract(PskHash.SHA256, HEX.parseHex("0b".repeat(22)));
        assertEquals("19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04", HEX.formatHex(prk));
        assertEquals(
                "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
                HEX.formatHex(PskDerivation.expand(PskHash.SHA256, prk, new byte[0], 42)));
    }

    @Test
    void identityParsing() {
        PskIdentity v0 = PskIdentity.parse("NVMe0R02 nqn.h nqn.s");
        assertEquals(0, v0.version());
        assertEquals(PskHash.SHA384, v0.hash());
        assertEquals("nqn.h", v0.hostNqn());
        assertEquals("nqn.s", v0.subsysNqn());
        PskIdentity v1 = PskIdentity.parse("NVMe1R01 nqn.h nqn.s abc=");
        assertEquals("abc=", v1.digest());
        assertEquals("NVMe1R01 nqn.h nqn.s abc=", v1.wire());
        assertTrue(PskIdentity.parse("NVMe0G01 nqn.h nqn.s").generated());
        assertThrows(IllegalArgumentException.class, () -> PskIdentity.parse("Client_identity"));
        assertThrows(IllegalArgumentException.class, () -> PskIdentity.parse("NVMe1R01 nqn.h nqn.s"));
        assertThrows(IllegalArgumentException.class, () -> PskIdentity.parse("NVMe0R03 nqn.h nqn.s"));
        assertThrows(IllegalArgumentException.class, () -> PskIdentity.parse("NVMe2R01 nqn.h nqn.s d"));
    }

    private static String identity(PskDerivation d, ConfiguredPsk key, String host, String subsys) {
        return key.derive(host, subsys, 1, d).identity().wire();
    }

    private static String identity(PskDerivation d, ConfiguredPsk key, int version) {
        return key.derive(VM_HOST, VM_SUBSYS, version, d).identity().wire();
    }
}

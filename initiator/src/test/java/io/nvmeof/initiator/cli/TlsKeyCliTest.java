package io.nvmeof.initiator.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@code gen-tls-key} and {@code check-tls-key} print what nvme-cli 2.13 printed in the peer VM for the same secret
 * and NQNs (the facts of {@code PskDerivationTest}).
 */
class TlsKeyCliTest {
    static final String SECRET = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    static final String KEY = "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6";
    static final String SUBSYS = "nqn.2024-01.io.nvmeof:tls-kat";

    @Test
    void genTlsKeyAsNvmeCli() {
        NvmeofCliTest.Result r = NvmeofCliTest.run("gen-tls-key", "--secret", SECRET, "--hmac", "1");
        assertEquals(0, r.code(), r.err());
        assertEquals(KEY, r.out().strip());
        NvmeofCliTest.Result random = NvmeofCliTest.run("gen-tls-key", "-m", "2");
        assertEquals(0, random.code(), random.err());
        assertTrue(random.out().strip().matches("NVMeTLSkey-1:02:[A-Za-z0-9+/=]{72}:"), random.out());
        assertEquals(
                2,
                NvmeofCliTest.run("gen-tls-key", "--secret", "00ff", "--hmac", "1")
                        .code());
        assertEquals(2, NvmeofCliTest.run("gen-tls-key", "--hmac", "3").code());
    }

    @Test
    void checkTlsKeyPrintsTheIdentitiesNvmeCliPrinted() {
        NvmeofCliTest.Result v0 =
                NvmeofCliTest.run("check-tls-key", "--keydata", KEY, "--hostnqn", HOST, "--subsysnqn", SUBSYS);
        assertEquals("NVMe0R01 " + HOST + " " + SUBSYS, v0.out().strip());
        NvmeofCliTest.Result v1 =
                NvmeofCliTest.run("check-tls-key", "-d", KEY, "-n", HOST, "-c", SUBSYS, "-I", "1", "--compat");
        assertEquals(
                "NVMe1R01 " + HOST + " " + SUBSYS + " fJnx5l6+8fP+FuLMi7FvhJUAda5UiOib8FDO2aCKLxw=",
                v1.out().strip());
        NvmeofCliTest.Result valid = NvmeofCliTest.run("check-tls-key", "-d", KEY);
        assertEquals(0, valid.code(), valid.err());
        String bad = KEY.replace("KfiaR", "KfiaS");
        NvmeofCliTest.Result crc = NvmeofCliTest.run("check-tls-key", "-d", bad);
        assertEquals(2, crc.code());
        assertTrue(crc.err().contains("CRC"), crc.err());
        assertFalse(crc.err().contains("AAECAwQF"), crc.err());
    }
}

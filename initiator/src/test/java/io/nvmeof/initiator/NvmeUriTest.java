package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Nqn;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NvmeUriTest {
    @Test
    void parsesEveryPart() {
        NvmeUri u = NvmeUri.parse("nvme+tcp://192.0.2.10:4421/nqn.2024-01.io.nvmeof:disk1?nsid=3&queues=4&depth=64"
                + "&digest=header,data&hostnqn=nqn.2014-08.org.nvmexpress:uuid:0f0e0d0c-0b0a-0908-0706-050403020100"
                + "&kato=10s&timeout=1500ms");
        assertEquals("tcp", u.transport());
        assertEquals("192.0.2.10", u.host());
        assertEquals(4421, u.port());
        assertEquals("nqn.2024-01.io.nvmeof:disk1", u.subsystemNqn());
        assertFalse(u.isDiscovery());
        assertEquals(3, u.nsid());
        assertEquals(4, u.queues());
        assertEquals(64, u.depth());
        assertTrue(u.headerDigest());
        assertTrue(u.dataDigest());
        assertEquals("nqn.2014-08.org.nvmexpress:uuid:0f0e0d0c-0b0a-0908-0706-050403020100", u.hostNqn());
        assertEquals(10_000, u.katoMillis());
        assertEquals(Duration.ofMillis(1500), u.timeout());
        assertEquals(u, NvmeUri.parse(u.toString()), "toString parses back");
    }

    @Test
    void defaults() {
        NvmeUri u = NvmeUri.parse("nvme+tcp://host.example/nqn.2024-01.io.nvmeof:disk1");
        assertEquals(4420, u.port());
        assertEquals(0, u.nsid());
        assertEquals(128, u.depth());
        assertFalse(u.headerDigest() || u.dataDigest());
        assertNull(u.hostNqn());
        assertEquals(5_000, u.katoMillis()); // Linux NVME_DEFAULT_KATO
        assertEquals(Duration.ofSeconds(30), u.timeout());
        assertTrue(u.queues() >= 1 && u.queues() <= 4);
    }

    @Test
    void reconnectOptionsHaveTheLinuxNamesUnitsAndDefaults() {
        NvmeUri d = NvmeUri.parse("nvme+tcp://h/nqn.a:b");
        assertEquals(Duration.ofSeconds(10), d.reconnectDelay()); // NVMF_DEF_RECONNECT_DELAY
        assertEquals(Duration.ofSeconds(600), d.ctrlLossTmo()); // NVMF_DEF_CTRL_LOSS_TMO
        assertTrue(d.fastIoFailTmo().isNegative()); // NVMF_DEF_FAIL_FAST_TMO -1: off
        NvmeUri u = NvmeUri.parse(
                "nvme+tcp://h/nqn.a:b?reconnect_delay=1&ctrl_loss_tmo=-1&fast_io_fail_tmo=5&keep_alive_tmo=7");
        assertEquals(Duration.ofSeconds(1), u.reconnectDelay()); // plain numbers are seconds, as in Linux
        assertEquals(NvmeUri.NEVER, u.ctrlLossTmo());
        assertEquals(Duration.ofSeconds(5), u.fastIoFailTmo());
        assertEquals(7_000, u.katoMillis());
        assertEquals(u, NvmeUri.parse(u.toString()));
        NvmeUri ms = NvmeUri.parse("nvme+tcp://h/nqn.a:b?reconnect_delay=250ms&ctrl_loss_tmo=0");
        assertEquals(Duration.ofMillis(250), ms.reconnectDelay());
        assertEquals(Duration.ZERO, ms.ctrlLossTmo());
        assertEquals(ms, NvmeUri.parse(ms.toString()));
    }

    @Test
    void ipv6InBrackets() {
        NvmeUri u = NvmeUri.parse("nvme+tcp://[fe80::1]:4420/nqn.2024-01.io.nvmeof:x");
        assertEquals("fe80::1", u.host());
        assertEquals(4420, u.port());
        assertEquals(
                "fe80::1",
                NvmeUri.parse("nvme+tcp://[fe80::1]/nqn.2024-01.io.nvmeof:x").host());
        assertTrue(u.toString().startsWith("nvme+tcp://[fe80::1]:4420/"));
    }

    @Test
    void noNqnOrTheDiscoveryNqnIsDiscoveryWithKato0() {
        NvmeUri u = NvmeUri.parse("nvme+tcp://192.0.2.10:8009");
        assertTrue(u.isDiscovery());
        assertNull(u.subsystemNqn());
        assertEquals(Nqn.DISCOVERY, u.connectNqn());
        assertEquals(0, u.katoMillis());
        assertEquals(4420, NvmeUri.parse("nvme+tcp://192.0.2.10/").port(), "4420 unless given, also for discovery");
        assertTrue(NvmeUri.parse("nvme+tcp://192.0.2.10/" + Nqn.DISCOVERY).isDiscovery());
    }

    @Test
    void rdmaParses() {
        assertEquals(
                "rdma",
                NvmeUri.parse("nvme+rdma://10.0.0.1/nqn.2024-01.io.nvmeof:x").transport());
    }

    @Test
    void digestVariants() {
        NvmeUri h = NvmeUri.parse("nvme+tcp://h/nqn.a:b?digest=header");
        assertTrue(h.headerDigest());
        assertFalse(h.dataDigest());
        NvmeUri n = NvmeUri.parse("nvme+tcp://h/nqn.a:b?digest=none");
        assertFalse(n.headerDigest() || n.dataDigest());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "''                                              | no NVMe URI",
                "192.0.2.10:4420                                 | not an NVMe URI",
                "http://h/nqn.a:b                                | unknown scheme 'http'",
                "nvme+://h/nqn.a:b                               | unknown scheme",
                "nvme+tcp:///nqn.a:b                             | no host",
                "nvme+tcp://h:0/nqn.a:b                          | bad port '0'",
                "nvme+tcp://h:99999/nqn.a:b                      | bad port '99999'",
                "nvme+tcp://h:x/nqn.a:b                          | bad port 'x'",
                "nvme+tcp://fe80::1/nqn.a:b                      | IPv6 address goes in brackets",
                "nvme+tcp://[fe80::1/nqn.a:b                     | unterminated IPv6",
                "nvme+tcp://[fe80::1]x/nqn.a:b                   | unexpected 'x'",
                "nvme+tcp://h/disk1                              | must start with 'nqn.'",
                "nvme+tcp://h/nqn.a:b?nsid=0                     | nsid must be 1..",
                "nvme+tcp://h/nqn.a:b?nsid=abc                   | nsid must be a number",
                "nvme+tcp://h/nqn.a:b?queues=0                   | queues must be 1..128",
                "nvme+tcp://h/nqn.a:b?depth=1                    | depth must be 2..1024",
                "nvme+tcp://h/nqn.a:b?digest=crc                 | digest must be header, data",
                "nvme+tcp://h/nqn.a:b?kato=soon                  | kato must be a duration",
                "nvme+tcp://h/nqn.a:b?timeout=0                  | timeout must be positive",
                "nvme+tcp://h/nqn.a:b?hostnqn=me                 | host NQN must start with 'nqn.'",
                "nvme+tcp://h/nqn.a:b?colour=blue                | unknown option 'colour'",
                "nvme+tcp://h/nqn.a:b?nsid                       | has no value",
                "nvme+tcp://h/nqn.a:b?reconnect_delay=0          | reconnect_delay must be positive",
                "nvme+tcp://h/nqn.a:b?reconnect_delay=-1         | reconnect_delay must be a number of seconds",
                "nvme+tcp://h/nqn.a:b?ctrl_loss_tmo=-2           | ctrl_loss_tmo must be a number of seconds (-1",
                "nvme+tcp://h/nqn.a:b?fast_io_fail_tmo=soon      | fast_io_fail_tmo must be a number of seconds",
                "nvme+tcp://h/nqn.a:b?keep_alive_tmo=-1          | keep_alive_tmo must be a number of seconds",
            })
    void badPartsAreNamed(String uri, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(uri));
        assertTrue(e.getMessage().contains(message), () -> "'" + e.getMessage() + "' should contain '" + message + "'");
    }

    @Test
    void forEntryBuildsTheSubsystemUri() {
        NvmeUri d = NvmeUri.parse("nvme+tcp://192.0.2.10:8009?digest=header");
        DiscoveryEntry e = new DiscoveryEntry(
                3, 1, 2, 0, 1, 0xFFFF, 32, 0, "4420", "nqn.2024-01.io.nvmeof:disk1", "192.0.2.11", 0, 0);
        NvmeUri s = d.forEntry(e);
        assertEquals("192.0.2.11", s.host());
        assertEquals(4420, s.port());
        assertEquals("nqn.2024-01.io.nvmeof:disk1", s.subsystemNqn());
        assertTrue(s.headerDigest());
        assertEquals(5_000, s.katoMillis(), "an I/O controller gets a keep-alive");
    }

    @Test
    void disableSqflowParsesPrintsAndFollowsTheDiscoveryEntry() {
        NvmeUri u = NvmeUri.parse("nvme+tcp://192.0.2.10:4420/nqn.2024-01.io.nvmeof:disk1?disable_sqflow=1");
        assertTrue(u.disableSqflow());
        assertTrue(u.toString().contains("disable_sqflow=1"), u.toString());
        assertEquals(u, NvmeUri.parse(u.toString()), "round trip");
        assertTrue(u.withSubsystem("nqn.2024-01.io.nvmeof:disk2").disableSqflow(), "copies keep it");
        assertFalse(NvmeUri.parse("nvme+tcp://192.0.2.10:4420/nqn.2024-01.io.nvmeof:disk1")
                .disableSqflow());
        assertFalse(NvmeUri.parse("nvme+tcp://192.0.2.10/nqn.2024-01.io.nvmeof:d?disable_sqflow=no")
                .disableSqflow());
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> NvmeUri.parse("nvme+tcp://192.0.2.10/nqn.2024-01.io.nvmeof:d?disable_sqflow=maybe"));
        assertTrue(e.getMessage().contains("disable_sqflow must be 1 or 0"), e.getMessage());
        // From a discovery log, as libnvme does: TREQ bit 2 (SQ flow control disable supported) turns it on.
        NvmeUri d = NvmeUri.parse("nvme+tcp://192.0.2.10:8009");
        DiscoveryEntry supported = new DiscoveryEntry(
                3, 1, 2, 0x4 | 0x2, 1, 0xFFFF, 32, 0, "4420", "nqn.2024-01.io.nvmeof:disk1", "192.0.2.11", 0, 0);
        DiscoveryEntry not = new DiscoveryEntry(
                3, 1, 2, 0x2, 1, 0xFFFF, 32, 0, "4420", "nqn.2024-01.io.nvmeof:disk1", "192.0.2.11", 0, 0);
        assertTrue(d.forEntry(supported).disableSqflow());
        assertFalse(d.forEntry(not).disableSqflow());
    }

    @Test
    void everyCopyCarriesTheTlsOptionsAndNoCopyPrintsASecret() {
        io.nvmeof.core.tls.ConfiguredPsk key = io.nvmeof.core.tls.ConfiguredPsk.generate(
                io.nvmeof.core.tls.PskHash.SHA384, new java.security.SecureRandom());
        String psk = key.interchange();
        byte[] raw = new byte[32];
        new java.security.SecureRandom().nextBytes(raw);
        String dhchap = io.nvmeof.core.auth.DhchapSecret.of(raw, null).encode();
        NvmeUri u = NvmeUri.parse("nvme+tcp://192.0.2.10:4420,192.0.2.11:4421/nqn.2024-01.io.nvmeof:disk1?psk="
                + java.net.URLEncoder.encode(psk, java.nio.charset.StandardCharsets.UTF_8)
                + "&psk_identity=1&tls_hash=sha256&iopolicy=round-robin&reconnect_delay=2&ctrl_loss_tmo=-1");
        assertTrue(u.isMultipath());
        DiscoveryEntry e = new DiscoveryEntry(
                3, 1, 2, 0, 1, 0xFFFF, 32, 0, "4420", "nqn.2024-01.io.nvmeof:disk2", "192.0.2.12", 0, 0);
        java.util.List<NvmeUri> copies = new java.util.ArrayList<>(u.paths());
        copies.add(u.paths().get(0).withSubsystem("nqn.2024-01.io.nvmeof:disk3"));
        copies.add(NvmeUri.parse("nvme+tcp://192.0.2.10:8009?psk="
                        + java.net.URLEncoder.encode(psk, java.nio.charset.StandardCharsets.UTF_8))
                .forEntry(e));
        for (NvmeUri c : copies) {
            assertTrue(c.tls().enabled(), c.toString());
            assertEquals(key, c.tls().psk(), c.toString());
            assertFalse(c.toString().contains(psk), c.toString());
        }
        assertEquals(2, u.paths().size());
        for (NvmeUri p : u.paths()) {
            assertEquals(1, p.tls().identityVersion(), p.toString());
            assertEquals(io.nvmeof.core.tls.PskHash.SHA256, p.tls().tlsHash(), p.toString());
            assertEquals("round-robin", p.iopolicy());
            assertEquals(Duration.ofSeconds(2), p.reconnectDelay());
        }
        // a URI with both kinds of secret: neither in the text nor in a message about another option
        String both = "nvme+tcp://192.0.2.10:4420/nqn.2024-01.io.nvmeof:disk1?psk="
                + java.net.URLEncoder.encode(psk, java.nio.charset.StandardCharsets.UTF_8) + "&dhchap_secret="
                + java.net.URLEncoder.encode(dhchap, java.nio.charset.StandardCharsets.UTF_8);
        NvmeUri b = NvmeUri.parse(both);
        assertTrue(b.tls().enabled());
        assertTrue(b.dhchap() != null);
        assertFalse(b.toString().contains(psk) || b.toString().contains(dhchap), b.toString());
        IllegalArgumentException x =
                assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(both + "&bogus=1"));
        String m = x.getMessage();
        assertFalse(m.contains(psk.substring(16, 40)) || m.contains(dhchap.substring(10, 40)), m);
    }
}

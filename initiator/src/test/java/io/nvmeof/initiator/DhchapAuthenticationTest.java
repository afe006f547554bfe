package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.auth.DhGroup;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.target.config.HostAuth;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * DH-HMAC-CHAP end to end, our initiator against our target over NVMe/TCP on loopback (docs/security.md): every hash
 * and group, uni- and bidirectional, on the admin and every I/O queue, with I/O checked afterwards; wrong keys, a
 * missing key and an unexpected controller refused with the reason; re-authentication.
 */
class DhchapAuthenticationTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:0a0b0c0d-1111-2222-3333-444455556666";
    private static final SecureRandom RANDOM = new SecureRandom();

    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").build();

    @AfterEach
    void removeKeys() {
        target.target().setHostAuth(target.nqn(), HOST, null);
    }

    static DhchapSecret secret(DhchapHash transform) {
        byte[] raw = new byte[transform == null ? 32 : transform.length()];
        RANDOM.nextBytes(raw);
        return DhchapSecret.of(raw, transform);
    }

    private static String enc(DhchapSecret s) {
        return URLEncoder.encode(s.encode(), StandardCharsets.UTF_8);
    }

    private String uri(DhchapSecret host, DhchapSecret ctrl) {
        String o = "queues=2&hostnqn=" + HOST + (host == null ? "" : "&dhchap_secret=" + enc(host))
                + (ctrl == null ? "" : "&dhchap_ctrl_secret=" + enc(ctrl));
        return target.uri(o);
    }

    private void keys(DhchapSecret host, DhchapSecret ctrl, DhchapHash hash, DhGroup group) {
        target.target()
                .setHostAuth(
                        target.nqn(),
                        HOST,
                        new HostAuth(
                                HOST,
                                host,
                                ctrl,
                                hash == null ? List.of() : List.of(hash),
                                group == null ? List.of() : List.of(group)));
    }

    /**
     * Writes and reads back a pattern from one new thread per I/O queue (the initiator picks a queue by thread ID, so
     * consecutive threads use different queues).
     */
    private static void verifyIo(Controller c) throws Exception {
        Namespace ns = c.namespace();
        for (int q = 0; q < c.ioQueueCount(); q++) {
            int lba = q * 8;
            Exception[] failed = new Exception[1];
            Thread t = new Thread(() -> {
                try {
                    byte[] pattern = new byte[8 * ns.blockSize()];
                    RANDOM.nextBytes(pattern);
                    ByteBuffer w = c.allocateBuffer(pattern.length);
                    w.put(0, pattern);
                    ns.write(lba, 8, w);
                    ByteBuffer r = c.allocateBuffer(pattern.length);
                    ns.read(lba, 8, r);
                    byte[] back = new byte[pattern.length];
                    r.get(0, back);
                    assertArrayEquals(pattern, back);
                } catch (Exception e) {
                    failed[0] = e;
                }
            });
            t.start();
            t.join();
            if (failed[0] != null) {
                throw failed[0];
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} bidirectional={2}")
    @CsvSource({
        "SHA_256, NULL, false",
        "SHA_384, NULL, false",
        "SHA_512, NULL, false",
        "SHA_256, NULL, true",
        "SHA_256, FFDHE2048, false",
        "SHA_384, FFDHE2048, true",
        "SHA_512, FFDHE3072, true",
        "SHA_256, FFDHE4096, true",
        "SHA_384, FFDHE6144, false",
    })
    void authenticatesAndDoesIo(DhchapHash hash, DhGroup group, boolean bidirectional) throws Exception {
        DhchapSecret host = secret(DhchapHash.SHA_256);
        DhchapSecret ctrl = bidirectional ? secret(null) : null;
        keys(host, ctrl, hash, group);
        try (Controller c = Nvme.connect(uri(host, ctrl))) {
            assertEquals(2, c.ioQueueCount());
            verifyIo(c);
        }
    }

    @Test
    void ffdhe8192BidirectionalOnce() throws Exception {
        DhchapSecret host = secret(DhchapHash.SHA_512);
        DhchapSecret ctrl = secret(DhchapHash.SHA_384);
        keys(host, ctrl, DhchapHash.SHA_512, DhGroup.FFDHE8192);
        try (Controller c = Nvme.connect(uri(host, ctrl))) {
            verifyIo(c);
        }
    }

    @Test
    void wrongHostKeyIsRefusedByTheController() {
        keys(secret(DhchapHash.SHA_256), null, null, null);
        NvmeAuthenticationException e = assertThrows(
                NvmeAuthenticationException.class,
                () -> Nvme.connect(uri(secret(DhchapHash.SHA_256), null)).close());
        assertEquals(AuthProtocol.FAILED, e.explanation());
        assertTrue(e.getMessage().contains("the controller refused the host"), e.getMessage());
        assertTrue(e.getMessage().contains("admin queue"), e.getMessage());
    }

    @Test
    void wrongControllerKeyIsRefusedByTheHost() {
        DhchapSecret host = secret(DhchapHash.SHA_256);
        keys(host, secret(null), null, DhGroup.FFDHE2048);
        NvmeAuthenticationException e = assertThrows(
                NvmeAuthenticationException.class,
                () -> Nvme.connect(uri(host, secret(null))).close());
        assertEquals(AuthProtocol.FAILED, e.explanation());
        assertTrue(e.getMessage().contains("controller's response does not match"), e.getMessage());
    }

    @Test
    void hostWithoutKeyIsRefused() {
        keys(secret(DhchapHash.SHA_256), null, null, null);
        NvmeAuthenticationException e = assertThrows(
                NvmeAuthenticationException.class,
                () -> Nvme.connect(uri(null, null)).close());
        assertTrue(e.getMessage().contains("requires DH-HMAC-CHAP"), e.getMessage());
    }

    @Test
    void bidirectionalHostRefusesAControllerThatDoesNotAsk() {
        NvmeAuthenticationException e = assertThrows(
                NvmeAuthenticationException.class,
                () -> Nvme.connect(uri(secret(DhchapHash.SHA_256), secret(null)))
                        .close());
        assertTrue(e.getMessage().contains("does not ask"), e.getMessage());
    }

    @Test
    void unidirectionalHostConnectsToATargetThatDoesNotAsk() throws Exception {
        try (Controller c = Nvme.connect(uri(secret(DhchapHash.SHA_256), null))) {
            verifyIo(c);
        }
    }

    @Test
    void reauthenticatesOnRequest() throws Exception {
        DhchapSecret host = secret(null);
        DhchapSecret ctrl = secret(DhchapHash.SHA_256);
        keys(host, ctrl, DhchapHash.SHA_384, DhGroup.FFDHE2048);
        try (Controller c = Nvme.connect(uri(host, ctrl))) {
            c.reauthenticate();
            verifyIo(c);
            // A changed controller key on the target: the next re-authentication fails and fails the controller.
            keys(host, secret(null), DhchapHash.SHA_384, DhGroup.FFDHE2048);
            assertThrows(NvmeAuthenticationException.class, c::reauthenticate);
            assertFalse(c.isOpen());
        }
    }

    @Test
    void cliOptionsAuthenticate() {
        DhchapSecret host = secret(DhchapHash.SHA_256);
        DhchapSecret ctrl = secret(null);
        keys(host, ctrl, null, DhGroup.FFDHE2048);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int code = io.nvmeof.initiator.cli.NvmeofCli.run(
                new java.io.ByteArrayInputStream(new byte[0]),
                new java.io.PrintStream(out, true, StandardCharsets.UTF_8),
                new java.io.PrintStream(err, true, StandardCharsets.UTF_8),
                "id-ctrl",
                target.uri(),
                "--hostnqn",
                HOST,
                "--dhchap-secret",
                host.encode(),
                "--dhchap-ctrl-secret",
                ctrl.encode());
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        code = io.nvmeof.initiator.cli.NvmeofCli.run(
                new java.io.ByteArrayInputStream(new byte[0]),
                new java.io.PrintStream(out, true, StandardCharsets.UTF_8),
                new java.io.PrintStream(err, true, StandardCharsets.UTF_8),
                "id-ctrl",
                target.uri(),
                "--hostnqn",
                HOST);
        assertEquals(1, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("requires DH-HMAC-CHAP"));
    }

    @Test
    void secretsStayOutOfTheUriText() {
        DhchapSecret host = secret(DhchapHash.SHA_256);
        NvmeUri u = NvmeUri.parse(uri(host, null));
        assertFalse(u.toString().contains(host.encode().substring(10, 30)), u.toString());
        assertTrue(u.dhchap() != null);
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(uri(host, null) + "&bogus=1"));
        assertFalse(e.getMessage().contains(host.encode().substring(10, 30)), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(target.uri("dhchap_secret=DHHC-1:00:AAAA:")));
    }
}

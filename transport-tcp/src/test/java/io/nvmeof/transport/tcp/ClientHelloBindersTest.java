package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.core.tls.PskHash;
import io.nvmeof.core.tls.TlsPsk;
import java.security.SecureRandom;
import java.util.Arrays;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.TlsClientProtocol;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The binder length and offered suites read from real ClientHellos (our host's), whole and cut short. */
class ClientHelloBindersTest {
    @ParameterizedTest(name = "{0} key bound to {1}")
    @CsvSource({"SHA256,SHA256,32", "SHA384,SHA384,48", "SHA384,SHA256,32"})
    void readsTheBinderOfOurOwnClientHello(PskHash key, PskHash bound, int binder) throws Exception {
        TlsPsk psk = ConfiguredPsk.generate(key, new SecureRandom())
                .derive("nqn.2014-08.org.nvmexpress:uuid:1", "nqn.2024-01.io.nvmeof:x", 1, PskDerivation.RFC8446)
                .withTlsHash(bound);
        TlsClientProtocol client = new TlsClientProtocol();
        client.connect(new NvmeTlsPeers.Client(psk, bound, () -> {}));
        byte[] hello = new byte[client.getAvailableOutputBytes()];
        client.readOutput(hello, 0, hello.length);
        assertEquals(binder, ClientHelloBinders.firstBinderLength(hello, hello.length));
        for (int cut : new int[] {0, 4, 5, 40, hello.length - 1}) {
            assertEquals(-1, ClientHelloBinders.firstBinderLength(Arrays.copyOf(hello, cut), cut), "cut at " + cut);
        }
        int suite = bound == PskHash.SHA256 ? CipherSuite.TLS_AES_128_GCM_SHA256 : CipherSuite.TLS_AES_256_GCM_SHA384;
        assertTrue(ClientHelloBinders.offers(hello, hello.length, suite));
        assertFalse(ClientHelloBinders.offers(hello, hello.length, CipherSuite.TLS_CHACHA20_POLY1305_SHA256));
        // not a ClientHello (an alert record)
        assertEquals(0, ClientHelloBinders.firstBinderLength(new byte[] {0x15, 3, 3, 0, 2, 2, 40}, 7));
    }
}

package io.nvmeof.transport.tcp;

import io.nvmeof.core.tls.PskHash;
import io.nvmeof.core.tls.TlsPsk;
import io.nvmeof.core.tls.TlsPskResolver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Vector;
import org.bouncycastle.tls.AbstractTlsClient;
import org.bouncycastle.tls.AbstractTlsServer;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.PskIdentity;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.impl.bc.BcTlsCrypto;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;

/**
 * The two TLS 1.3 endpoints of the NVMe/TCP secure channel (NVMe/TCP Transport §3.6) for BouncyCastle's TLS API:
 * TLS 1.3 only, external PSKs only (no certificates), TLS_AES_128_GCM_SHA256 and TLS_AES_256_GCM_SHA384, the cipher
 * suite's hash being the PSK's. Used by {@link BcTlsPskHandler}.
 */
final class NvmeTlsPeers {
    /** The JCA crypto (AES-GCM and HMAC from the JDK, with its intrinsics); thread-safe, shared. */
    static final TlsCrypto CRYPTO = new JcaTlsCryptoProvider().create(new SecureRandom());
    /**
     * BouncyCastle's own crypto, for the connections that negotiate TLS_CHACHA20_POLY1305_SHA256: the JDK has
     * ChaCha20-Poly1305, but not under the name BouncyCastle's JCA layer asks for.
     */
    static final TlsCrypto CHACHA_CRYPTO = new BcTlsCrypto(new SecureRandom());

    /**
     * The controller's suites: the two of NVMe/TCP, and TLS_CHACHA20_POLY1305_SHA256, which the Linux host's tlshd
     * negotiates for an "R02" PSK it bound to SHA-256 while offering only SHA-384 AES suites besides.
     */
    private static final int[] SERVER_SUITES = {
        CipherSuite.TLS_AES_256_GCM_SHA384, CipherSuite.TLS_AES_128_GCM_SHA256, CipherSuite.TLS_CHACHA20_POLY1305_SHA256
    };

    private NvmeTlsPeers() {}

    static int cipherSuite(PskHash hash) {
        return hash == PskHash.SHA384 ? CipherSuite.TLS_AES_256_GCM_SHA384 : CipherSuite.TLS_AES_128_GCM_SHA256;
    }

    static PskHash hashOf(int suite) {
        return suite == CipherSuite.TLS_AES_256_GCM_SHA384 ? PskHash.SHA384 : PskHash.SHA256;
    }

    static String cipherSuiteName(int suite) {
        return switch (suite) {
            case CipherSuite.TLS_AES_256_GCM_SHA384 -> "TLS_AES_256_GCM_SHA384";
            case CipherSuite.TLS_AES_128_GCM_SHA256 -> "TLS_AES_128_GCM_SHA256";
            case CipherSuite.TLS_CHACHA20_POLY1305_SHA256 -> "TLS_CHACHA20_POLY1305_SHA256";
            default -> "0x" + Integer.toHexString(suite);
        };
    }

    /** The PSK for BouncyCastle, bound to {@code binderHash} (the PSK's own hash unless a peer binds otherwise). */
    private static BasicTlsPSKExternal external(TlsPsk psk, PskHash binderHash) {
        byte[] key = psk.key();
        try {
            int prf = binderHash == PskHash.SHA384 ? PRFAlgorithm.tls13_hkdf_sha384 : PRFAlgorithm.tls13_hkdf_sha256;
            return new BasicTlsPSKExternal(psk.identityBytes(), CRYPTO.createSecret(key), prf);
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    /**
     * The host's side: offers one PSK identity, bound to its hash (or to {@code binderHash} when given: SHA-256 for an
     * R02 key makes the Linux target's tlshd accept it), and the cipher suite of that hash.
     */
    static final class Client extends AbstractTlsClient {
        private final TlsPsk psk;
        private final PskHash binderHash;
        private final Runnable onComplete;

        Client(TlsPsk psk, PskHash binderHash, Runnable onComplete) {
            super(CRYPTO);
            this.psk = psk;
            this.binderHash = binderHash != null ? binderHash : psk.hash();
            this.onComplete = onComplete;
        }

        @Override
        protected ProtocolVersion[] getSupportedVersions() {
            return ProtocolVersion.TLSv13.only();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return new int[] {cipherSuite(binderHash)};
        }

        @Override
        public Vector getExternalPSKs() {
            Vector<TlsPSKExternal> v = new Vector<>(1);
            v.add(external(psk, binderHash));
            return v;
        }

        @Override
        public TlsAuthentication getAuthentication() throws IOException {
            // Only reached if the controller answers with a certificate instead of accepting the PSK.
            throw new TlsFatalAlert(AlertDescription.handshake_failure, "the controller did not accept the PSK");
        }

        @Override
        public void notifyHandshakeComplete() {
            onComplete.run();
        }
    }

    /** The controller's side: picks the PSK by the identity the host offers, through the listener's resolver. */
    static final class Server extends AbstractTlsServer {
        private final TlsPskResolver resolver;
        private final Runnable onComplete;
        /** The identities the client offered, for the log line when none is known; null until the ClientHello. */
        String offered;
        /** The identity chosen, for the log. */
        String chosen;
        /** The cipher suite negotiated, for the log. */
        String suite;
        /** The length of the client's first PSK binder (32 or 48), 0 if not known: the hash it bound the PSK to. */
        int binderLength;
        /** The crypto of this connection: {@link #CRYPTO}, or {@link #CHACHA_CRYPTO} when ChaCha20 will be chosen. */
        TlsCrypto crypto = CRYPTO;

        Server(TlsPskResolver resolver, Runnable onComplete) {
            super(CRYPTO);
            this.resolver = resolver;
            this.onComplete = onComplete;
        }

        @Override
        protected ProtocolVersion[] getSupportedVersions() {
            return ProtocolVersion.TLSv13.only();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return SERVER_SUITES.clone();
        }

        /** Read by the protocol when it accepts, which the handler does only once it has seen the ClientHello. */
        @Override
        public TlsCrypto getCrypto() {
            return crypto;
        }

        @Override
        public TlsPSKExternal getExternalPSK(Vector identities) {
            StringBuilder names = new StringBuilder();
            for (Object o : identities) {
                String id = new String(((PskIdentity) o).getIdentity(), StandardCharsets.UTF_8);
                names.append(names.length() == 0 ? "" : ", ")
                        .append('\'')
                        .append(id)
                        .append('\'');
                TlsPsk psk = resolver.resolve(id);
                if (psk != null) {
                    chosen = id;
                    PskHash bound =
                            binderLength == 32 ? PskHash.SHA256 : binderLength == 48 ? PskHash.SHA384 : psk.hash();
                    return external(psk, bound);
                }
            }
            offered = names.toString();
            return null;
        }

        /**
         * A suite the client offered with the hash its PSK binder shows, in this server's order of preference (RFC
         * 8446 §4.2.11: a PSK is used only with a suite of its hash). BouncyCastle picks the suite before it asks for
         * the PSK, so the binder's length decides here.
         */
        @Override
        public int getSelectedCipherSuite() throws IOException {
            PskHash want = binderHash();
            if (want == null) {
                return super.getSelectedCipherSuite();
            }
            for (int suite : SERVER_SUITES) {
                if (hashOf(suite) == want
                        && org.bouncycastle.util.Arrays.contains(offeredCipherSuites, suite)
                        && selectCipherSuite(suite)) {
                    return suite;
                }
            }
            throw new TlsFatalAlert(
                    AlertDescription.handshake_failure,
                    "the host offered no cipher suite with the hash its PSK is bound to (" + want + ")");
        }

        private PskHash binderHash() {
            return binderLength == 32 ? PskHash.SHA256 : binderLength == 48 ? PskHash.SHA384 : null;
        }

        @Override
        public TlsCredentials getCredentials() throws IOException {
            // Reached only when no offered identity has a PSK here: there are no certificates to fall back to.
            throw new TlsFatalAlert(AlertDescription.handshake_failure, "no PSK for the identity offered");
        }

        @Override
        public void notifyHandshakeComplete() {
            suite = cipherSuiteName(context.getSecurityParametersConnection().getCipherSuite());
            onComplete.run();
        }
    }
}

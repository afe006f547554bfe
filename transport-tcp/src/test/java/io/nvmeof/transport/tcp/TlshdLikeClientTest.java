package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.core.tls.PskHash;
import io.nvmeof.core.tls.SecureChannel;
import io.nvmeof.core.tls.TlsPsk;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Vector;
import org.bouncycastle.tls.AbstractTlsClient;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsClientProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Our controller against a host that behaves as the Linux host's tlshd (ktls-utils 1.0, GnuTLS 3.8) does with an
 * "R02" key, as seen in the peer VM: the 48-byte TLS PSK bound to SHA-256 (a 32-byte binder), TLS_AES_256_GCM_SHA384
 * and TLS_CHACHA20_POLY1305_SHA256 offered. The controller must pick the SHA-256 suite; then an ICReq gets its ICResp
 * through the session.
 */
@Timeout(60)
class TlshdLikeClientTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:0b7a1f9e-tlshd-like";
    static final String SUBSYS = "nqn.2024-01.io.nvmeof:tls";

    @Test
    void anR02KeyBoundToSha256GetsChaCha20() throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA384, new SecureRandom());
        TlsPsk psk = key.derive(HOST, SUBSYS, 0, PskDerivation.LIBNVME_COMPAT);
        ListenerOptions options = new ListenerOptions(
                new InetSocketAddress("127.0.0.1", 0),
                1,
                128,
                16384,
                1,
                true,
                IoMode.DEFAULT,
                SecureChannel.REQUIRED,
                offered -> offered.equals(psk.identity().wire()) ? psk : null);
        ByteBuffer ram = ByteBuffer.allocateDirect(1 << 20);
        int[] negotiated = new int[1];
        try (TargetListener l = new TcpTransport().listen(options, channel -> new RamCore(channel, ram));
                Socket s = new Socket()) {
            s.connect(l.localAddress(), 5000);
            s.setSoTimeout(20000);
            TlsClientProtocol tls = new TlsClientProtocol(s.getInputStream(), s.getOutputStream());
            tls.connect(new AbstractTlsClient(NvmeTlsPeers.CHACHA_CRYPTO) {
                @Override
                protected ProtocolVersion[] getSupportedVersions() {
                    return ProtocolVersion.TLSv13.only();
                }

                @Override
                protected int[] getSupportedCipherSuites() {
                    return new int[] {CipherSuite.TLS_AES_256_GCM_SHA384, CipherSuite.TLS_CHACHA20_POLY1305_SHA256};
                }

                @Override
                public Vector getExternalPSKs() {
                    Vector<Object> v = new Vector<>();
                    v.add(new BasicTlsPSKExternal(
                            psk.identityBytes(),
                            NvmeTlsPeers.CHACHA_CRYPTO.createSecret(psk.key()),
                            PRFAlgorithm.tls13_hkdf_sha256));
                    return v;
                }

                @Override
                public TlsAuthentication getAuthentication() {
                    throw new IllegalStateException("no certificates");
                }

                @Override
                public void notifyHandshakeComplete() {
                    negotiated[0] = context.getSecurityParametersConnection().getCipherSuite();
                }
            });
            assertEquals(CipherSuite.TLS_CHACHA20_POLY1305_SHA256, negotiated[0]);
            byte[] icreq = new byte[128];
            icreq[2] = (byte) 128; // HLEN
            icreq[4] = (byte) 128; // PLEN
            OutputStream out = tls.getOutputStream();
            out.write(icreq);
            out.flush();
            byte[] icresp = new byte[128];
            new DataInputStream(tls.getInputStream()).readFully(icresp);
            assertEquals(0x01, icresp[0], "ICResp");
            tls.close();
        }
    }
}

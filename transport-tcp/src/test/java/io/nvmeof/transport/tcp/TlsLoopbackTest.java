package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.core.tls.PskHash;
import io.nvmeof.core.tls.PskIdentity;
import io.nvmeof.core.tls.SecureChannel;
import io.nvmeof.core.tls.TlsPsk;
import io.nvmeof.core.tls.TlsPskResolver;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * NVMe/TCP over TLS 1.3 with PSKs, this module's host side against its target side over loopback: both cipher suites,
 * with and without digests, in-capsule, R2T/H2CData and C2HData transfers verified byte for byte; a wrong key, an
 * unknown identity and a plain host on a TLS-required port refused; both kinds of host on a TLS-allowed port; TREQ and
 * SECTYPE in the port's discovery facts.
 */
@Timeout(120)
class TlsLoopbackTest {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:0b7a1f9e-tls-loopback";
    private static final String SUBSYS = "nqn.2024-01.io.nvmeof:tls";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ByteBuffer ram = ByteBuffer.allocateDirect(8 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** The target's resolver: this one host's key, the derivation told apart by the digest (v1) or fixed (v0). */
    private static TlsPskResolver resolverFor(ConfiguredPsk key) {
        return offered -> {
            PskIdentity id;
            try {
                id = PskIdentity.parse(offered);
            } catch (IllegalArgumentException e) {
                return null;
            }
            if (!id.hostNqn().equals(HOST) || !id.subsysNqn().equals(SUBSYS) || id.hash() != key.hash()) {
                return null;
            }
            PskDerivation d = id.version() == 1 ? PskDerivation.matchingDigest(key, id) : PskDerivation.RFC8446;
            return d == null ? null : key.derive(HOST, SUBSYS, id.version(), d);
        };
    }

    private TargetListener listen(SecureChannel sc, ConfiguredPsk key) throws IOException {
        ListenerOptions options = new ListenerOptions(
                new InetSocketAddress("127.0.0.1", 0), 1, 128, 16384, 1, true, IoMode.DEFAULT, sc, resolverFor(key));
        TargetListener l = new TcpTransport().listen(options, channel -> new RamCore(channel, ram));
        closeables.add(l);
        return l;
    }

    private HostQueue open(TargetListener l, TlsPsk psk, boolean digests) throws Exception {
        HostQueue q = new TcpTransport()
                .connect(new HostQueueOptions(
                        l.localAddress(), 1, 32, 1, digests, digests, Duration.ofSeconds(10), IoMode.DEFAULT, psk));
        closeables.add(q);
        TestCommand connect = new TestCommand(0x7F, 0).data(ByteBuffer.wrap(Bytes.pattern(1024, 1)), 0, 1024);
        connect.sqe.fctype(0x01).connect(0, 1, 31, 0, 0);
        q.submit(connect);
        await(connect);
        assertEquals(0, connect.status, "Connect");
        return q;
    }

    private static void await(TestCommand c) throws InterruptedException {
        assertTrue(c.done.await(20, TimeUnit.SECONDS), "no outcome for CID " + c.sqe.cid());
        if (c.error != null) {
            throw new AssertionError("CID " + c.sqe.cid() + " failed", c.error);
        }
    }

    private static void writeAndReadBack(HostQueue q) throws InterruptedException {
        q.maxInCapsuleData(16384);
        long slba = 0;
        int seed = 7;
        for (int size : new int[] {512, 4096, 16384, 65536, 131072 + 4096, 1 << 20}) {
            byte[] data = Bytes.pattern(size, ++seed);
            ByteBuffer src = ByteBuffer.allocateDirect(size);
            src.put(0, data);
            TestCommand w = new TestCommand(0x01, 1).data(src, 0, size);
            w.sqe.slba(slba).nlb(size / RamCore.BLOCK - 1);
            q.submit(w);
            await(w);
            assertEquals(0, w.status, "write " + size);
            ByteBuffer dst = ByteBuffer.allocateDirect(size);
            TestCommand r = new TestCommand(0x02, 2).data(dst, 0, size);
            r.sqe.slba(slba).nlb(size / RamCore.BLOCK - 1);
            q.submit(r);
            await(r);
            assertEquals(0, r.status, "read " + size);
            byte[] back = new byte[size];
            dst.get(0, back);
            assertArrayEquals(data, back, "read back " + size + " bytes over TLS");
            slba += size / RamCore.BLOCK;
        }
    }

    @ParameterizedTest(name = "{0} identity v{1} digests={2} {3}")
    @CsvSource({
        "SHA256,0,false,RFC8446",
        "SHA256,1,true,LIBNVME_COMPAT",
        "SHA384,0,true,RFC8446",
        "SHA384,1,false,RFC8446"
    })
    void ioOverTlsWithEachCipherSuite(PskHash hash, int version, boolean digests, PskDerivation derivation)
            throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(hash, RANDOM);
        TargetListener l = listen(SecureChannel.REQUIRED, key);
        HostQueue q = open(l, key.derive(HOST, SUBSYS, version, derivation), digests);
        writeAndReadBack(q);
        assertTrue(q.isOpen());
    }

    @Test
    void aSha384KeyBoundToSha256AsTlshdBindsIt() throws Exception {
        // tlshd (the Linux host's handshakes) binds every external PSK to SHA-256; the controller sees the 32-byte
        // binder and binds the R02 key the same way
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA384, RANDOM);
        TargetListener l = listen(SecureChannel.REQUIRED, key);
        TlsPsk psk = key.derive(HOST, SUBSYS, 0, PskDerivation.RFC8446).withTlsHash(PskHash.SHA256);
        writeAndReadBack(open(l, psk, true));
        assertEquals(0, ClientHelloBinders.firstBinderLength(new byte[] {0x16, 3, 1, 0, 4, 2, 0, 0, 0}, 9));
        assertEquals(-1, ClientHelloBinders.firstBinderLength(new byte[] {0x16, 3, 1, 1, 0, 1}, 6));
    }

    @Test
    void aWrongKeyIsRefused() throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        ConfiguredPsk wrong = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        TargetListener l = listen(SecureChannel.REQUIRED, key);
        // same identity (v0 carries no digest), other key: the PSK binder does not verify
        IOException e = assertThrows(
                IOException.class, () -> open(l, wrong.derive(HOST, SUBSYS, 0, PskDerivation.RFC8446), false));
        assertTrue(e.getMessage().contains("TLS"), e.getMessage());
        // v1: the digest already differs, so the identity is unknown to the target
        assertThrows(IOException.class, () -> open(l, wrong.derive(HOST, SUBSYS, 1, PskDerivation.RFC8446), false));
        // the other derivation with a v0 identity: other TLS PSK
        assertThrows(
                IOException.class, () -> open(l, key.derive(HOST, SUBSYS, 0, PskDerivation.LIBNVME_COMPAT), false));
        // another subsystem NQN
        assertThrows(IOException.class, () -> open(l, key.derive(HOST, SUBSYS + "2", 0, PskDerivation.RFC8446), false));
        // and the right one still works
        writeAndReadBack(open(l, key.derive(HOST, SUBSYS, 0, PskDerivation.RFC8446), false));
    }

    @Test
    void aPlainHostIsRefusedWhereTlsIsRequired() throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        TargetListener l = listen(SecureChannel.REQUIRED, key);
        assertThrows(IOException.class, () -> open(l, null, false));
        assertEquals(0x05, l.portInfo().treq(), "TREQ: required + SQ flow control disable supported");
        assertEquals(2, l.portInfo().tsas()[0], "SECTYPE TLS 1.3");
    }

    @Test
    void bothKindsOfHostWhereTlsIsAllowed() throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA384, RANDOM);
        TargetListener l = listen(SecureChannel.ALLOWED, key);
        writeAndReadBack(open(l, key.derive(HOST, SUBSYS, 1, PskDerivation.RFC8446), true));
        writeAndReadBack(open(l, null, true));
        assertEquals(0x06, l.portInfo().treq(), "TREQ: not required + SQ flow control disable supported");
        assertEquals(2, l.portInfo().tsas()[0]);
    }

    @Test
    void aHostThatNeverSpeaksTlsIsCutOffWithoutHarm() throws Exception {
        ConfiguredPsk key = ConfiguredPsk.generate(PskHash.SHA256, RANDOM);
        TargetListener l = listen(SecureChannel.REQUIRED, key);
        try (Socket s = new Socket()) {
            s.connect(l.localAddress(), 5000);
            s.setSoTimeout(15000);
            OutputStream out = s.getOutputStream();
            // a TLS record header announcing a ClientHello, then garbage
            out.write(new byte[] {0x16, 0x03, 0x01, 0x00, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[256];
            int n;
            do {
                n = in.read(buf);
            } while (n > 0);
            assertEquals(-1, n, "the target closes the connection");
        }
        // the listener still serves
        writeAndReadBack(open(l, key.derive(HOST, SUBSYS, 0, PskDerivation.RFC8446), false));
    }
}

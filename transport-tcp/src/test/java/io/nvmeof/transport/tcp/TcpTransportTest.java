package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.Bytes.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** TcpTransport over real loopback sockets, with a plain java.net.Socket as the host. */
@Timeout(30)
class TcpTransportTest {
    private final List<TargetListener> listeners = new ArrayList<>();

    @AfterEach
    void closeListeners() {
        listeners.forEach(TargetListener::close);
    }

    private TargetListener listen(int port) throws IOException {
        return listen(port, true);
    }

    private TargetListener listen(int port, boolean allowNative) throws IOException {
        ListenerOptions options = new ListenerOptions(new InetSocketAddress("127.0.0.1", port), 7, 128, 16384, 2, true);
        // A fresh fake core per connection: each queue is its own object, as in the real target.
        TargetListener l = new TcpTransport(allowNative).listen(options, channel -> new FakeCore().accept(channel));
        listeners.add(l);
        return l;
    }

    /** A host connection speaking just enough NVMe/TCP. */
    private static final class Host implements AutoCloseable {
        final Socket socket;
        final OutputStream out;
        final DataInputStream in;

        Host(InetSocketAddress address) throws IOException {
            socket = new Socket(address.getAddress(), address.getPort());
            socket.setSoTimeout(10_000);
            socket.setTcpNoDelay(true);
            out = socket.getOutputStream();
            in = new DataInputStream(socket.getInputStream());
        }

        void send(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }

        /** Reads one PDU by its common header (nvmeof-protocol.md §5.2). */
        byte[] readPdu() throws IOException {
            byte[] ch = new byte[8];
            in.readFully(ch);
            int plen = Bytes.view(ch).getInt(4);
            byte[] pdu = new byte[plen];
            System.arraycopy(ch, 0, pdu, 0, 8);
            in.readFully(pdu, 8, plen - 8);
            return pdu;
        }

        void connect() throws IOException {
            send(Bytes.icReq(0));
            byte[] icResp = readPdu();
            assertEquals(0x01, icResp[0]);
            assertEquals(128, icResp.length);
            send(Bytes.capsule(Bytes.connectSqe(3, 0, 31, 0), Bytes.pattern(1024, 0), false, false));
            byte[] resp = readPdu();
            assertEquals(0x05, resp[0], hex(resp));
            assertEquals(3, Bytes.view(resp).getShort(20));
            assertEquals(0, Bytes.view(resp).getShort(22), "Connect status");
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private static int threads(String prefix) {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix) && t.isAlive()) {
                n++;
            }
        }
        return n;
    }

    @Test
    void foundByServiceLoader() {
        Transport t = Transport.find("tcp");
        assertInstanceOf(TcpTransport.class, t);
        assertEquals(3, t.transportType());
    }

    @Test
    void loopbackConnectAndReadOverNio() throws Exception {
        TargetListener l = listen(0, false);
        try (Host host = new Host(l.localAddress())) {
            host.connect();
            readAndCheck(host, 0x78, 65536);
            byte[] data = Bytes.pattern(12288, 5);
            writeViaR2t(host, 0x79, data);
        }
    }

    private static void readAndCheck(Host host, int cid, int length) throws IOException {
        host.send(Bytes.capsule(Bytes.sqe(0x02, cid, 0x5A, length), null, false, false));
        byte[] c2h = host.readPdu();
        assertEquals(0x07, c2h[0]);
        assertEquals(length, Bytes.view(c2h).getInt(16));
        byte[] data = new byte[length];
        System.arraycopy(c2h, 24, data, 0, length);
        assertArrayEquals(Bytes.pattern(length, 7), data);
        byte[] resp = host.readPdu();
        assertEquals(0x05, resp[0]);
        assertEquals(cid, Bytes.view(resp).getShort(20));
    }

    private static void writeViaR2t(Host host, int cid, byte[] data) throws IOException {
        host.send(Bytes.capsule(Bytes.sqe(0x01, cid, 0x5A, data.length), null, false, false));
        byte[] r2t = host.readPdu();
        assertEquals(0x09, r2t[0]);
        int ttag = Bytes.view(r2t).getShort(10);
        host.send(Bytes.h2cData(cid, ttag, 0, data, true, false, false));
        byte[] resp = host.readPdu();
        assertEquals(0x05, resp[0]);
        assertEquals(cid, Bytes.view(resp).getShort(20));
        assertEquals(0, Bytes.view(resp).getShort(22));
    }

    @Test
    void loopbackConnectAndRead() throws Exception {
        TargetListener l = listen(0);
        InetSocketAddress bound = l.localAddress();
        assertTrue(bound.getPort() > 0);
        PortInfo p = l.portInfo();
        assertEquals(3, p.transportType());
        assertEquals(PortInfo.ADRFAM_IPV4, p.addressFamily());
        assertEquals("127.0.0.1", p.address());
        assertEquals(Integer.toString(bound.getPort()), p.serviceId());
        assertEquals(7, p.portId());
        assertEquals(0x00100001, p.sgls());
        assertEquals(0, p.mdts());
        assertEquals(0x04, p.treq());
        assertArrayEquals(new byte[] {0}, p.tsas());
        assertEquals(128, p.maxQueueSize());

        try (Host host = new Host(bound)) {
            host.connect();
            host.send(Bytes.capsule(Bytes.sqe(0x02, 0x77, 0x5A, 8192), null, false, false));
            byte[] c2h = host.readPdu();
            assertEquals(0x07, c2h[0]);
            assertEquals(8192, Bytes.view(c2h).getInt(16));
            byte[] data = new byte[8192];
            System.arraycopy(c2h, 24, data, 0, 8192);
            assertArrayEquals(Bytes.pattern(8192, 7), data);
            byte[] resp = host.readPdu();
            assertEquals(0x05, resp[0]);
            assertEquals(0x77, Bytes.view(resp).getShort(20));
            readAndCheck(host, 0x7A, 1 << 20);
            writeViaR2t(host, 0x7B, Bytes.pattern(131072, 3));
        }
    }

    @Test
    void garbageConnectionIsTerminatedOthersKeepWorking() throws Exception {
        TargetListener l = listen(0);
        try (Host good = new Host(l.localAddress());
                Host bad = new Host(l.localAddress())) {
            good.connect();
            bad.send("this is not NVMe/TCP at all".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            byte[] term = bad.readPdu();
            assertEquals(0x03, term[0], "C2HTermReq");
            assertEquals(1, Bytes.view(term).getShort(8), "FES: Invalid PDU Header Field");
            assertEquals(-1, bad.in.read(), "the bad connection is closed");

            good.send(Bytes.capsule(Bytes.sqe(0x18, 12, 0x5A, 0), null, false, false));
            byte[] resp = good.readPdu();
            assertEquals(0x05, resp[0]);
            assertEquals(12, Bytes.view(resp).getShort(20));
        }
    }

    @Test
    void portInUseIsAClearIOExceptionAndLeavesNoThreads() throws Exception {
        TargetListener l = listen(0);
        int port = l.localAddress().getPort();
        int before = threads("nvme-tcp-accept-" + port) + threads("nvme-tcp-io-" + port);
        IOException e = assertThrows(IOException.class, () -> listen(port));
        assertEquals("port " + port + " on 127.0.0.1 is already in use", e.getMessage());
        assertEquals(
                before,
                threads("nvme-tcp-accept-" + port) + threads("nvme-tcp-io-" + port),
                "the failed listener left threads behind");
    }

    /**
     * Without {@code ioThreads}, a listener in the default mode has one I/O thread per core. Its threads poll for the
     * idle policy's window after every event, so under load none sleeps; Netty's default of two per core put two
     * polling threads on each core. Netty starts a loop's thread when the first connection lands on it, so twice as
     * many connections as cores start every thread there is.
     */
    @Test
    void defaultModeListenerHasOneIoThreadPerCore() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        ListenerOptions options = new ListenerOptions(new InetSocketAddress("127.0.0.1", port), 7, 128, 16384, 0, true);
        TargetListener l = new TcpTransport(true).listen(options, channel -> new FakeCore().accept(channel));
        listeners.add(l);
        int cores = Runtime.getRuntime().availableProcessors();
        List<Host> hosts = new ArrayList<>();
        try {
            for (int i = 0; i < 2 * cores; i++) {
                Host h = new Host(l.localAddress());
                hosts.add(h);
                h.connect(); // answered on its loop: that loop's thread runs
            }
            assertEquals(cores, threads("nvme-tcp-io-" + port), "I/O threads of a default-mode listener");
        } finally {
            for (Host h : hosts) {
                h.close();
            }
        }
    }

    @Test
    void closeClosesConnectionsAndStopsThreads() throws Exception {
        TargetListener l = listen(0);
        try (Host host = new Host(l.localAddress())) {
            host.connect();
            assertTrue(threads("nvme-tcp-io-any") > 0);
            l.close();
            InputStream in = host.in;
            assertEquals(-1, in.read(), "connections are closed with the listener");
        }
        // Netty completes the termination future from the loop's own thread just before that thread exits.
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        while (threads("nvme-tcp-accept-any") + threads("nvme-tcp-io-any") > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(0, threads("nvme-tcp-accept-any") + threads("nvme-tcp-io-any"), "event loops stopped");
        assertThrows(
                IOException.class,
                () -> {
                    try (Socket s = new Socket(
                            l.localAddress().getAddress(), l.localAddress().getPort())) {
                        ByteBuffer.allocate(0);
                    }
                },
                "nobody listens any more");
    }
}

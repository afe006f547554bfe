package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.TargetListener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Scanner;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The kernel buffer sizes of NVMe/TCP sockets: the choice within the kernel's caps, and real sockets on both sides. */
@Timeout(60)
class SocketBuffersTest {
    /** Not what autotuning starts a socket at (tcp_rmem 128 KiB, tcp_wmem 16 KiB), and under a stock kernel's caps. */
    private static final int ASKED = 96 * 1024;

    @Test
    void bothBuffersAreSetWhenTheKernelAllowsTheSize() {
        SocketBuffers b = SocketBuffers.of(SocketBuffers.HOST_PROPERTY, 2 << 20, 4 << 20, 2 << 20);
        assertEquals(2 << 20, b.receive());
        assertEquals(2 << 20, b.send());
    }

    @Test
    void aBufferTheKernelWouldCapIsLeftToAutotuning() {
        SocketBuffers b =
                SocketBuffers.of(SocketBuffers.HOST_PROPERTY, 2 << 20, 212_992, 4 << 20); // a stock kernel's rmem_max
        assertEquals(0, b.receive(), "locked below the asked size, the window could be smaller than autotuning's");
        assertEquals(2 << 20, b.send());
        SocketBuffers s = SocketBuffers.of(SocketBuffers.HOST_PROPERTY, 2 << 20, 4 << 20, 212_992);
        assertEquals(2 << 20, s.receive());
        assertEquals(0, s.send());
    }

    @Test
    void zeroLeavesBothToTheKernelAndUnknownCapsDoNotStopTheSetting() {
        SocketBuffers zero = SocketBuffers.of(SocketBuffers.HOST_PROPERTY, 0, 4 << 20, 4 << 20);
        assertEquals(0, zero.receive());
        assertEquals(0, zero.send());
        SocketBuffers noProc = SocketBuffers.of(SocketBuffers.HOST_PROPERTY, ASKED, -1, -1);
        assertEquals(ASKED, noProc.receive());
        assertEquals(ASKED, noProc.send());
    }

    @Test
    void aBadSizeIsRefusedNamingTheProperty() {
        IllegalArgumentException negative = assertThrows(
                IllegalArgumentException.class, () -> SocketBuffers.of(SocketBuffers.HOST_PROPERTY, -1, -1, -1));
        assertTrue(negative.getMessage().contains(SocketBuffers.HOST_PROPERTY), negative.getMessage());
        IllegalArgumentException text = assertThrows(
                IllegalArgumentException.class,
                () -> SocketBuffers.parse(SocketBuffers.TARGET_PROPERTY, "2m", SocketBuffers.TARGET_DEFAULT));
        assertEquals(
                "io.nvmeof.tcp.targetSocketBufferBytes must be 0 (the kernel's autotuning) or a byte count, not '2m'",
                text.getMessage());
        assertEquals(0, SocketBuffers.parse(SocketBuffers.HOST_PROPERTY, " 0 ", SocketBuffers.HOST_DEFAULT));
    }

    @Test
    void hostQueuesGetSpdksTwoMebibytesAndTargetsAutotuningUnlessAsked() {
        assertEquals(2 << 20, SocketBuffers.parse(SocketBuffers.HOST_PROPERTY, null, SocketBuffers.HOST_DEFAULT));
        assertEquals(0, SocketBuffers.parse(SocketBuffers.TARGET_PROPERTY, null, SocketBuffers.TARGET_DEFAULT));
        assertEquals(
                1 << 20, SocketBuffers.parse(SocketBuffers.TARGET_PROPERTY, "1048576", SocketBuffers.TARGET_DEFAULT));
    }

    @Test
    void theKernelsCapsAreReadWhole() throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "/proc/sys is Linux's");
        for (Path cap : List.of(SocketBuffers.RMEM_MAX, SocketBuffers.WMEM_MAX)) {
            long expected;
            try (Scanner in = new Scanner(cap.toFile(), StandardCharsets.US_ASCII)) {
                expected = in.nextLong();
            }
            assertEquals(expected, SocketBuffers.readCap(cap), cap.toString());
        }
        assertEquals(-1, SocketBuffers.readCap(Path.of("/proc/sys/net/core/no_such_value")));
    }

    /**
     * A host queue connected to a listener, both made by {@link TcpTransport} with 96 KiB buffers: the kernel reports
     * twice the size set (its bookkeeping share, socket(7)) as both sockets' rb and tb, and does not grow them under
     * traffic. With autotuning they start at tcp_rmem's and tcp_wmem's defaults and grow.
     */
    @ParameterizedTest(name = "epoll={0}")
    @ValueSource(booleans = {true, false})
    void hostAndTargetSocketsGetTheSizeOnEitherEngine(boolean nativeIo) throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "socket buffers are read with Linux's ss");
        List<long[]> fixed =
                buffersOfAConnection(SocketBuffers.of(SocketBuffers.HOST_PROPERTY, ASKED, -1, -1), nativeIo);
        assertEquals(2, fixed.size(), "the host's socket and the target's");
        for (long[] socket : fixed) {
            assertEquals(2L * ASKED, socket[1], "receive buffer (rb)");
            assertEquals(2L * ASKED, socket[2], "send buffer (tb)");
        }
        List<long[]> autotuned =
                buffersOfAConnection(SocketBuffers.of(SocketBuffers.HOST_PROPERTY, 0, -1, -1), nativeIo);
        assertEquals(2, autotuned.size());
        for (long[] socket : autotuned) {
            assertNotEquals(2L * ASKED, socket[1], "autotuned receive buffer");
        }
    }

    /**
     * {@code new TcpTransport()} as a program gets it: the host queue's socket has 2 MiB buffers where the kernel's
     * caps allow them (else autotuning), the target's accepted socket keeps autotuning.
     */
    @Test
    void byDefaultTheHostsSocketIsFixedAndTheTargetsAutotuned() throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "socket buffers are read with Linux's ss");
        assumeTrue(System.getProperty(SocketBuffers.HOST_PROPERTY) == null, "the default, not a set property");
        assumeTrue(System.getProperty(SocketBuffers.TARGET_PROPERTY) == null, "the default, not a set property");
        long locked = 2L * SocketBuffers.HOST_DEFAULT;
        boolean allowed = SocketBuffers.readCap(SocketBuffers.RMEM_MAX) >= SocketBuffers.HOST_DEFAULT
                && SocketBuffers.readCap(SocketBuffers.WMEM_MAX) >= SocketBuffers.HOST_DEFAULT;
        int[] listenerPort = new int[1];
        List<long[]> sockets = buffersOfAConnection(null, true, listenerPort);
        assertEquals(2, sockets.size(), "the host's socket and the target's");
        for (long[] socket : sockets) {
            boolean target = socket[0] == listenerPort[0];
            if (target || !allowed) {
                assertNotEquals(locked, socket[1], (target ? "target" : "host") + ": autotuned receive buffer");
            } else {
                assertEquals(locked, socket[1], "host: receive buffer (rb)");
                assertEquals(locked, socket[2], "host: send buffer (tb)");
            }
        }
    }

    private static List<long[]> buffersOfAConnection(SocketBuffers buffers, boolean nativeIo) throws Exception {
        return buffersOfAConnection(buffers, nativeIo, new int[1]);
    }

    /**
     * {local port, rb, tb} of both ends of one host queue, after 1 MiB was written and read back over it.
     *
     * @param buffers      null: the transport's defaults
     * @param listenerPort gets the listener's port
     */
    private static List<long[]> buffersOfAConnection(SocketBuffers buffers, boolean nativeIo, int[] listenerPort)
            throws Exception {
        ByteBuffer ram = ByteBuffer.allocateDirect(2 << 20).order(ByteOrder.LITTLE_ENDIAN);
        TcpTransport transport = new TcpTransport(nativeIo, buffers);
        ListenerOptions options = new ListenerOptions(new InetSocketAddress("127.0.0.1", 0), 1, 128, 16384, 2, false);
        try (TargetListener l = transport.listen(options, channel -> new RamCore(channel, ram));
                HostQueue q = transport.connect(
                        new HostQueueOptions(l.localAddress(), 1, 32, 1, false, false, Duration.ofSeconds(5)))) {
            TestCommand connect = new TestCommand(0x7F, 0).data(ByteBuffer.wrap(Bytes.pattern(1024, 1)), 0, 1024);
            connect.sqe.fctype(0x01).connect(0, 1, 31, 0, 0);
            run(q, connect);
            ByteBuffer data = ByteBuffer.allocateDirect(1 << 20);
            TestCommand w = new TestCommand(0x01, 1).data(data, 0, 1 << 20);
            w.sqe.slba(0).nlb((1 << 20) / RamCore.BLOCK - 1);
            run(q, w);
            TestCommand r = new TestCommand(0x02, 2).data(data, 0, 1 << 20);
            r.sqe.slba(0).nlb((1 << 20) / RamCore.BLOCK - 1);
            run(q, r);
            listenerPort[0] = l.localAddress().getPort();
            return skmem(listenerPort[0]);
        }
    }

    private static void run(HostQueue q, TestCommand c) throws InterruptedException {
        q.submit(c);
        assertTrue(c.done.await(20, TimeUnit.SECONDS), "no outcome for CID " + c.sqe.cid());
        assertEquals(0, c.status, "status of CID " + c.sqe.cid());
    }

    /** One socket of {@code ss -tmnH state established}: local and peer address, then its skmem on the next line. */
    private static final Pattern SKMEM =
            Pattern.compile("\\S+:(\\d+)\\s+\\S+:\\d+\\s+skmem:\\(r\\d+,rb(\\d+),t\\d+,tb(\\d+),");

    /** {local port, rb, tb} of each established loopback socket to or from the port, by {@code ss -tmn}. */
    private static List<long[]> skmem(int port) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(
                            "ss", "-tmnH", "state", "established", "( sport = :" + port + " or dport = :" + port + " )")
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw new AssertionError("this test reads socket buffers with ss (iproute2); install it", e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        List<long[]> found = new ArrayList<>();
        Matcher m = SKMEM.matcher(out);
        while (m.find()) {
            found.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3))});
        }
        return found;
    }
}

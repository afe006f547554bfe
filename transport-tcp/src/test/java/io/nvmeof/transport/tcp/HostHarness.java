package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmeof.core.spi.HostQueueOptions;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@link EmbeddedChannel} with the host pipeline, a cache-less pooled allocator (so "no leak" is a count), and
 * controller PDUs built by hand from nvmeof-protocol.md (§5.4–§5.7), independent of the production flyweights.
 */
final class HostHarness {
    final PooledByteBufAllocator alloc = new PooledByteBufAllocator(true, 1, 1, 8192, 9, 0, 0, false);
    final EmbeddedChannel channel = new EmbeddedChannel();
    final TcpHostQueue queue;
    final boolean hd;
    final boolean dd;
    final List<Throwable> closes = new ArrayList<>();
    int closeCalls;

    HostHarness(boolean hd, boolean dd) {
        this(hd, dd, 32);
    }

    HostHarness(boolean hd, boolean dd, int queueSize) {
        this.hd = hd;
        this.dd = dd;
        channel.config().setAllocator(alloc);
        HostQueueOptions options = new HostQueueOptions(
                new InetSocketAddress("127.0.0.1", 4420), 1, queueSize, 1, hd, dd, Duration.ofSeconds(10));
        queue = TcpHostQueue.install(channel.pipeline(), options);
        queue.onClose(cause -> {
            closeCalls++;
            closes.add(cause);
        });
    }

    /** ICReq out, ICResp (as asked, MAXH2CDATA as given) in. */
    HostHarness connect(int maxH2cData) {
        byte[] icReq = drain();
        assertEquals(128, icReq.length);
        feedByteByByte(icResp(0, 0, (hd ? 1 : 0) | (dd ? 2 : 0), maxH2cData));
        assertTrue(queue.ready().isDone() && !queue.ready().isCompletedExceptionally(), "ICResp accepted");
        return this;
    }

    void feedByteByByte(byte[] bytes) {
        for (byte b : bytes) {
            if (!channel.isOpen()) {
                break;
            }
            channel.writeInbound(alloc.buffer(1).writeByte(b));
        }
        channel.runPendingTasks();
    }

    void feed(byte[] bytes) {
        channel.writeInbound(alloc.buffer(bytes.length).writeBytes(bytes));
        channel.runPendingTasks();
    }

    /**
     * Feeds the bytes as one socket read of a longer read burst: through the pipeline from its head, without the
     * {@code channelReadComplete} that ends the burst ({@link #endReadBurst}).
     */
    void read(byte[] bytes) {
        channel.pipeline().fireChannelRead(alloc.buffer(bytes.length).writeBytes(bytes));
    }

    /** Ends a read burst that {@link #read} began. */
    void endReadBurst() {
        channel.pipeline().fireChannelReadComplete();
        channel.runPendingTasks();
    }

    byte[] drain() {
        channel.runPendingTasks();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object o; (o = channel.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            byte[] a = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), a);
            b.release();
            out.writeBytes(a);
        }
        return out.toByteArray();
    }

    List<byte[]> drainPdus() {
        return Bytes.split(drain());
    }

    void assertClean() {
        drain();
        assertFalse(channel.finish(), "messages left in the channel");
        long n = 0;
        for (PoolArenaMetric a : alloc.metric().directArenas()) {
            n += a.numActiveAllocations();
        }
        for (PoolArenaMetric a : alloc.metric().heapArenas()) {
            n += a.numActiveAllocations();
        }
        assertEquals(0, n, "pooled buffers still allocated (leak)");
    }

    // Controller PDUs (nvmeof-protocol.md §5.4–§5.7).

    static byte[] icResp(int pfv, int cpda, int dgst, int maxH2cData) {
        ByteBuffer b = Bytes.le(128);
        b.put(0, (byte) 0x01).put(2, (byte) 128).putInt(4, 128);
        b.putShort(8, (short) pfv).put(10, (byte) cpda).put(11, (byte) dgst).putInt(12, maxH2cData);
        return b.array();
    }

    byte[] withHeaderDigest(ByteBuffer header24) {
        if (!hd) {
            return header24.array();
        }
        ByteBuffer b = Bytes.le(28);
        b.put(0, header24.array(), 0, 24);
        b.putInt(24, Bytes.crc32c(header24.array(), 0, 24));
        return b.array();
    }

    byte[] capsuleResp(int cid, int status, int dw0) {
        ByteBuffer b = Bytes.le(24);
        b.put(0, (byte) 0x05).put(1, (byte) (hd ? 1 : 0)).put(2, (byte) 24).putInt(4, 24 + (hd ? 4 : 0));
        b.putInt(8, dw0).putShort(18, (short) 1).putShort(20, (short) cid).putShort(22, (short) status);
        return withHeaderDigest(b);
    }

    byte[] r2t(int cid, int ttag, int r2to, int r2tl) {
        ByteBuffer b = Bytes.le(24);
        b.put(0, (byte) 0x09).put(1, (byte) (hd ? 1 : 0)).put(2, (byte) 24).putInt(4, 24 + (hd ? 4 : 0));
        b.putShort(8, (short) cid).putShort(10, (short) ttag).putInt(12, r2to).putInt(16, r2tl);
        return withHeaderDigest(b);
    }

    /** C2HData with {@code flags} (LAST_PDU 4, SUCCESS 8); a wrong DDGST if {@code badDigest}. */
    byte[] c2hData(int cid, int datao, byte[] data, int flags, boolean badDigest) {
        int h = hd ? 4 : 0;
        int d = dd ? 4 : 0;
        int plen = 24 + h + data.length + d;
        ByteBuffer b = Bytes.le(plen);
        b.put(0, (byte) 0x07)
                .put(1, (byte) ((hd ? 1 : 0) | (dd ? 2 : 0) | flags))
                .put(2, (byte) 24)
                .put(3, (byte) (24 + h))
                .putInt(4, plen);
        b.putShort(8, (short) cid).putInt(12, datao).putInt(16, data.length);
        if (hd) {
            b.putInt(24, Bytes.crc32c(b.array(), 0, 24));
        }
        b.put(24 + h, data);
        if (dd) {
            b.putInt(24 + h + data.length, Bytes.crc32c(data, 0, data.length) ^ (badDigest ? 1 : 0));
        }
        return b.array();
    }

    static byte[] c2hTermReq(int fes, int fei) {
        ByteBuffer b = Bytes.le(32);
        b.put(0, (byte) 0x03)
                .put(2, (byte) 24)
                .putInt(4, 32)
                .putShort(8, (short) fes)
                .putInt(10, fei);
        return b.array();
    }
}

package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@link EmbeddedChannel} with the controller pipeline, a {@link FakeCore}, and a private pooled allocator with
 * no thread caches, so "every buffer was released" is a plain count of active allocations.
 */
final class TargetHarness {
    final PooledByteBufAllocator alloc = new PooledByteBufAllocator(true, 1, 1, 8192, 9, 0, 0, false);
    final FakeCore core = new FakeCore();
    final EmbeddedChannel channel = new EmbeddedChannel();
    final NvmeTcpTargetHandler handler;
    private final List<ByteBuf> inputs = new ArrayList<>();

    TargetHarness() {
        this(new ListenerOptions(new InetSocketAddress("127.0.0.1", 4420), 1, 128, 16384, 0, true));
    }

    TargetHarness(ListenerOptions options) {
        channel.config().setAllocator(alloc);
        PortInfo port = new PortInfo(
                3,
                1,
                "127.0.0.1",
                "4420",
                1,
                options.maxQueueSize(),
                options.inCapsuleDataSize(),
                TcpTransport.SGLS,
                0,
                4,
                new byte[] {0});
        handler = NvmeTcpTargetHandler.install(channel.pipeline(), options, port, core);
    }

    /** Feeds the bytes one at a time (the decoder must cope with any split), until the target closes. */
    void feedByteByByte(byte[] bytes) {
        for (byte b : bytes) {
            if (!channel.isOpen()) {
                break;
            }
            ByteBuf buf = alloc.buffer(1).writeByte(b);
            inputs.add(buf);
            channel.writeInbound(buf);
        }
        channel.runPendingTasks();
    }

    /** Feeds the bytes in one read. */
    void feed(byte[] bytes) {
        ByteBuf buf = alloc.buffer(bytes.length).writeBytes(bytes);
        inputs.add(buf);
        channel.writeInbound(buf);
        channel.runPendingTasks();
    }

    /**
     * Feeds the bytes as one socket read of a longer read burst: through the pipeline from its head, without the
     * {@code channelReadComplete} that ends the burst ({@link #endReadBurst}).
     */
    void read(byte[] bytes) {
        ByteBuf buf = alloc.buffer(bytes.length).writeBytes(bytes);
        inputs.add(buf);
        channel.pipeline().fireChannelRead(buf);
    }

    /** Ends a read burst that {@link #read} began. */
    void endReadBurst() {
        channel.pipeline().fireChannelReadComplete();
        channel.runPendingTasks();
    }

    /** Feeds the bytes in one read from a heap buffer (memory without an address, as with a heap allocator). */
    void feedHeap(byte[] bytes) {
        ByteBuf buf = alloc.heapBuffer(bytes.length).writeBytes(bytes);
        inputs.add(buf);
        channel.writeInbound(buf);
        channel.runPendingTasks();
    }

    /** Everything the target wrote so far, with every outbound buffer released. */
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

    /** ICReq → ICResp, returns the ICResp. */
    byte[] connectIc(int dgst) {
        feed(Bytes.icReq(dgst));
        List<byte[]> pdus = drainPdus();
        assertEquals(1, pdus.size());
        return pdus.get(0);
    }

    /**
     * Stops checking the input buffers: with leak detection off, a released pooled buffer object is recycled for a
     * later allocation, so its reference count no longer says anything about the first use.
     */
    void forgetInputs() {
        inputs.clear();
    }

    /** Every input buffer was consumed, every pooled buffer released, nothing left in the channel. */
    void assertClean() {
        for (ByteBuf b : inputs) {
            assertEquals(0, b.refCnt(), "an input buffer was not released");
        }
        drain();
        assertFalse(channel.finish(), "messages left in the channel");
        assertEquals(0, activeAllocations(), "pooled buffers still allocated (leak)");
    }

    long activeAllocations() {
        long n = 0;
        for (PoolArenaMetric a : alloc.metric().directArenas()) {
            n += a.numActiveAllocations();
        }
        for (PoolArenaMetric a : alloc.metric().heapArenas()) {
            n += a.numActiveAllocations();
        }
        return n;
    }
}

package io.nvmeof.perf.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.transport.tcp.C2hDataPdu;
import io.nvmeof.transport.tcp.CapsuleRespPdu;
import io.nvmeof.transport.tcp.Crc32c;
import io.nvmeof.transport.tcp.DirectView;
import io.nvmeof.transport.tcp.IcRespPdu;
import io.nvmeof.transport.tcp.NvmeTcpPdu;
import io.nvmeof.transport.tcp.NvmeTcpPduDecoder;
import io.nvmeof.transport.tcp.PduHeader;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * NVMe/TCP PDU coding as the transport does it per I/O, allocation included:
 * <ul>
 *   <li>{@code decodeReadCompletion}: the host-side decoder fed a captured stream of one 4 KiB read's answer
 *       (C2HData + data + CapsuleResp, with digests when {@code digests}), through a real pipeline;</li>
 *   <li>{@code encodeReadCompletion}: the target's C2HData header and CapsuleResp, in pooled buffers as
 *       {@code NvmeTcpTargetHandler.complete} makes them (with HDGST, and the DDGST of a 4 KiB block of direct
 *       memory, both read in place through a {@link DirectView}, when {@code digests}).</li>
 * </ul>
 * Run with {@code -prof gc}: {@code gc.alloc.rate.norm} should be ~0 B/op.
 *
 * <p>The decoder's PDU slices are recycled Netty objects. Netty 4.2 pools them only on its own
 * {@code FastThreadLocalThread}s (the event loops, where the transport runs); the fork runs JMH's workers on such
 * threads ({@link FastThreadLocalExecutor}) to measure what an event loop sees.
 */
@Fork(
        jvmArgsAppend = {
            "-Djmh.executor=CUSTOM",
            "-Djmh.executor.class=io.nvmeof.perf.jmh.FastThreadLocalExecutor",
            "-Dio.netty.leakDetection.level=disabled"
        })
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PduCodecBenchmark {
    static final int DATA = 4096;

    @Param({"false", "true"})
    public boolean digests;

    private EmbeddedChannel channel;
    private ByteBuf stream;
    private int streamLength;
    private final Sink sink = new Sink();
    private final CRC32C crc = new CRC32C();
    private final DirectView crcView = new DirectView();
    /** The data of the read, as namespace memory: one long-lived direct block, read (not copied) for its DDGST. */
    private ByteBuf block;

    private final byte[] scratch = new byte[Crc32c.HEADER_SCRATCH];
    private final C2hDataPdu c2h = new C2hDataPdu();
    private final CapsuleRespPdu resp = new CapsuleRespPdu();
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();
    private final ByteBuffer cqeBuffer =
            ByteBuffer.allocate(CompletionQueueEntry.LENGTH).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    private int cid;

    /** Counts and releases what the decoder emits, as the host handler does. */
    static final class Sink extends ChannelInboundHandlerAdapter {
        long pdus;
        long bytes;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            NvmeTcpPdu p = (NvmeTcpPdu) msg;
            pdus++;
            bytes += p.dataLength();
            p.release();
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        NvmeTcpPduDecoder decoder =
                new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.HOST, 0, 1 << 20).sendTermReqOnFault(false);
        channel = new EmbeddedChannel();
        channel.config().setAllocator(PooledByteBufAllocator.DEFAULT);
        channel.pipeline().addLast(decoder, sink);
        ByteBuf ic = PooledByteBufAllocator.DEFAULT.directBuffer(IcRespPdu.LENGTH);
        new IcRespPdu().wrap(ic, 0).set(0, 0, digests ? 3 : 0, 131072);
        ic.writerIndex(IcRespPdu.LENGTH);
        channel.pipeline().fireChannelRead(ic);
        decoder.digests(digests, digests);
        stream = captureReadCompletion(digests);
        streamLength = stream.writerIndex();
        cqe.wrap(cqeBuffer, 0);
        block = PooledByteBufAllocator.DEFAULT.directBuffer(DATA);
        for (int i = 0; i < DATA; i++) {
            block.writeByte(i * 7);
        }
    }

    /** The bytes our target sends for one successful 4 KiB read of CID 5 (the "captured stream"). */
    static ByteBuf captureReadCompletion(boolean digests) {
        int hd = digests ? PduHeader.DIGEST_LENGTH : 0;
        int dd = hd;
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64 + DATA + 64);
        CRC32C crc = new CRC32C();
        byte[] scratch = new byte[Crc32c.HEADER_SCRATCH];
        new C2hDataPdu().wrap(b, 0).set(digests, digests, C2hDataPdu.FLAG_LAST_PDU, 5, 0, DATA);
        if (digests) {
            b.setIntLE(C2hDataPdu.HLEN, Crc32c.computeHeader(crc, scratch, b, 0, C2hDataPdu.HLEN));
        }
        int at = C2hDataPdu.HLEN + hd;
        for (int i = 0; i < DATA; i++) {
            b.setByte(at + i, i * 31);
        }
        if (digests) {
            b.setIntLE(at + DATA, Crc32c.compute(crc, b, at, DATA));
        }
        at += DATA + dd;
        CapsuleRespPdu r = new CapsuleRespPdu().wrap(b, at);
        r.set(digests);
        b.setZero(r.cqeIndex(), CompletionQueueEntry.LENGTH);
        b.setShortLE(r.cqeIndex() + CompletionQueueEntry.CID_OFFSET, 5);
        if (digests) {
            b.setIntLE(at + CapsuleRespPdu.HLEN, Crc32c.computeHeader(crc, scratch, b, at, CapsuleRespPdu.HLEN));
        }
        b.writerIndex(at + CapsuleRespPdu.HLEN + hd);
        return b;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        stream.release();
        block.release();
        channel.finishAndReleaseAll();
        if (sink.pdus == 0) {
            throw new IllegalStateException("the decoder emitted nothing");
        }
    }

    @Benchmark
    public long decodeReadCompletion() {
        stream.retain().setIndex(0, streamLength);
        channel.pipeline().fireChannelRead(stream);
        channel.pipeline().fireChannelReadComplete();
        return sink.pdus;
    }

    @Benchmark
    public int encodeReadCompletion() {
        int hd = digests ? PduHeader.DIGEST_LENGTH : 0;
        ByteBuf header = PooledByteBufAllocator.DEFAULT.directBuffer(C2hDataPdu.HLEN + hd);
        c2h.wrap(header, 0).set(digests, digests, C2hDataPdu.FLAG_LAST_PDU, cid, 0, DATA);
        if (digests) {
            header.setIntLE(C2hDataPdu.HLEN, Crc32c.computeHeader(crc, crcView, scratch, header, 0, C2hDataPdu.HLEN));
        }
        header.writerIndex(C2hDataPdu.HLEN + hd);
        int trailer = digests ? PduHeader.DIGEST_LENGTH : 0;
        ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(trailer + CapsuleRespPdu.HLEN + hd);
        if (digests) {
            crc.reset();
            Crc32c.update(crc, crcView, block, 0, DATA);
            out.setIntLE(0, (int) crc.getValue());
        }
        resp.wrap(out, trailer).set(digests);
        cqe.cid(cid).status(0).dw0(0).sqhd(cid);
        out.setBytes(resp.cqeIndex(), cqeBuffer.array(), 0, CompletionQueueEntry.LENGTH);
        if (digests) {
            out.setIntLE(
                    trailer + CapsuleRespPdu.HLEN,
                    Crc32c.computeHeader(crc, crcView, scratch, out, trailer, CapsuleRespPdu.HLEN));
        }
        out.writerIndex(trailer + CapsuleRespPdu.HLEN + hd);
        int r = header.getByte(0) + out.getByte(trailer);
        header.release();
        out.release();
        cid = (cid + 1) & 127;
        return r;
    }
}

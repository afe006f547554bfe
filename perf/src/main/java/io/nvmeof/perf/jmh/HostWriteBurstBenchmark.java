package io.nvmeof.perf.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.tcp.TcpHostQueue;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The host side of 4 KiB writes at queue depth 32 without a network: the real NVMe/TCP host queue in an
 * {@link EmbeddedChannel}, 32 writes in flight with their data in the capsule (SGL 0x01, as against a target whose
 * IOCCSZ holds 4 KiB, like SPDK's and ours). One operation is one write: a socket read of 32 CapsuleResps is decoded,
 * each completion's callback submits its write again (as the perf tool's callbacks do), the read's end flushes the 32
 * CapsuleCmds and their data, and the outbound messages are released as if the socket had written them. The score
 * is the host's CPU per write on the event loop, the part of the QD32 randwrite cell that is ours and not the
 * kernel's (perf/README.md, "Issue 13").
 *
 * <p>Everything runs on one {@code FastThreadLocalThread}, as on an event loop: Netty's recycler pools its objects
 * (outbound entries, buffer slices) only on such threads, and JMH's own threads are not. One invocation hands
 * {@value #BURSTS} bursts to that thread and waits, so the hand-over is a few nanoseconds per write.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HostWriteBurstBenchmark {
    private static final int DEPTH = 32;
    private static final int BURSTS = 1000;

    @Param({"4096"})
    public int size;

    private final PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private ExecutorService loop;
    private final Write[] writes = new Write[DEPTH];
    private EmbeddedChannel channel;
    private TcpHostQueue queue;
    private ByteBuf responses;
    /** Writes completed (and submitted again). */
    private long written;

    private boolean closing;

    /** A reusable write of {@code size} bytes from its own direct buffer; a completion submits it again. */
    final class Write implements HostCommand {
        final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        final ByteBuffer data;

        Write(int cid) {
            sqe.wrap(ByteBuffer.allocateDirect(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN), 0);
            sqe.opcode(NvmOpcode.WRITE.code())
                    .flags(SubmissionQueueEntry.FLAGS_SGL)
                    .cid(cid)
                    .nsid(1);
            sqe.nlb(size / 4096 - 1);
            data = ByteBuffer.allocateDirect(size);
        }

        @Override
        public SubmissionQueueEntry command() {
            return sqe;
        }

        @Override
        public ByteBuffer dataBuffer() {
            return data;
        }

        @Override
        public int dataOffset() {
            return 0;
        }

        @Override
        public int dataLength() {
            return size;
        }

        @Override
        public void onResponse(CompletionQueueEntry response) {
            written++;
            queue.submit(this);
        }

        @Override
        public void onTransportError(Throwable cause) {
            if (!closing) { // the tear-down's close fails the 32 writes in flight, as it should
                throw new IllegalStateException("the benchmark's queue failed", cause);
            }
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws InterruptedException, ExecutionException {
        loop = Executors.newSingleThreadExecutor(new DefaultThreadFactory("write-burst"));
        loop.submit(this::setUpOnLoop).get();
    }

    private void setUpOnLoop() {
        channel = new EmbeddedChannel();
        channel.config().setAllocator(alloc);
        queue = TcpHostQueue.install(
                channel.pipeline(),
                new HostQueueOptions(
                        new InetSocketAddress("127.0.0.1", 4420),
                        1,
                        DEPTH + 1,
                        1,
                        false,
                        false,
                        Duration.ofSeconds(10)));
        queue.maxInCapsuleData(size);
        drainOutbound(); // the ICReq
        // ICResp (nvmeof-protocol.md §5.4): PDU type 0x01, HLEN 128, PLEN 128, MAXH2CDATA 128 KiB.
        ByteBuffer ic = ByteBuffer.allocate(128).order(ByteOrder.LITTLE_ENDIAN);
        ic.put(0, (byte) 0x01).put(2, (byte) 128).putInt(4, 128).putInt(12, 131072);
        channel.writeInbound(alloc.directBuffer(128).writeBytes(ic.array()));
        // 32 CapsuleResps (type 0x05, HLEN 24, PLEN 24): SQID 1, CID = the write's index, status 0.
        ByteBuffer r = ByteBuffer.allocate(24 * DEPTH).order(ByteOrder.LITTLE_ENDIAN);
        for (int cid = 0; cid < DEPTH; cid++) {
            int at = 24 * cid;
            r.put(at, (byte) 0x05).put(at + 2, (byte) 24).putInt(at + 4, 24);
            r.putShort(at + 8 + 10, (short) 1).putShort(at + 8 + 12, (short) cid);
        }
        responses = alloc.directBuffer(24 * DEPTH).writeBytes(r.array());
        for (int cid = 0; cid < DEPTH; cid++) {
            writes[cid] = new Write(cid);
            queue.submit(writes[cid]);
        }
        drainOutbound();
        written = 0;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException, ExecutionException {
        try {
            loop.submit(this::tearDownOnLoop).get();
        } finally {
            loop.shutdown();
        }
    }

    private void tearDownOnLoop() {
        closing = true;
        queue.close();
        drainOutbound();
        channel.finishAndReleaseAll();
        responses.release();
        if (written == 0) {
            throw new IllegalStateException("no write completed");
        }
    }

    private void drainOutbound() {
        channel.runPendingTasks();
        for (Object o; (o = channel.readOutbound()) != null; ) {
            ReferenceCountUtil.release(o);
        }
    }

    @Benchmark
    @OperationsPerInvocation(DEPTH * BURSTS)
    public long writeBurst() throws InterruptedException, ExecutionException {
        return loop.submit(this::bursts).get();
    }

    private long bursts() {
        for (int i = 0; i < BURSTS; i++) {
            channel.pipeline().fireChannelRead(responses.retainedDuplicate());
            channel.pipeline().fireChannelReadComplete();
            drainOutbound();
        }
        return written;
    }
}

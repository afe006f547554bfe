package io.nvmeof.perf.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.nvmeof.core.host.CommandIdAllocator;
import io.nvmeof.core.host.SubmissionList;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.tcp.TcpHostQueue;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.jctools.queues.MpscArrayQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The host command path without a network: what one command costs between the initiator's CID allocation and its
 * completion, old mechanism (fc53a18: semaphore + version-tagged Treiber stack in the initiator; a claimed-CID
 * {@link AtomicIntegerArray}, Netty's MPSC queue and a drain-scheduled flag in the TCP handler) against the new one
 * (the core's {@link CommandIdAllocator} and {@link SubmissionList}). Single-threaded: the score is the cost of the
 * instructions and atomic operations, not of contention.
 *
 * <ul>
 *   <li>{@link #cidTakeGiveBack}: take a CID and give it back ({@code impl} old: semaphore + Treiber stack, 4 atomic
 *       operations; new: {@link CommandIdAllocator}, 2).</li>
 *   <li>{@link #handOff}: claim a CID, hand the command to the queue thread's drain and release the CID, as a
 *       submit from another thread does (old: claim CAS, MPSC offer, flag CAS, flag reset, claim reset, 5; new:
 *       claim, push, drain's getAndSet, 3; the release is a plain store).</li>
 *   <li>{@link #tcpSubmitComplete}: a whole command through the real NVMe/TCP host queue in an
 *       {@link EmbeddedChannel} (the CapsuleCmd written, a CapsuleResp decoded, the callback run), with the CID
 *       from {@code impl}'s allocator. Netty's own work dominates it.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HostCommandPathBenchmark {
    private static final int QUEUE_SIZE = 32;

    @Param({"old", "new"})
    public String impl;

    private Cids cids;
    private final OldHandOff oldHandOff = new OldHandOff(QUEUE_SIZE);
    private final SubmissionList list = new SubmissionList(1, QUEUE_SIZE);
    private final Command[] commands = new Command[QUEUE_SIZE];
    private final SubmissionList.Sender sink = c -> {};
    private final PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private EmbeddedChannel channel;
    private HostQueue queue;
    private final byte[] capsuleResp = new byte[24];

    /** CID allocation, old or new. */
    interface Cids {
        int take();

        void giveBack(int cid);
    }

    /** The allocator the initiator used up to fc53a18 (CommandQueue): a semaphore bounds, a Treiber stack hands out. */
    static final class OldCids implements Cids {
        private final int[] next;
        private final AtomicLong head = new AtomicLong();
        private final Semaphore permits;

        OldCids(int size) {
            next = new int[size];
            for (int i = size - 1; i >= 0; i--) {
                push(i);
            }
            permits = new Semaphore(size);
        }

        @Override
        public int take() {
            if (!permits.tryAcquire()) {
                return -1;
            }
            while (true) {
                long h = head.get();
                int top = (int) h;
                long nh = (((h >>> 32) + 1) << 32) | (next[top - 1] & 0xFFFFFFFFL);
                if (head.compareAndSet(h, nh)) {
                    return top - 1;
                }
            }
        }

        @Override
        public void giveBack(int cid) {
            push(cid);
            permits.release();
        }

        private void push(int index) {
            while (true) {
                long h = head.get();
                next[index] = (int) h;
                long nh = (((h >>> 32) + 1) << 32) | ((index + 1) & 0xFFFFFFFFL);
                if (head.compareAndSet(h, nh)) {
                    return;
                }
            }
        }
    }

    static final class NewCids implements Cids {
        private final CommandIdAllocator a;

        NewCids(int size) {
            a = new CommandIdAllocator(size);
        }

        @Override
        public int take() {
            return a.tryAcquire();
        }

        @Override
        public void giveBack(int cid) {
            a.release(cid);
        }
    }

    /**
     * The TCP host handler's hand-off up to fc53a18: claimed array, Netty's fixed MPSC queue, drain-scheduled flag.
     * The queue is JCTools' {@link MpscArrayQueue} itself, the class Netty's {@code newFixedMpscQueue} returned (a
     * shaded copy, behind Netty's internal API).
     */
    static final class OldHandOff {
        final AtomicIntegerArray claimed;
        final Queue<HostCommand> pending;
        final AtomicBoolean drainScheduled = new AtomicBoolean();

        OldHandOff(int size) {
            claimed = new AtomicIntegerArray(size);
            pending = new MpscArrayQueue<>(size);
        }
    }

    /** A reusable command: no data, completion counted. */
    static final class Command implements HostCommand {
        final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        final Cids cids;
        long completions;

        Command(int cid, Cids cids) {
            this.cids = cids;
            sqe.wrap(ByteBuffer.allocateDirect(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN), 0);
            sqe.opcode(0x18).flags(SubmissionQueueEntry.FLAGS_SGL).cid(cid);
        }

        @Override
        public SubmissionQueueEntry command() {
            return sqe;
        }

        @Override
        public ByteBuffer dataBuffer() {
            return null;
        }

        @Override
        public int dataOffset() {
            return 0;
        }

        @Override
        public int dataLength() {
            return 0;
        }

        @Override
        public void onResponse(CompletionQueueEntry response) {
            completions++;
            cids.giveBack(sqe.cid());
        }

        @Override
        public void onTransportError(Throwable cause) {
            cids.giveBack(sqe.cid());
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        cids = impl.equals("old") ? new OldCids(QUEUE_SIZE) : new NewCids(QUEUE_SIZE);
        for (int cid = 0; cid < QUEUE_SIZE; cid++) {
            commands[cid] = new Command(cid, cids);
        }
        channel = new EmbeddedChannel();
        channel.config().setAllocator(alloc);
        HostQueueOptions options = new HostQueueOptions(
                new InetSocketAddress("127.0.0.1", 4420), 1, QUEUE_SIZE, 1, false, false, Duration.ofSeconds(10));
        queue = install(channel, options);
        drainOutbound(); // the ICReq
        ByteBuffer ic = ByteBuffer.allocate(128).order(ByteOrder.LITTLE_ENDIAN);
        ic.put(0, (byte) 0x01).put(2, (byte) 128).putInt(4, 128).putInt(12, 131072);
        channel.writeInbound(alloc.directBuffer(128).writeBytes(ic.array()));
        ByteBuffer r = ByteBuffer.wrap(capsuleResp).order(ByteOrder.LITTLE_ENDIAN);
        r.put(0, (byte) 0x05).put(2, (byte) 24).putInt(4, 24).putShort(18, (short) 1);
    }

    /** The one line that differs on fc53a18: {@code NvmeTcpHostHandler.install(channel.pipeline(), options)}. */
    private static HostQueue install(EmbeddedChannel channel, HostQueueOptions options) {
        return TcpHostQueue.install(channel.pipeline(), options);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        queue.close();
        drainOutbound();
        channel.finishAndReleaseAll();
    }

    private void drainOutbound() {
        channel.runPendingTasks();
        for (Object o; (o = channel.readOutbound()) != null; ) {
            ReferenceCountUtil.release(o);
        }
    }

    @Benchmark
    public int cidTakeGiveBack() {
        int cid = cids.take();
        cids.giveBack(cid);
        return cid;
    }

    @Benchmark
    public int handOff() {
        Command c = commands[3];
        int cid = 3;
        if (impl.equals("old")) {
            OldHandOff h = oldHandOff;
            if (!h.claimed.compareAndSet(cid, 0, 1)) {
                throw new IllegalStateException();
            }
            h.pending.offer(c);
            if (h.drainScheduled.compareAndSet(false, true)) {
                // loop.execute(drainTask) would go here
            }
            // the drain task, on the queue thread
            h.drainScheduled.set(false);
            int n = 0;
            for (HostCommand x; (x = h.pending.poll()) != null; ) {
                n++;
            }
            h.claimed.set(cid, 0); // completion
            return n;
        }
        list.claim(c);
        list.offer(cid); // true: loop.execute(drainTask) would go here
        int n = list.drain(sink);
        list.release(cid); // completion
        return n;
    }

    @Benchmark
    public long tcpSubmitComplete() {
        int cid = cids.take();
        Command c = commands[cid];
        queue.submit(c);
        drainOutbound();
        ByteBuf resp = alloc.directBuffer(24).writeBytes(capsuleResp);
        resp.setShortLE(20, cid);
        channel.writeInbound(resp);
        return c.completions;
    }
}

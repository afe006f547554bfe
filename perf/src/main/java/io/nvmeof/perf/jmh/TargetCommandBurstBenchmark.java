package io.nvmeof.perf.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.FeatureId;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.wire.ConnectData;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.stats.NamespaceStats;
import io.nvmeof.transport.tcp.NvmeTcpTargetHandler;
import io.nvmeof.transport.tcp.TcpHostQueue;
import io.nvmeof.transport.tcp.TcpTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * The target side of 4 KiB reads or writes at queue depth 32 (or {@code depth}) without a network, the counterpart
 * of {@link HostWriteBurstBenchmark}: the real NVMe/TCP controller pipeline in an {@link EmbeddedChannel} in front of
 * a real {@link NvmeTarget} with a RAM namespace. One operation is one command: a socket read of 32 ({@code depth})
 * CapsuleCmds (Read: the command alone; Write: the command and its 4 KiB in the capsule, SGL 0x01, as SPDK's perf
 * and our initiator send them against a 16 KiB IOCCSZ) is decoded, each command is executed against the namespace,
 * the read's end flushes the responses (Read: C2HData header, the data, CapsuleResp, since the host left SQ flow
 * control on; Write: CapsuleResp), and the outbound messages are released as if the socket had written them. The
 * score is the target's CPU per command on its I/O thread, the part of a cell's target half that is ours and not the
 * kernel's; with {@code depth=1} every command pays the read's and the flush's costs alone, as at queue depth 1.
 *
 * <p>The queue is brought up through the real host queue ({@link TcpHostQueue}) in a second {@code EmbeddedChannel}
 * joined to the first ({@link EmbeddedLink}): ICReq/ICResp, Connect of the admin queue, CC.EN = 1, Number of Queues,
 * Connect of I/O queue 1. The commands of one burst are then captured from the host's output once, and the first
 * burst's responses go back to the host, which checks each one's status; after that the target reads the same
 * captured burst again and again (the same CIDs and LBAs, each burst answered in full before the next). Each
 * command has its own LBA, spread over the namespace, written before it is read.
 *
 * <p>Everything runs on one {@code FastThreadLocalThread}, as on an event loop (Netty's recycler pools its objects only
 * on such threads), in a fork with the recycler chunk size the target's launchers set ({@code bin/lib.sh}: a burst of
 * 32 reads recycles about a hundred objects, past Netty's default of 32, and the overflow allocates: about 6 B per
 * read in an unforked run). What it leaves out: the socket calls, the kernel's copies and the cache misses of data
 * that a real workload's random LBAs bring.
 *
 * <pre>bin/nvmeof-jmh TargetCommandBurstBenchmark
 * bin/nvmeof-jmh TargetCommandBurstBenchmark -p depth=1 -f 1 -wi 3 -i 5 -prof gc</pre>
 */
@Fork(jvmArgsAppend = {"-Dio.netty.recycler.chunkSize=256", "-Dio.netty.leakDetection.level=disabled"})
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TargetCommandBurstBenchmark {
    /** Commands per invocation: {@code COMMANDS / depth} bursts. */
    private static final int COMMANDS = 32_000;

    private static final int BLOCK = 4096;
    private static final long NAMESPACE_BYTES = 64L << 20;
    private static final String NQN = "nqn.2024-01.io.nvmeof:target-burst";
    private static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:6b5f3a54-4f10-4a9e-9a47-3c2e8b1d7f20";

    @Param({"read", "write"})
    public String op;

    /** Commands per socket read (the queue depth): 32, or 1 for what every command pays alone; a divisor of 32. */
    @Param({"32"})
    public int depth;

    private ExecutorService loop;
    private NvmeTarget target;
    private EmbeddedChannel hostAdmin;
    private EmbeddedChannel controllerAdmin;
    private EmbeddedChannel hostIo;
    private EmbeddedChannel controller;
    private TcpHostQueue adminQueue;
    private TcpHostQueue ioQueue;
    /** One socket read's worth: the CapsuleCmds of a burst, as the host wrote them. */
    private ByteBuf burst;
    /** The argument of {@code writeInbound}: one read. */
    private final Object[] read = new Object[1];
    /** Bursts the target was given, the setup's included. */
    private long bursts;

    @Setup(Level.Trial)
    public void setUp() throws InterruptedException, ExecutionException {
        if (!op.equals("read") && !op.equals("write")) {
            throw new IllegalArgumentException("op must be read or write: " + op);
        }
        if (depth < 1 || 32 % depth != 0) {
            throw new IllegalArgumentException("depth must divide 32: " + depth);
        }
        loop = Executors.newSingleThreadExecutor(new DefaultThreadFactory("target-burst"));
        loop.submit(this::setUpOnLoop).get();
    }

    private Void setUpOnLoop() throws IOException {
        target = NvmeTarget.start(new TargetConfig(
                List.of(),
                List.of(new SubsystemConfig(
                        NQN, true, List.of(), List.of(NamespaceConfig.of(1, NAMESPACE_BYTES)), null, null)),
                256L << 20,
                0));
        PortInfo port = new PortInfo(
                PortInfo.TRTYPE_TCP,
                PortInfo.ADRFAM_IPV4,
                "127.0.0.1",
                "4420",
                1,
                ListenerOptions.DEFAULT_MAX_QUEUE_SIZE,
                ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE,
                TcpTransport.SGLS,
                0,
                PortInfo.TREQ_SQFLOW_DISABLE_SUPPORTED,
                new byte[1]);
        QueueAcceptor acceptor = target.acceptorFor(port);
        ListenerOptions listener = new ListenerOptions(
                new InetSocketAddress("127.0.0.1", 4420),
                1,
                ListenerOptions.DEFAULT_MAX_QUEUE_SIZE,
                ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE,
                1,
                true);

        hostAdmin = channel();
        controllerAdmin = channel();
        NvmeTcpTargetHandler.install(controllerAdmin.pipeline(), listener, port, acceptor);
        adminQueue = TcpHostQueue.install(hostAdmin.pipeline(), hostOptions(0, 32, 0));
        adminQueue.maxInCapsuleData(TcpHostQueue.FABRICS_IN_CAPSULE_LIMIT);
        EmbeddedLink admin = new EmbeddedLink(hostAdmin, controllerAdmin);
        admin.exchange(); // ICReq, ICResp
        int cntlid = call(admin, adminQueue, connect(0, 0, 31, 0xFFFF)) & 0xFFFF;
        call(admin, adminQueue, propertySet(1, Properties.CC, ccEnabled()));
        SetupCommand queues = new SetupCommand(2, 0);
        queues.sqe().opcode(AdminOpcode.SET_FEATURES.code()).cdw(10, FeatureId.NUMBER_OF_QUEUES.code());
        call(admin, adminQueue, queues);

        hostIo = channel();
        controller = channel();
        NvmeTcpTargetHandler.install(controller.pipeline(), listener, port, acceptor);
        ioQueue = TcpHostQueue.install(hostIo.pipeline(), hostOptions(1, depth + 1, cntlid));
        ioQueue.maxInCapsuleData(ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE);
        EmbeddedLink io = new EmbeddedLink(hostIo, controller);
        io.exchange();
        call(io, ioQueue, connect(0, 1, depth, cntlid));

        long blocks = NAMESPACE_BYTES / BLOCK;
        SetupCommand[] commands = new SetupCommand[depth];
        for (int cid = 0; cid < depth; cid++) {
            commands[cid] = new SetupCommand(cid, BLOCK);
            commands[cid].sqe().nsid(1).slba(cid * 509L % blocks).nlb(0);
            commands[cid].sqe().opcode(NvmOpcode.WRITE.code());
            ByteBuffer data = commands[cid].data();
            for (int i = 0; i < BLOCK; i += 8) {
                data.putLong(i, 0x9E3779B97F4A7C15L * (cid * BLOCK + i));
            }
        }
        for (SetupCommand c : commands) {
            call(io, ioQueue, c); // every LBA written before it is read
        }
        if (op.equals("read")) {
            for (SetupCommand c : commands) {
                c.sqe().opcode(NvmOpcode.READ.code());
            }
        }
        for (SetupCommand c : commands) {
            ioQueue.submit(c);
        }
        hostIo.runPendingTasks();
        burst = PooledByteBufAllocator.DEFAULT.directBuffer();
        for (Object o; (o = hostIo.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            burst.writeBytes(b, b.readerIndex(), b.readableBytes());
            b.release();
        }
        readBurst();
        bursts++;
        io.exchange(); // the first burst's responses, checked by the host
        for (SetupCommand c : commands) {
            c.dw0();
        }
        controller.freezeTime(); // its scheduled tasks (pool trimming) need no clock read per burst
        return null;
    }

    private static EmbeddedChannel channel() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(PooledByteBufAllocator.DEFAULT);
        return ch;
    }

    private static HostQueueOptions hostOptions(int qid, int queueSize, int cntlid) {
        return new HostQueueOptions(
                new InetSocketAddress("127.0.0.1", 4420), qid, queueSize, cntlid, false, false, Duration.ofSeconds(10));
    }

    /** Connect (nvmeof-protocol.md §2.2): no Keep Alive (KATO 0), SQ flow control left on (CATTR 0). */
    private static SetupCommand connect(int cid, int qid, int sqsize, int cntlid) {
        SetupCommand c = new SetupCommand(cid, ConnectData.LENGTH);
        c.sqe().opcode(FabricsCommandType.OPCODE).fctype(FabricsCommandType.CONNECT.code());
        c.sqe().connect(0, qid, sqsize, 0, 0);
        ConnectData data = new ConnectData();
        data.wrap(c.data(), 0);
        data.hostId(UUID.nameUUIDFromBytes(HOST_NQN.getBytes(StandardCharsets.US_ASCII)))
                .cntlid(cntlid)
                .subNqn(NQN)
                .hostNqn(HOST_NQN);
        return c;
    }

    private static SetupCommand propertySet(int cid, int offset, long value) {
        SetupCommand c = new SetupCommand(cid, 0);
        c.sqe().opcode(FabricsCommandType.OPCODE).fctype(FabricsCommandType.PROPERTY_SET.code());
        c.sqe().property(Properties.SIZE_4, offset, value);
        return c;
    }

    /** CC with EN = 1, the NVM command set, 64-byte SQ and 16-byte CQ entries (nvmeof-protocol.md §2.3). */
    private static long ccEnabled() {
        return Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);
    }

    /** Submits {@code c}, runs the link until both sides are quiet, and returns the response's DW0. */
    private static int call(EmbeddedLink link, TcpHostQueue queue, SetupCommand c) {
        queue.submit(c);
        link.exchange();
        return c.dw0();
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
        long done = 0;
        for (NamespaceStats ns : target.stats().namespaces()) {
            done += op.equals("read") ? ns.io().reads() : ns.io().writes() - depth;
        }
        ioQueue.close();
        adminQueue.close();
        for (EmbeddedChannel ch : List.of(hostIo, controller, hostAdmin, controllerAdmin)) {
            ch.finishAndReleaseAll();
        }
        target.close();
        burst.release();
        if (done != bursts * depth) {
            throw new IllegalStateException("the target executed " + done + " commands of " + bursts * depth);
        }
    }

    @Benchmark
    @OperationsPerInvocation(COMMANDS)
    public long commandBurst() throws InterruptedException, ExecutionException {
        return loop.submit(this::bursts).get();
    }

    private long bursts() {
        int n = COMMANDS / depth;
        for (int i = 0; i < n; i++) {
            readBurst();
            for (Object o; (o = controller.readOutbound()) != null; ) {
                ReferenceCountUtil.release(o);
            }
        }
        bursts += n;
        return bursts;
    }

    /**
     * The target reads the burst: one socket read and its end. {@code writeInbound} runs the channel's pending tasks
     * once, after it, not at every write the target makes (EmbeddedChannel's cost, not the target's); it gets its own
     * array, since a varargs call would make one per burst.
     */
    private void readBurst() {
        read[0] = burst.retainedDuplicate();
        controller.writeInbound(read);
    }
}

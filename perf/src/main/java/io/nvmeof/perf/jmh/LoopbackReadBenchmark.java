package io.nvmeof.perf.jmh;

import io.nvmeof.core.spi.IoMode;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
 * One 4 KiB read at a time over loopback TCP, end to end in one JVM: our initiator library (callback form, one I/O
 * queue) against an in-JVM {@link NvmeTarget} on 127.0.0.1:0. The score is the round trip; {@code -prof gc} counts
 * the allocation of every thread (benchmark, initiator and target event loops) per read.
 *
 * <p>The benchmark thread waits by spinning with {@link Thread#yield()}, so on a small machine it gives the event
 * loops the core they need.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LoopbackReadBenchmark {
    static final String NQN = "nqn.2024-01.io.nvmeof:jmh";

    @Param({"epoll", "io_uring"})
    public String engine;

    @Param({"false"})
    public boolean hipri;

    @Param({"false"})
    public boolean digests;

    private NvmeTarget target;
    private Controller controller;
    private Namespace ns;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(4096);
    private final Waiter waiter = new Waiter();
    private long lba;
    private long blocks;

    /** The allocation-free completion: a volatile flag the benchmark thread spins on. */
    static final class Waiter implements IoCallback {
        volatile boolean done;
        volatile NvmeException error;

        @Override
        public void completed(Object attachment) {
            done = true;
        }

        @Override
        public void failed(NvmeException e, Object attachment) {
            error = e;
            done = true;
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        IoMode mode = new IoMode(engine, hipri);
        TargetConfig config = new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384, mode)),
                List.of(new SubsystemConfig(
                        NQN, true, List.of(), List.of(NamespaceConfig.of(1, 64L << 20)), null, null)),
                256L << 20,
                0);
        target = NvmeTarget.start(config);
        InetSocketAddress a = target.boundAddresses().get(0);
        String uri = "nvme+tcp://127.0.0.1:" + a.getPort() + "/" + NQN + "?queues=1&depth=32&engine=" + engine
                + (hipri ? "&hipri=1" : "") + (digests ? "&digest=header,data" : "");
        controller = Nvme.connect(NvmeUri.parse(uri), ConnectOptions.defaults());
        ns = controller.namespace();
        blocks = ns.blockCount();
        ByteBuffer w = ByteBuffer.allocateDirect(1 << 20);
        for (long l = 0; l < blocks; l += 256) {
            ns.write(l, 256, w); // touch every block so reads come from written memory
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        if (controller != null) {
            controller.close();
        }
        if (target != null) {
            target.close();
        }
    }

    @Benchmark
    public boolean read4k() throws NvmeException {
        Waiter w = waiter;
        w.done = false;
        lba = (lba + 7919) % blocks;
        ns.read(lba, 1, buf, w, null);
        while (!w.done) {
            Thread.yield();
        }
        if (w.error != null) {
            throw w.error;
        }
        return w.done;
    }
}

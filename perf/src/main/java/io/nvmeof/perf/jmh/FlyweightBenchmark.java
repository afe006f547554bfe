package io.nvmeof.perf.jmh;

import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** SQE and CQE flyweights: fill a Read command, read it back; set and get a completion. Must allocate nothing. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FlyweightBenchmark {
    private final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();
    private final ByteBuffer sqeHeap = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer sqeDirect = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer cqeHeap = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
    private long lba;

    @Setup
    public void setUp() {
        cqe.wrap(cqeHeap, 0);
    }

    @Benchmark
    public long sqeSetGetHeap() {
        return sqeRoundTrip(sqeHeap);
    }

    @Benchmark
    public long sqeSetGetDirect() {
        return sqeRoundTrip(sqeDirect);
    }

    private long sqeRoundTrip(ByteBuffer b) {
        long l = lba++ & 0xFFFFF;
        sqe.wrap(b, 0).opcode(0x02).cid((int) l & 127).nsid(1).slba(l).nlb(7);
        sqe.sgl().set(0x5A, 0, 4096);
        return sqe.opcode()
                + sqe.cid()
                + sqe.nsid()
                + sqe.slba()
                + sqe.nlb()
                + sqe.sgl().dataLength();
    }

    @Benchmark
    public long cqeSetGet() {
        int c = (int) (lba++ & 127);
        cqe.dw0(c).dw1(0).sqhd(c).sqid(1).cid(c).status(0);
        return cqe.dw0() + cqe.sqhd() + cqe.cid() + cqe.status();
    }
}

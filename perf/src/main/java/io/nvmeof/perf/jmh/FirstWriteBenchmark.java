package io.nvmeof.perf.jmh;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.namespace.ChunkMemory;
import io.nvmeof.target.namespace.ChunkPool;
import io.nvmeof.target.namespace.MemoryBudget;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.ByteBuffer;
import java.util.UUID;
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
 * A 128 KiB write into namespace RAM never written (the chunk is allocated by the write) against a rewrite of a chunk
 * that exists, on the target's namespace layer alone (no network): what issue 13 calls "first writes". {@code pool}
 * is the {@link ChunkPool} size: 0 allocates on the writing thread (the behaviour before the pool), 64 is the
 * target's default. The chunk a first write goes to is deallocated before each invocation (not timed), so the pool
 * has to keep up with the writes on its own thread, as it would under a sustained stream of first writes.
 *
 * <p>What it does not show: the kernel's page faults on memory the process never touched, the bulk of a first write
 * into a fresh namespace on a VM (perf/README.md, "First writes"). Here the memory a first write allocates without the
 * pool is the memory the deallocation just freed, already faulted in and hot in this core's cache, while a pooled
 * chunk was zeroed by another thread; so this measures the allocation path itself (allocate and register, or take),
 * the best case for {@code pool=0}. JMH's {@code gc.alloc.rate.norm} under-reports here (per-invocation setup);
 * ChunkPoolTest measures the writing thread's bytes directly.
 *
 * <pre>bin/nvmeof-jmh FirstWriteBenchmark</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FirstWriteBenchmark {
    private static final int CHUNK = RamNamespace.CHUNK_SIZE;
    /** Chunks written in turn by each benchmark: first writes in [0, CHUNKS), rewrites in [CHUNKS, 2 CHUNKS). */
    private static final int CHUNKS = 256;

    @Param({"64", "0"})
    public int pool;

    /** First writes per invocation of {@link #freshWrites}, each into a namespace made for that invocation. */
    static final int FRESH = 1024;

    private MemoryBudget budget;
    private ChunkMemory memory;
    private ChunkPool chunkPool;
    private RamNamespace ns;
    private ByteBuffer data;
    private int nextFresh;
    private int nextRewrite;

    @Setup(Level.Trial)
    public void setUp() {
        budget = new MemoryBudget(1L << 30);
        memory = new ChunkMemory();
        chunkPool = new ChunkPool(budget, memory, pool);
        ns = new RamNamespace(1, 2L * CHUNKS * CHUNK, 4096, UUID.randomUUID(), false, budget, memory, chunkPool);
        data = ByteBuffer.allocateDirect(CHUNK);
        for (int i = 0; i < CHUNK; i += 8) {
            data.putLong(i, 0x9E3779B97F4A7C15L * i);
        }
        for (int i = CHUNKS; i < 2 * CHUNKS; i++) {
            check(ns.write(data, 0, (long) i * CHUNK, CHUNK));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        ns.free();
        chunkPool.close();
    }

    /** Frees the chunk the next first write goes to, so that write finds it unwritten. */
    @State(Scope.Thread)
    public static class Unwritten {
        @Setup(Level.Invocation)
        public void deallocate(FirstWriteBenchmark b) {
            b.ns.zero((long) b.nextFresh * CHUNK, CHUNK, true);
        }
    }

    @Benchmark
    public int firstWrite(Unwritten unwritten) {
        int i = nextFresh;
        nextFresh = (i + 1) % CHUNKS;
        return check(ns.write(data, 0, (long) i * CHUNK, CHUNK));
    }

    /** A namespace never written, made before each invocation of {@link #freshWrites} and freed after it. */
    @State(Scope.Thread)
    public static class FreshNamespace {
        RamNamespace ns;

        @Setup(Level.Invocation)
        public void create(FirstWriteBenchmark b) {
            ns = new RamNamespace(
                    2, (long) FRESH * CHUNK, 4096, UUID.randomUUID(), false, b.budget, b.memory, b.chunkPool);
        }

        @TearDown(Level.Invocation)
        public void free() {
            ns.free();
        }
    }

    /**
     * {@value #FRESH} sequential first writes into a namespace whose memory was never written: each allocates a chunk
     * (or takes one from the pool), so the kernel's page faults for memory the process just mapped are in it. The
     * score is per write.
     */
    @Benchmark
    @OperationsPerInvocation(FRESH)
    public int freshWrites(FreshNamespace fresh) {
        int s = 0;
        for (int i = 0; i < FRESH; i++) {
            s += check(fresh.ns.write(data, 0, (long) i * CHUNK, CHUNK));
        }
        return s;
    }

    @Benchmark
    public int rewrite() {
        int i = nextRewrite;
        nextRewrite = (i + 1) % CHUNKS;
        return check(ns.write(data, 0, (long) (CHUNKS + i) * CHUNK, CHUNK));
    }

    private static int check(int status) {
        if (status != Status.SUCCESS) {
            throw new IllegalStateException("write failed: status " + status);
        }
        return status;
    }
}

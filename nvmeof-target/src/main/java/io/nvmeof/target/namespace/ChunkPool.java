package io.nvmeof.target.namespace;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Namespace chunks made ahead of the writes that need them, so a first write into unwritten namespace RAM does not
 * allocate, fault in and register memory on a queue thread. One per target, shared by its RAM namespaces.
 *
 * <p>A refill thread ({@code nvmeof-chunk-pool}) keeps up to {@link #capacity()} full-size ({@link
 * RamNamespace#CHUNK_SIZE}) chunks ready. Each is reserved from the {@link MemoryBudget} first, so the pool counts
 * against the budget and stops growing when the budget is spent (it retries once a second, when namespaces may have
 * freed memory). How the memory is made is the {@link SlabMode} ({@code -Dio.nvmeof.chunkSlabs}): by default 16
 * chunks at a time from one 2 MiB {@link Slab}, backed in one system call, with a transparent huge page (one fault and
 * one zeroing pass; 7-11 GiB/s against 1-2 GiB/s for small pages where the host keeps the memory backed) except in a
 * VM whose balloon reports free pages to the host, where huge pages were measured slower (perf/README.md); or one
 * chunk at a time with {@link ByteBuffer#allocateDirect}, which zeroes it and so makes the kernel fault in every
 * page on the refill thread. Either way each chunk is handed to {@link ChunkMemory} before it is queued, so every
 * memory observer (an RDMA listener's memory registration) knows it before any transport can see it. With slabs the
 * capacity is a whole number of slabs and the pool refills a slab at a time once a slab's worth is missing; a pool
 * smaller than one slab makes chunks one at a time.
 *
 * <p>{@link #take()} runs on queue threads: a lock-free poll of a {@link ConcurrentLinkedQueue} and an atomic count,
 * no allocation; it wakes the refill thread once the pool is down to its low-water mark (half, or a slab less than
 * full). An empty pool returns null and the caller allocates the chunk itself, as without a pool. Making chunks one at
 * a time, the refill thread then stands back, so the pool fills in the pauses between bursts of first writes rather
 * than competing with a saturating stream of them (measured slower); making slabs it keeps going, since a slab is one
 * system call rather than 32 faults per chunk taken in turns with the writers' own (a design choice, not measured
 * apart). Only the refill thread adds chunks, reserving
 * their budget under this object's monitor, so {@link #namespaceBytes} reads a consistent pair.
 *
 * <p>Ownership: a queued chunk holds its two initial references (the table's and the taker's, see {@link Chunk}) and
 * its budget bytes (its share of its slab's); whoever polls it owns them. {@link #close} frees the chunks still
 * queued (a slab is unmapped once all its chunks are freed, whether taken or not).
 */
public final class ChunkPool implements AutoCloseable {
    private static final Logger LOG = System.getLogger("io.nvmeof.target.memory");
    /** Default number of chunks kept ready: 64 (8 MiB), overridable with {@code -Dio.nvmeof.chunkPool=N} (0: no pool). */
    public static final int DEFAULT_CHUNKS = 64;

    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long the refill thread stands back after writers found the pool empty (see {@link #refillLoop}). */
    private static final long BACK_OFF_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final MemoryBudget budget;
    private final ChunkMemory memory;
    private final int capacity;
    /** The mode in effect (OFF where the native library is missing or the pool is smaller than a slab). */
    private final SlabMode mode;
    /** {@link #take} wakes the refill thread when the pool is down to this many chunks. */
    private final int lowWater;

    private final ConcurrentLinkedQueue<Chunk> ready = new ConcurrentLinkedQueue<>();
    private final AtomicInteger count = new AtomicInteger();
    /** Budget bytes held by queued chunks (and by one being made); raised under the monitor only. */
    private final AtomicLong pooledBytes = new AtomicLong();

    private final AtomicLong taken = new AtomicLong();
    private final AtomicLong missed = new AtomicLong();
    /** Set by a taker that wants a refill, cleared by the refill thread before it looks at the count. */
    private final AtomicBoolean wanted = new AtomicBoolean();

    private volatile Thread refiller;
    private volatile boolean closed;

    /**
     * A pool of at most {@code chunks} chunks (capped at a sixteenth of the budget, so a small budget is not all held
     * ahead); nothing is allocated before {@link #start}.
     */
    public ChunkPool(MemoryBudget budget, ChunkMemory memory, int chunks) {
        this(budget, memory, chunks, SlabMode.configured());
    }

    /**
     * As {@link #ChunkPool(MemoryBudget, ChunkMemory, int)}, making its memory as {@code mode} says (falling back to
     * {@link SlabMode#OFF} without the native library or below one slab); the capacity is then rounded down to whole
     * slabs.
     */
    ChunkPool(MemoryBudget budget, ChunkMemory memory, int chunks, SlabMode mode) {
        if (chunks < 0) {
            throw new IllegalArgumentException("chunk pool size must not be negative: " + chunks);
        }
        this.budget = budget;
        this.memory = memory;
        int c = (int) Math.min(chunks, budget.limit() / 16 / RamNamespace.CHUNK_SIZE);
        SlabMode m = c >= Slab.CHUNKS ? SlabMemory.effective(mode) : SlabMode.OFF;
        this.mode = m;
        this.capacity = m == SlabMode.OFF ? c : c / Slab.CHUNKS * Slab.CHUNKS;
        this.lowWater = m == SlabMode.OFF ? capacity / 2 : capacity - Slab.CHUNKS;
    }

    /** The pool size from {@code -Dio.nvmeof.chunkPool} (chunks), default {@link #DEFAULT_CHUNKS}. */
    public static int configuredChunks() {
        return Math.max(0, Integer.getInteger("io.nvmeof.chunkPool", DEFAULT_CHUNKS));
    }

    /** Starts the refill thread (once; cold path, e.g. when the first RAM namespace is created). */
    public synchronized void start() {
        if (refiller != null || closed || capacity == 0) {
            return;
        }
        LOG.log(Level.INFO, "chunk pool: " + capacity + " chunks ready ahead, " + SlabMemory.describe(mode));
        Thread t = new Thread(this::refillLoop, "nvmeof-chunk-pool");
        t.setDaemon(true);
        refiller = t;
        t.start();
    }

    /**
     * A ready full-size chunk with two references and its budget bytes, or null if the pool is empty (the caller then
     * allocates as without a pool). Lock-free and allocation-free.
     */
    Chunk take() {
        Chunk c = ready.poll();
        if (c == null) {
            missed.incrementAndGet(); // the refill thread was woken when the pool went down to half
            return null;
        }
        pooledBytes.addAndGet(-RamNamespace.CHUNK_SIZE);
        taken.incrementAndGet();
        if (count.decrementAndGet() <= lowWater) {
            wake();
        }
        return c;
    }

    /**
     * Reserves {@code bytes} from the budget for a chunk the caller allocates itself, freeing queued chunks to make
     * room if the budget is spent (a namespace's shorter last chunk, or a race with the refill); false if even that
     * does not make room. Takes the monitor so the refill thread cannot take the room first: a cold path, only when
     * the budget is spent.
     */
    synchronized boolean reserveByShedding(int bytes) {
        while (shed()) {
            if (budget.tryReserveQuietly(bytes)) {
                return true;
            }
        }
        return false;
    }

    /** Frees one queued chunk (its memory and budget bytes); false if none is queued. */
    private boolean shed() {
        Chunk c = ready.poll();
        if (c == null) {
            return false;
        }
        count.decrementAndGet();
        pooledBytes.addAndGet(-RamNamespace.CHUNK_SIZE);
        c.release();
        c.release(); // both initial references: the memory and its budget bytes go back
        return true;
    }

    private void wake() {
        Thread t = refiller;
        if (t != null && !wanted.get() && wanted.compareAndSet(false, true)) {
            LockSupport.unpark(t);
        }
    }

    private void refillLoop() {
        while (!closed) {
            wanted.set(false);
            boolean spent = false;
            long seenMisses = missed.get();
            while (!closed && capacity - count.get() >= (mode == SlabMode.OFF ? 1 : Slab.CHUNKS)) {
                long m = missed.get();
                if (m != seenMisses && mode == SlabMode.OFF) {
                    // Writers found the pool empty and allocate on their own threads: first writes are coming faster
                    // than this thread makes chunks. Making more now would only take the cores (and the kernel's
                    // page-fault locks of this process) from those writers, measured slower than letting them be
                    // (perf/README.md, "First writes"), so stand back until they pause.
                    seenMisses = m;
                    LockSupport.parkNanos(this, BACK_OFF_NANOS);
                    continue;
                }
                if (!(mode == SlabMode.OFF ? makeChunk() : makeSlab())) {
                    spent = true;
                    break;
                }
                // A chunk costs tens of µs of page faults (a huge page slab a few hundred); on a target pinned to one
                // core this thread shares it with the queue threads, so it steps aside after each one rather than
                // holding the core for a whole batch.
                Thread.yield();
            }
            if (closed) {
                break;
            }
            if (!wanted.get()) {
                if (spent) {
                    LockSupport.parkNanos(this, RETRY_NANOS);
                } else {
                    LockSupport.park(this);
                }
            }
        }
        drain();
    }

    /**
     * Reserves, allocates (zeroed, so faulted in), registers and queues one chunk; false if the budget or direct
     * memory is spent.
     */
    private boolean makeChunk() {
        int bytes = RamNamespace.CHUNK_SIZE;
        if (!reserve(bytes)) {
            return false;
        }
        ByteBuffer b;
        try {
            b = ByteBuffer.allocateDirect(bytes);
        } catch (OutOfMemoryError e) {
            unreserve(bytes);
            return false;
        }
        offer(new Chunk(b, budget, memory)); // tells the observers, before anyone can take it
        return true;
    }

    /** Reserves, maps and backs one slab, registers and queues its chunks; false if the budget or the system refuses. */
    private boolean makeSlab() {
        if (!reserve(Slab.SIZE)) {
            return false;
        }
        Slab slab = Slab.map(budget, mode == SlabMode.HUGE);
        if (slab == null) {
            unreserve(Slab.SIZE);
            return false;
        }
        for (int i = 0; i < Slab.CHUNKS; i++) {
            offer(new Chunk(slab, i, memory)); // tells the observers, before anyone can take it
        }
        return true;
    }

    private synchronized boolean reserve(int bytes) {
        if (closed || !budget.tryReserveQuietly(bytes)) {
            return false;
        }
        pooledBytes.addAndGet(bytes);
        return true;
    }

    private synchronized void unreserve(int bytes) {
        pooledBytes.addAndGet(-bytes);
        budget.release(bytes);
    }

    private void offer(Chunk c) {
        ready.offer(c);
        count.incrementAndGet();
    }

    private void drain() {
        while (shed()) {
            // freed
        }
    }

    /**
     * Namespace RAM in use: the budget's bytes less those the pool holds. Exact whenever no take is under way (reads
     * the pair under the monitor the refill thread reserves under).
     */
    public synchronized long namespaceBytes() {
        return budget.used() - pooledBytes.get();
    }

    /** Chunks ready now. */
    public int available() {
        return count.get();
    }

    /** How the pool makes its memory (the mode in effect, after the fallbacks). */
    SlabMode mode() {
        return mode;
    }

    /** Chunks the pool keeps ready at most. */
    public int capacity() {
        return capacity;
    }

    /** First writes served from the pool since the start. */
    public long taken() {
        return taken.get();
    }

    /** First writes that found the pool empty (and allocated on the queue thread) since the start. */
    public long missed() {
        return missed.get();
    }

    /** Stops the refill thread and frees the chunks still queued (their bytes go back to the budget). Idempotent. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            t = refiller;
        }
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                LOG.log(Level.WARNING, "chunk pool refill thread did not stop in 10 s");
            }
        }
        drain();
    }
}

package io.nvmeof.target.namespace;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * A namespace whose blocks live in off-heap RAM allocated only where written (nvmeof-protocol.md §3.2.2, §4), or,
 * when created with {@link #fileBacked}, in a memory-mapped file ({@link MappedFile}) that keeps them across restarts.
 *
 * <p>The capacity is cut into {@link #CHUNK_SIZE} chunks found through a two-level {@link ChunkTable}: a top array of
 * leaves, each leaf an array of {@link ChunkTable#LEAF_SIZE} chunk slots, both created lazily and published by
 * compare-and-set. A 1 TiB namespace therefore costs one 16 KiB top array at creation and memory only for the chunks
 * written. Queues on different threads use the table without a lock; chunk lifetime is handled by reference counts
 * ({@link Chunk}).
 * Unwritten blocks read as zeroes from one shared read-only zero buffer.
 *
 * <p>A file-backed namespace uses the same table: its chunks are slices of the file's shared mapping, created on first
 * use by a write or by a read of a range the file holds data in (a read must see what an earlier run wrote), and not
 * counted in the {@link MemoryBudget} (the page cache is the kernel's to write back and reclaim). Deallocation punches
 * holes in the file where the native helper is available (see {@link #zero}); {@link #force} makes a range durable.
 *
 * <p>A first write into a chunk takes a ready chunk from the target's {@link ChunkPool} (allocated, faulted in and
 * registered ahead on the pool's thread) when there is one; only when the pool is empty (or for a namespace's last,
 * shorter chunk) does it allocate the memory itself. Nothing else on the I/O methods allocates, except the first write
 * into a leaf's 512 MiB range (the leaf array). They return NVMe status values instead of throwing.
 *
 * <p>A namespace made by {@link #preallocated} has all its memory from the start, as SPDK's malloc bdev does: there
 * are no first writes, and a deallocation zeroes the blocks in place instead of freeing their memory.
 */
public final class RamNamespace {
    /** Chunk size: 128 KiB, large enough that a 128 KiB host I/O touches at most two chunks. */
    public static final int CHUNK_SHIFT = 17;

    public static final int CHUNK_SIZE = 1 << CHUNK_SHIFT;
    static final long CHUNK_MASK = CHUNK_SIZE - 1;
    /** Chunk indexes are ints: 2^31 chunks of 128 KiB = 256 TiB. */
    public static final long MAX_SIZE_BYTES = (long) Integer.MAX_VALUE << CHUNK_SHIFT;

    private final int nsid;
    private final int blockSize;
    private final int blockShift;
    private final long sizeBytes;
    private final long blocks;
    private final UUID uuid;
    private final boolean readOnly;
    private final ChunkMemory memory;
    private final ByteBuffer zeroes;
    private final DataRelease zeroRelease;
    /** The namespace's chunks, owned here and freed with it. */
    private final ChunkTable table;
    /** The file behind the namespace, or null in RAM (the table slices it and closes it when freed). */
    private final MappedFile file;
    /** Whether all the memory was allocated at creation and is kept until the namespace is freed. */
    private final boolean preallocated;
    /** Write Zeroes and deallocation over {@link #table} and {@link #file}. */
    private final RangeZeroing zeroing;

    private final NamespaceCounters counters = new NamespaceCounters();

    /**
     * @param uuid the namespace UUID, also its NGUID (nvmeof-protocol.md §3.2.3); must be unique across subsystems
     */
    public RamNamespace(int nsid, long sizeBytes, int blockSize, UUID uuid, boolean readOnly, MemoryBudget budget) {
        this(nsid, sizeBytes, blockSize, uuid, readOnly, budget, new ChunkMemory());
    }

    /**
     * @param memory the target's chunk memory: its observers (e.g. an RDMA listener registering memory) are told about
     *               every chunk of this namespace
     */
    public RamNamespace(
            int nsid,
            long sizeBytes,
            int blockSize,
            UUID uuid,
            boolean readOnly,
            MemoryBudget budget,
            ChunkMemory memory) {
        this(nsid, sizeBytes, blockSize, uuid, readOnly, budget, memory, null, null, false);
    }

    /**
     * @param pool chunks made ahead for first writes (from the same {@code budget} and {@code memory}), or null to
     *             allocate on the writing thread; started here if it was not yet
     */
    public RamNamespace(
            int nsid,
            long sizeBytes,
            int blockSize,
            UUID uuid,
            boolean readOnly,
            MemoryBudget budget,
            ChunkMemory memory,
            ChunkPool pool) {
        this(nsid, sizeBytes, blockSize, uuid, readOnly, budget, memory, pool, null, false);
        if (pool != null && !readOnly) {
            pool.start();
        }
    }

    /**
     * A namespace kept in the file {@code path}: created sparse at {@code sizeBytes} if missing, used as it is if it
     * has exactly that size (nothing is read or mapped until used, so opening is instant at any size).
     *
     * @throws IllegalArgumentException if the file has another size or cannot be opened (the message says which)
     */
    public static RamNamespace fileBacked(
            int nsid,
            long sizeBytes,
            int blockSize,
            UUID uuid,
            boolean readOnly,
            MemoryBudget budget,
            ChunkMemory memory,
            java.nio.file.Path path) {
        checkGeometry(sizeBytes, blockSize);
        return new RamNamespace(
                nsid,
                sizeBytes,
                blockSize,
                uuid,
                readOnly,
                budget,
                memory,
                null,
                MappedFile.open(path, sizeBytes),
                false);
    }

    /**
     * A RAM namespace whose memory is all reserved in {@code budget}, allocated, faulted in and made known to the
     * {@code memory} observers now, on the calling thread, and kept until {@link #free}: writes never wait for memory,
     * and one never fails for want of budget. This takes time in proportion to the size; memory never touched before may
     * take longer (in a VM the host backs each page on its first touch: 1.5-2 s per GiB measured, up to 6 s per GiB
     * for huge pages where the balloon reports free pages). Where the native helper is loaded, each 2 MiB of the
     * namespace (all but a shorter tail) is one {@link Slab} with a transparent huge page ({@code
     * -Dio.nvmeof.chunkSlabs}: {@code auto} and {@code huge}; {@code small} without the huge page advice; {@code off}
     * chunk by chunk), so that random I/O over the namespace misses the TLB less ({@link
     * SlabMemory#forPreallocation}).
     *
     * @throws IllegalArgumentException if the budget has less than {@code sizeBytes} left (nothing is kept then)
     */
    public static RamNamespace preallocated(
            int nsid,
            long sizeBytes,
            int blockSize,
            UUID uuid,
            boolean readOnly,
            MemoryBudget budget,
            ChunkMemory memory) {
        checkGeometry(sizeBytes, blockSize);
        if (budget.limit() - budget.used() < sizeBytes) {
            throw notEnoughBudget(nsid, sizeBytes, budget);
        }
        SlabMode mode = SlabMemory.forPreallocation(SlabMode.configured());
        RamNamespace ns =
                new RamNamespace(nsid, sizeBytes, blockSize, uuid, readOnly, budget, memory, null, null, true);
        if (!ns.table.allocateAll(mode)) {
            ns.free();
            throw notEnoughBudget(nsid, sizeBytes, budget);
        }
        return ns;
    }

    private static IllegalArgumentException notEnoughBudget(int nsid, long sizeBytes, MemoryBudget budget) {
        return new IllegalArgumentException("cannot preallocate namespace " + nsid + ": it needs " + sizeBytes
                + " bytes and the memory budget has " + Math.max(0, budget.limit() - budget.used()) + " of "
                + budget.limit() + " left");
    }

    private RamNamespace(
            int nsid,
            long sizeBytes,
            int blockSize,
            UUID uuid,
            boolean readOnly,
            MemoryBudget budget,
            ChunkMemory memory,
            ChunkPool pool,
            MappedFile file,
            boolean preallocated) {
        checkGeometry(sizeBytes, blockSize);
        this.file = file;
        this.preallocated = preallocated;
        this.nsid = nsid;
        this.blockSize = blockSize;
        this.blockShift = Integer.numberOfTrailingZeros(blockSize);
        this.sizeBytes = sizeBytes;
        this.blocks = sizeBytes >>> blockShift;
        this.uuid = uuid;
        this.readOnly = readOnly;
        this.memory = memory;
        this.zeroes = memory.zeroBuffer();
        this.zeroRelease = memory.zeroRelease();
        this.table = new ChunkTable(sizeBytes, budget, memory, pool, file);
        this.zeroing = new RangeZeroing(table, file, preallocated);
    }

    private static void checkGeometry(long sizeBytes, int blockSize) {
        if (blockSize != 512 && blockSize != 4096) {
            throw new IllegalArgumentException("block size must be 512 or 4096: " + blockSize);
        }
        if (sizeBytes <= 0 || sizeBytes % blockSize != 0) {
            throw new IllegalArgumentException(
                    "namespace size must be a positive multiple of " + blockSize + ": " + sizeBytes);
        }
        if (sizeBytes > MAX_SIZE_BYTES) {
            throw new IllegalArgumentException("a namespace has at most " + MAX_SIZE_BYTES + " bytes: " + sizeBytes);
        }
    }

    /** The name-based (version 3) UUID for a namespace without a configured one: stable and unique per subsystem and NSID. */
    public static UUID derivedUuid(String subsystemNqn, int nsid) {
        return UUID.nameUUIDFromBytes((subsystemNqn + "#nsid=" + nsid).getBytes(StandardCharsets.UTF_8));
    }

    // ---- I/O (called on queue threads) ----

    /**
     * Appends {@code length} bytes at byte {@code offset} to the request's controller-to-host data, zero copy: written
     * chunks are handed over retained, with the chunk as its own release; unwritten ranges come from the zero buffer.
     */
    public void read(TargetRequest request, long offset, int length) {
        counters.read(length);
        while (length > 0) {
            int index = (int) (offset >>> CHUNK_SHIFT);
            int within = (int) (offset & CHUNK_MASK);
            int n = Math.min(length, CHUNK_SIZE - within);
            Chunk c = table.acquire(index);
            if (c == null) {
                request.addData(zeroes, 0, n, zeroRelease);
            } else {
                request.addData(c.buffer, within, n, c);
            }
            offset += n;
            length -= n;
        }
    }

    /**
     * Names the namespace memory for {@code length} bytes at byte {@code offset} as the destinations of the request's
     * write data ({@link TargetRequest#addDestination}, when {@link TargetRequest#directDataPlacement()}), allocating
     * chunks within the budget: the transport then moves the data straight into namespace memory (RDMA Read), with no
     * copy. Each chunk goes retained, with the chunk as its release. Returns Capacity Exceeded if the budget is spent
     * (chunks already named are released by the transport when the command completes). Call {@link #wrote} once the
     * data is in.
     */
    public int placeWrite(TargetRequest request, long offset, int length) {
        while (length > 0) {
            int index = (int) (offset >>> CHUNK_SHIFT);
            int within = (int) (offset & CHUNK_MASK);
            int n = Math.min(length, CHUNK_SIZE - within);
            Chunk c = table.acquireForWrite(index);
            if (c == null) {
                return noChunkStatus();
            }
            request.addDestination(c.buffer, within, n, c);
            offset += n;
            length -= n;
        }
        return Status.SUCCESS;
    }

    /** Counts a write whose data a transport placed directly ({@link #placeWrite}). */
    public void wrote(int length) {
        counters.written(length);
    }

    /** The chunk memory this namespace allocates from (its observers see every chunk). */
    public ChunkMemory chunkMemory() {
        return memory;
    }

    /** Copies {@code length} bytes of {@code source} at {@code sourceOffset} to byte {@code offset}; Capacity Exceeded if the budget is spent. */
    public int write(ByteBuffer source, int sourceOffset, long offset, int length) {
        int total = length;
        while (length > 0) {
            int index = (int) (offset >>> CHUNK_SHIFT);
            int within = (int) (offset & CHUNK_MASK);
            int n = Math.min(length, CHUNK_SIZE - within);
            Chunk c = table.acquireForWrite(index);
            if (c == null) {
                return noChunkStatus();
            }
            try {
                BlockCopy.copy(c.buffer, within, source, sourceOffset, n);
            } finally {
                c.release();
            }
            offset += n;
            sourceOffset += n;
            length -= n;
        }
        counters.written(total);
        return Status.SUCCESS;
    }

    /** Copies {@code length} bytes at byte {@code offset} into {@code target} at {@code targetOffset} (Copy's source ranges); unwritten ranges read as zeroes. */
    public void readInto(ByteBuffer target, int targetOffset, long offset, int length) {
        counters.read(length);
        while (length > 0) {
            int index = (int) (offset >>> CHUNK_SHIFT);
            int within = (int) (offset & CHUNK_MASK);
            int n = Math.min(length, CHUNK_SIZE - within);
            Chunk c = table.acquire(index);
            if (c == null) {
                target.put(targetOffset, RangeZeroing.ZEROES, 0, n);
            } else {
                try {
                    target.put(targetOffset, c.buffer, within, n);
                } finally {
                    c.release();
                }
            }
            offset += n;
            targetOffset += n;
            length -= n;
        }
    }

    /** Compares {@code length} bytes of {@code source} with the blocks at byte {@code offset} (nvmeof-protocol.md §4.2). */
    public int compare(ByteBuffer source, int sourceOffset, long offset, int length) {
        counters.read(length);
        boolean sameOrder = source.order() == ByteOrder.LITTLE_ENDIAN;
        while (length > 0) {
            int index = (int) (offset >>> CHUNK_SHIFT);
            int within = (int) (offset & CHUNK_MASK);
            int n = Math.min(length, CHUNK_SIZE - within);
            Chunk c = table.acquire(index);
            boolean equal;
            if (c == null) {
                equal = BlockCompare.isZero(source, sourceOffset, n);
            } else {
                try {
                    equal = sameOrder
                            ? BlockCompare.equalLongs(c.buffer, within, source, sourceOffset, n)
                            : BlockCompare.equalBytes(c.buffer, within, source, sourceOffset, n);
                } finally {
                    c.release();
                }
            }
            if (!equal) {
                return Status.COMPARE_FAILURE;
            }
            offset += n;
            sourceOffset += n;
            length -= n;
        }
        return Status.SUCCESS;
    }

    /**
     * Makes {@code length} bytes at byte {@code offset} read as zeroes (Write Zeroes, nvmeof-protocol.md §4.4; Dataset Management
     * deallocate, §4.5). With {@code deallocate}, chunks covered whole are freed (their memory goes back to the budget)
     * and partly covered ones are zeroed in place; without it, existing chunks are zeroed in place. Unwritten chunks
     * already read as zero, so this never allocates.
     *
     * <p>A file-backed namespace writes the zeroes into the file through its mapping, except that with {@code
     * deallocate}, where the file can punch holes ({@link #deallocates()}), the whole file system blocks of the range
     * are punched out of the file ({@code fallocate(PUNCH_HOLE)}: they read as zeroes and take no space) and only the
     * partial blocks at its edges are zeroed through the mapping. That is a blocking system call: queue threads hand a
     * file's deallocation to a worker ({@code NamespaceFlusher}).
     *
     * @throws java.io.UncheckedIOException if the file system refuses to punch a hole (the range may be partly zeroed)
     */
    public void zero(long offset, long length, boolean deallocate) {
        zeroing.zero(offset, length, deallocate);
    }

    /** Frees every chunk (namespace removed or target closed); reads still held by transports keep their chunks alive. */
    public void free() {
        table.free();
    }

    /** The chunk at {@code index}, retained, or null if that range reads as zeroes (see {@link ChunkTable#acquire}). */
    Chunk acquire(int index) {
        return table.acquire(index);
    }

    /** Why a write found no chunk: the namespace was removed meanwhile, or the memory budget is spent. */
    private int noChunkStatus() {
        return table.closed() ? Status.dnr(Status.INVALID_NAMESPACE) : Status.CAPACITY_EXCEEDED;
    }

    // ---- facts ----

    public int nsid() {
        return nsid;
    }

    public int blockSize() {
        return blockSize;
    }

    /** log2 of the block size: LBADS in the LBA format (nvmeof-protocol.md §3.2.2). */
    public int blockShift() {
        return blockShift;
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    /** NSZE: the capacity in logical blocks. */
    public long blocks() {
        return blocks;
    }

    public UUID uuid() {
        return uuid;
    }

    public boolean readOnly() {
        return readOnly;
    }

    /** The file the namespace lives in, or null for a RAM namespace. */
    public java.nio.file.Path file() {
        return file == null ? null : file.path();
    }

    /**
     * Whether Dataset Management deallocate frees blocks (and deallocated blocks read as zeroes, DLFEAT 001b): true in
     * RAM, and for a file where holes can be punched ({@link FileHoles}: the native helper loaded and the file system
     * supports it). Elsewhere writing zeroes instead would fill the sparse file when a host discards a whole device
     * (mkfs does), so there deallocate is the advisory no-op the NVM Command Set allows (the AD attribute says the
     * controller "may" deallocate: NVM Command Set 1.0c, Dataset Management) and Identify Namespace reports the value
     * read as not reported (000b).
     */
    public boolean deallocates() {
        return file == null || file.punchesHoles();
    }

    /** The bytes the backing file occupies on its device (what {@code du} shows); -1 in RAM or where unknown. */
    public long fileAllocatedBytes() {
        return file == null ? -1 : file.allocatedBytes();
    }

    /**
     * Makes {@code length} bytes at byte {@code offset} durable ({@code msync}; Flush of everything with {@code length}
     * &lt; 0) and waits. Nothing to do in RAM. Blocks the calling thread for the device's write time: queue threads
     * hand it to a flusher ({@code NamespaceFlusher}).
     */
    public void force(long offset, long length) {
        if (file == null) {
            return;
        }
        if (length < 0) {
            file.forceAll();
        } else {
            file.force(offset, length);
        }
    }

    /** Whether the namespace's memory was all allocated at creation ({@link #preallocated}). */
    public boolean preallocated() {
        return preallocated;
    }

    /** Whether {@link #force} has anything to do (the namespace is in a file). */
    public boolean persistent() {
        return file != null;
    }

    /** Bytes of RAM this namespace holds now (chunks written and not deallocated; 0 for a file-backed namespace). */
    public long allocatedBytes() {
        return file != null ? 0 : table.chunkBytesHeld();
    }

    /**
     * Of {@link #allocatedBytes}, those in 2 MiB slabs advised for transparent huge pages (cold path: it visits every
     * chunk; for the log and diagnostics). Whether the kernel backs them with huge pages is its choice: {@code
     * AnonHugePages} in {@code /proc/PID/smaps} shows it.
     */
    public long hugePageBytes() {
        return file != null ? 0 : table.hugePageBytes();
    }

    /** Its SMART / Health counters. */
    public NamespaceCounters counters() {
        return counters;
    }

    @Override
    public String toString() {
        return "namespace " + nsid + " (" + sizeBytes + " bytes, " + blockSize + "-byte blocks"
                + (readOnly ? ", read-only" : "") + ")";
    }
}

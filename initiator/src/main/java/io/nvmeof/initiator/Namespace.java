package io.nvmeof.initiator;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * An active namespace of a {@link Controller}: block I/O by logical block address (nvmeof-protocol.md §4).
 *
 * <p>Every I/O command exists in up to four forms:
 * <ul>
 *   <li>blocking, e.g. {@link #read(long, int, ByteBuffer)}: returns when the command completed, throws
 *       {@link NvmeException};</li>
 *   <li>future, e.g. {@link #readAsync}: a {@link CompletableFuture} completed on the queue's thread (dependent stages
 *       without {@code Async} run there too; do not block in them);</li>
 *   <li>callback, e.g. {@link #read(long, int, ByteBuffer, IoCallback, Object)}: nothing is allocated for a
 *       successful command; waits for a free command slot like the forms above;</li>
 *   <li>try-callback, e.g. {@link #tryRead}: returns {@code false} at once when every command slot of the queue is in
 *       use, and never waits. Use it from inside callbacks.</li>
 * </ul>
 *
 * <p><b>Buffers.</b> A command transfers {@code blocks × blockSize()} bytes starting at the buffer's position; the
 * buffer must have that many bytes remaining. Position and limit are never changed, so one buffer can be reused
 * without flipping. Direct buffers go to the transport without a copy; heap buffers work too. The buffer belongs to
 * the command until it completes: do not touch it before.
 *
 * <p><b>Queues and back-pressure.</b> Each calling thread uses one I/O queue (chosen by thread ID); a view from
 * {@link #onQueue(int)} sends all its commands to one queue instead, whichever thread submits them. A queue has
 * {@link Controller#ioQueueDepth()} command slots; when all are in flight, the waiting forms wait up to the command
 * timeout for one (then fail with {@link NvmeTimeoutException}), and the {@code try} forms return {@code false}.
 *
 * <p><b>Errors.</b> An error status fails the command with {@link NvmeStatusException}; no answer within the command
 * timeout with {@link NvmeTimeoutException} (and the controller fails, see {@link Controller}); a lost connection
 * with {@link NvmeTransportException}. Arguments out of range throw {@link IllegalArgumentException} at once.
 */
public final class Namespace implements BlockNamespace {
    /** NLB is a 16-bit 0's based field (nvmeof-protocol.md §4.2): at most 65536 blocks per command. */
    public static final int MAX_NLB = 65536;
    /**
     * The most bytes one command moves, whatever MDTS says: Linux nvmet-tcp refuses an SGL longer than
     * NVMET_TCP_MAXH2CDATA (4 MiB) with Data SGL Length Invalid even when it reports MDTS 0 ("no limit"), nvmeof-protocol.md §5.12.
     * Found by the LinuxNvmetIT interop test.
     */
    public static final int MAX_TRANSFER_BYTES = 4 << 20;
    /** Dataset Management takes at most 256 ranges (nvmeof-protocol.md §4.5). */
    public static final int MAX_DSM_RANGES = 256;

    private final Controller controller;
    private final int nsid;
    /** The namespace the controller keeps: this one, or for a view from {@link #onQueue} the one it was made from. */
    private final Namespace origin;
    /** The I/O queue (0-based) every command of this view goes to; -1: the calling thread's queue. */
    private final int queueIndex;

    private volatile NamespaceIdentity identity;
    private volatile boolean active = true;
    private volatile BlockDevice blockDevice;

    Namespace(Controller controller, NamespaceIdentity identity) {
        this.controller = controller;
        this.nsid = identity.nsid();
        this.identity = identity;
        this.origin = this;
        this.queueIndex = -1;
    }

    private Namespace(Namespace origin, int queueIndex) {
        this.controller = origin.controller;
        this.nsid = origin.nsid;
        this.identity = null; // read from origin
        this.origin = origin;
        this.queueIndex = queueIndex;
    }

    void update(NamespaceIdentity id) {
        this.identity = id;
    }

    void deactivate() {
        active = false;
    }

    /**
     * A view of this namespace whose I/O commands all go to I/O queue {@code index} (0-based, below
     * {@link Controller#ioQueueCount()}) of the controller, from whichever thread they are submitted, instead of the
     * calling thread's queue. It shares this namespace's identity and state; completions run on that queue's thread.
     * For spreading a workload over every queue of a controller from fewer threads (the perf tool's
     * {@code --nr_io_queues}), or keeping a callback chain on one queue.
     */
    public Namespace onQueue(int index) {
        int n = controller.ioQueueCount();
        if (index < 0 || index >= n) {
            throw new IllegalArgumentException("I/O queue index must be 0.." + (n - 1) + ": " + index);
        }
        return new Namespace(origin, index);
    }

    // ---- identity ----

    public Controller controller() {
        return controller;
    }

    @Override
    public int nsid() {
        return nsid;
    }

    /** Identify Namespace, decoded. */
    @Override
    public NamespaceIdentity identity() {
        return origin.identity;
    }

    /** Size in bytes. */
    @Override
    public long sizeBytes() {
        return origin.identity.sizeBytes();
    }

    /** Logical block size in bytes. */
    @Override
    public int blockSize() {
        return origin.identity.blockSize();
    }

    /** Number of logical blocks (NSZE). */
    @Override
    public long blockCount() {
        return origin.identity.nsze();
    }

    /** Whether the namespace is write protected (NSATTR bit 0). */
    @Override
    public boolean readOnly() {
        return origin.identity.readOnly();
    }

    /** NGUID as hex, or null. */
    public String nguid() {
        return origin.identity.nguid();
    }

    /** EUI64 as hex, or null. */
    public String eui64() {
        return origin.identity.eui64();
    }

    /** The namespace UUID, or null if the controller gives none. */
    public UUID uuid() {
        return origin.identity.uuid();
    }

    /** The controller's per-command timeout. */
    @Override
    public java.time.Duration commandTimeout() {
        return controller.commandTimeout();
    }

    /** False once the namespace went away or the controller was closed. */
    @Override
    public boolean isActive() {
        return origin.active && controller.isOpen();
    }

    /**
     * The most blocks one read, write or compare may move: the NLB limit (nvmeof-protocol.md §4.2), MDTS (nvmeof-protocol.md §3.2.1) and
     * {@link #MAX_TRANSFER_BYTES}.
     */
    @Override
    public int maxBlocksPerCommand() {
        int mdts = controller.identity().mdts();
        long bytes = MAX_TRANSFER_BYTES;
        if (mdts != 0 && mdts < 20) {
            // MDTS is a power of two of the minimum page size, 4 KiB since CAP.MPSMIN is 0 (nvmeof-protocol.md §3.2.1).
            bytes = Math.min(bytes, 4096L << mdts);
        }
        return (int) Math.max(1, Math.min(MAX_NLB, bytes / blockSize()));
    }

    /**
     * A buffer for {@code blocks} blocks of I/O data: {@link Controller#allocateBuffer} (over NVMe/RDMA, commands
     * using it or slices of it move their data with no copy on the host).
     */
    @Override
    public ByteBuffer allocateBuffer(int blocks) throws NvmeException {
        if (blocks <= 0 || (long) blocks * blockSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("blocks must be 1.." + Integer.MAX_VALUE / blockSize() + ": " + blocks);
        }
        return controller.allocateBuffer(blocks * blockSize());
    }

    /** A byte-addressed view of this namespace. */
    @Override
    public BlockDevice blockDevice() {
        BlockDevice d = blockDevice;
        if (d == null) {
            synchronized (this) {
                d = blockDevice;
                if (d == null) {
                    d = BlockDevice.of(this);
                    blockDevice = d;
                }
            }
        }
        return d;
    }

    /** The reservation commands on this namespace (Register, Acquire, Release, Report; NVMe Base 2.0 §8.19). */
    public Reservations reservations() {
        return new Reservations(this);
    }

    // ---- Read (0x02) ----

    /** Reads {@code blocks} blocks from {@code lba} into {@code dst} and waits. */
    @Override
    public void read(long lba, int blocks, ByteBuffer dst) throws NvmeException {
        controller.awaitIo(readAsync(lba, blocks, dst));
    }

    @Override
    public void read(long lba, int blocks, ByteBuffer dst, IoCallback callback, Object attachment) {
        io(true, NvmOpcode.READ.code(), lba, blocks, dst, true, callback, attachment);
    }

    @Override
    public boolean tryRead(long lba, int blocks, ByteBuffer dst, IoCallback callback, Object attachment) {
        return io(false, NvmOpcode.READ.code(), lba, blocks, dst, true, callback, attachment);
    }

    // ---- Write (0x01) ----

    /** Writes {@code blocks} blocks from {@code src} at {@code lba} and waits. */
    @Override
    public void write(long lba, int blocks, ByteBuffer src) throws NvmeException {
        controller.awaitIo(writeAsync(lba, blocks, src));
    }

    @Override
    public void write(long lba, int blocks, ByteBuffer src, IoCallback callback, Object attachment) {
        io(true, NvmOpcode.WRITE.code(), lba, blocks, src, false, callback, attachment);
    }

    @Override
    public boolean tryWrite(long lba, int blocks, ByteBuffer src, IoCallback callback, Object attachment) {
        return io(false, NvmOpcode.WRITE.code(), lba, blocks, src, false, callback, attachment);
    }

    // ---- Compare (0x05) ----

    /**
     * Compares the blocks at {@code lba} with {@code expected} and waits. A mismatch throws
     * {@link NvmeStatusException} with Compare Failure (SCT 2, SC 0x85, nvmeof-protocol.md §4.2).
     */
    @Override
    public void compare(long lba, int blocks, ByteBuffer expected) throws NvmeException {
        controller.awaitIo(compareAsync(lba, blocks, expected));
    }

    @Override
    public void compare(long lba, int blocks, ByteBuffer expected, IoCallback callback, Object attachment) {
        io(true, NvmOpcode.COMPARE.code(), lba, blocks, expected, false, callback, attachment);
    }

    @Override
    public boolean tryCompare(long lba, int blocks, ByteBuffer expected, IoCallback callback, Object attachment) {
        return io(false, NvmOpcode.COMPARE.code(), lba, blocks, expected, false, callback, attachment);
    }

    // ---- Flush (0x00) ----

    /** Makes completed writes durable (Flush, nvmeof-protocol.md §4.3) and waits. */
    @Override
    public void flush() throws NvmeException {
        controller.awaitIo(flushAsync());
    }

    @Override
    public void flush(IoCallback callback, Object attachment) {
        submit(true, NvmOpcode.FLUSH.code(), 0, 0, 0, 0, null, 0, callback, attachment);
    }

    @Override
    public boolean tryFlush(IoCallback callback, Object attachment) {
        return submit(false, NvmOpcode.FLUSH.code(), 0, 0, 0, 0, null, 0, callback, attachment);
    }

    // ---- Write Zeroes (0x08) ----

    /** Zeroes {@code blocks} blocks (1..65536) from {@code lba} without sending data (Write Zeroes, nvmeof-protocol.md §4.4) and waits. */
    @Override
    public void writeZeroes(long lba, int blocks) throws NvmeException {
        controller.awaitIo(writeZeroesAsync(lba, blocks));
    }

    @Override
    public void writeZeroes(long lba, int blocks, IoCallback callback, Object attachment) {
        checkLba(lba, blocks, MAX_NLB);
        submit(true, NvmOpcode.WRITE_ZEROES.code(), lba, blocks - 1, 0, 0, null, 0, callback, attachment);
    }

    // ---- Dataset Management: deallocate (0x09) ----

    /**
     * Deallocates (trims) up to 256 ranges (Dataset Management with AD, nvmeof-protocol.md §4.5) and waits. Deallocated blocks read as
     * zeroes when {@link NamespaceIdentity#dlfeat()} says so.
     */
    @Override
    public void deallocate(LbaRange... ranges) throws NvmeException {
        controller.awaitIo(deallocateAsync(List.of(ranges)));
    }

    @Override
    public CompletableFuture<Void> deallocateAsync(List<LbaRange> ranges) {
        if (ranges.isEmpty() || ranges.size() > MAX_DSM_RANGES) {
            throw new IllegalArgumentException("deallocate takes 1.." + MAX_DSM_RANGES + " ranges: " + ranges.size());
        }
        // 16-byte ranges: context attributes 0, NLB (a count, not 0's based), SLBA (nvmeof-protocol.md §4.5). Cold
        // path: allocates.
        ByteBuffer data = ByteBuffer.allocateDirect(16 * ranges.size()).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < ranges.size(); i++) {
            LbaRange r = ranges.get(i);
            if (Long.compareUnsigned(r.lba() + r.blocks(), blockCount()) > 0) {
                throw new IllegalArgumentException(
                        "range " + r + " goes beyond the namespace (" + blockCount() + " blocks)");
            }
            data.putInt(16 * i + 4, (int) r.blocks());
            data.putLong(16 * i + 8, r.lba());
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        // CDW10 NR (0's based), CDW11 bit 2 AD (nvmeof-protocol.md §4.5).
        submit(
                true,
                NvmOpcode.DATASET_MANAGEMENT.code(),
                0,
                0,
                ranges.size() - 1,
                0x4,
                data,
                data.capacity(),
                FutureCallback.INSTANCE,
                f);
        return f;
    }

    // ---- the path every command takes ----

    private boolean io(
            boolean wait,
            int opcode,
            long lba,
            int blocks,
            ByteBuffer buf,
            boolean toHost,
            IoCallback callback,
            Object attachment) {
        int max = maxBlocksPerCommand();
        checkLba(lba, blocks, max);
        if (buf == null) {
            throw new IllegalArgumentException("no buffer");
        }
        long len = (long) blocks * blockSize();
        if (buf.remaining() < len) {
            throw new IllegalArgumentException(blocks + " block(s) of " + blockSize() + " bytes need " + len
                    + " bytes but the buffer has " + buf.remaining() + " remaining");
        }
        if (toHost && buf.isReadOnly()) {
            throw new IllegalArgumentException("cannot read into a read-only buffer");
        }
        return submit(wait, opcode, lba, blocks - 1, 0, 0, buf, (int) len, callback, attachment);
    }

    private void checkLba(long lba, int blocks, int max) {
        if (blocks < 1 || blocks > max) {
            throw new IllegalArgumentException("blocks must be 1.." + max + " per command: " + blocks);
        }
        if (lba < 0) {
            throw new IllegalArgumentException("lba must not be negative: " + lba);
        }
    }

    /**
     * Fills and sends one I/O command. For commands with an LBA, {@code nlb0} is NLB (0's based) and {@code lba}
     * SLBA (CDW10–12, nvmeof-protocol.md §4.2); otherwise {@code cdw10}/{@code cdw11} are written as given. Allocation-free.
     */
    private boolean submit(
            boolean wait,
            int opcode,
            long lba,
            int nlb0,
            int cdw10,
            int cdw11,
            ByteBuffer buf,
            int len,
            IoCallback callback,
            Object attachment) {
        if (callback == null) {
            throw new IllegalArgumentException("no callback");
        }
        NvmeException dead = controller.teardown().unusable();
        if (dead == null && !origin.active) {
            dead = new NvmeException("namespace " + nsid + " is no longer active");
        }
        if (dead != null) {
            callback.failed(dead, attachment);
            return true;
        }
        CommandQueue q = queueIndex < 0 ? controller.ioQueue() : controller.ioQueue(queueIndex);
        CommandSlot slot;
        if (wait) {
            try {
                slot = q.acquire(controller.timeoutNanos());
            } catch (NvmeException e) {
                callback.failed(e, attachment);
                return true;
            }
        } else {
            slot = q.tryAcquire();
            if (slot == null) {
                return false;
            }
        }
        SubmissionQueueEntry e = slot.prepare();
        e.opcode(opcode).nsid(nsid);
        if (opcode == NvmOpcode.DATASET_MANAGEMENT.code() || opcode == NvmOpcode.FLUSH.code()) {
            e.cdw(10, cdw10).cdw(11, cdw11);
        } else {
            e.slba(lba).cdw(12, nlb0 & 0xFFFF);
        }
        slot.submit(buf, buf == null ? 0 : buf.position(), len, controller.timeoutNanos(), callback, attachment);
        return true;
    }

    @Override
    public String toString() {
        NamespaceIdentity id = origin.identity;
        return "namespace " + nsid + " (" + id.nsze() + " blocks of " + id.blockSize() + " bytes"
                + (id.readOnly() ? ", read-only" : "") + ")";
    }
}

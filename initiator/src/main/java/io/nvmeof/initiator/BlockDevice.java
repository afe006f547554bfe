package io.nvmeof.initiator;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;

/**
 * A byte-addressed view of a {@link BlockNamespace} (a {@link Namespace} or a multipath namespace), like a {@code FileChannel} with positional reads and writes: any
 * offset, any length.
 *
 * <p><b>Cost.</b> The aligned middle of a transfer goes straight from or to your buffer, split into commands of at
 * most 1 MiB (and {@link Namespace#maxBlocksPerCommand()}) that run concurrently. A partial block at either end costs
 * one extra block read; for a write that partial block is a <em>read-modify-write</em>: read the whole block, patch
 * it, write it back (two round trips and a temporary block buffer). Align offsets and lengths to
 * {@link #blockSize()} to avoid it.
 *
 * <p><b>Concurrency contract.</b> Every read-modify-write holds a lock for its block (striped over 1024 locks), so
 * concurrent unaligned writes that share a block never lose each other's bytes. Aligned block writes take no lock: a
 * concurrent aligned write of the <em>same</em> block as an unaligned write may be overwritten by the old contents
 * the read-modify-write read (NVMe gives overlapping concurrent writes no order either). Do not mix the two on one
 * block concurrently, or serialise them yourself.
 *
 * <p>The blocking and future forms return the number of bytes transferred and advance the buffer's position by it
 * when the transfer completed. Do not call the waiting forms from an {@link IoCallback} or from a dependent stage
 * running on a queue thread. Thread-safe.
 */
public final class BlockDevice {
    private static final int STRIPES = 1024;
    private static final int MAX_BYTES_PER_COMMAND = 1 << 20;

    private final BlockNamespace namespace;
    private final Semaphore[] locks = new Semaphore[STRIPES];

    /** A block device over {@code namespace}; {@link BlockNamespace#blockDevice()} keeps one per namespace. */
    public static BlockDevice of(BlockNamespace namespace) {
        return new BlockDevice(java.util.Objects.requireNonNull(namespace));
    }

    private BlockDevice(BlockNamespace namespace) {
        this.namespace = namespace;
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new Semaphore(1);
        }
    }

    public BlockNamespace namespace() {
        return namespace;
    }

    /** Size in bytes. */
    public long size() {
        return namespace.sizeBytes();
    }

    public int blockSize() {
        return namespace.blockSize();
    }

    /** Reads {@code dst.remaining()} bytes at {@code offset}; returns that count and advances the position. */
    public int read(long offset, ByteBuffer dst) throws NvmeException {
        return await(readAsync(offset, dst));
    }

    /** Writes {@code src.remaining()} bytes at {@code offset}; returns that count and advances the position. */
    public int write(long offset, ByteBuffer src) throws NvmeException {
        return await(writeAsync(offset, src));
    }

    /**
     * Waits as the namespace's own blocking forms do: on one controller past the command timeout while it reconnects
     * ({@code Controller.awaitIo}); on a multipath namespace up to its {@link BlockNamespace#commandTimeout()}.
     */
    private <T> T await(CompletableFuture<T> f) throws NvmeException {
        if (namespace instanceof Namespace ns) {
            return ns.controller().awaitIo(f);
        }
        return Controller.await(f, namespace.commandTimeout().toNanos());
    }

    /** Flushes the namespace (nvmeof-protocol.md §4.3). */
    public void flush() throws NvmeException {
        namespace.flush();
    }

    public CompletableFuture<Void> flushAsync() {
        return namespace.flushAsync();
    }

    /** {@link #read(long, ByteBuffer)} without waiting. */
    public CompletableFuture<Integer> readAsync(long offset, ByteBuffer dst) {
        int len = dst.remaining();
        checkRange(offset, len);
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("cannot read into a read-only buffer");
        }
        if (len == 0) {
            return CompletableFuture.completedFuture(0);
        }
        int bs = blockSize();
        int base = dst.position();
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        long pos = offset;
        long end = offset + len;
        while (pos < end) {
            long lba = pos / bs;
            int inBlock = (int) (pos % bs);
            int bufAt = base + (int) (pos - offset);
            if (inBlock != 0 || end - pos < bs) {
                // Partial block: read it whole into a temporary buffer and copy the part asked for.
                int n = (int) Math.min(bs - inBlock, end - pos);
                ByteBuffer tmp = ByteBuffer.allocateDirect(bs).order(ByteOrder.LITTLE_ENDIAN);
                parts.add(namespace.readAsync(lba, 1, tmp).thenRun(() -> dst.put(bufAt, tmp, inBlock, n)));
                pos += n;
            } else {
                int blocks = alignedBlocks(pos, end);
                parts.add(namespace.readAsync(lba, blocks, dst.slice(bufAt, blocks * bs)));
                pos += (long) blocks * bs;
            }
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
                .thenApply(v -> {
                    dst.position(base + len);
                    return len;
                });
    }

    /** {@link #write(long, ByteBuffer)} without waiting (it may wait for a block lock or a command slot). */
    public CompletableFuture<Integer> writeAsync(long offset, ByteBuffer src) {
        int len = src.remaining();
        checkRange(offset, len);
        if (namespace.readOnly()) {
            throw new IllegalArgumentException("namespace " + namespace.nsid() + " is read-only");
        }
        if (len == 0) {
            return CompletableFuture.completedFuture(0);
        }
        int bs = blockSize();
        int base = src.position();
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        long pos = offset;
        long end = offset + len;
        while (pos < end) {
            long lba = pos / bs;
            int inBlock = (int) (pos % bs);
            int bufAt = base + (int) (pos - offset);
            if (inBlock != 0 || end - pos < bs) {
                int n = (int) Math.min(bs - inBlock, end - pos);
                parts.add(readModifyWrite(lba, inBlock, src, bufAt, n));
                pos += n;
            } else {
                int blocks = alignedBlocks(pos, end);
                parts.add(namespace.writeAsync(lba, blocks, src.slice(bufAt, blocks * bs)));
                pos += (long) blocks * bs;
            }
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
                .thenApply(v -> {
                    src.position(base + len);
                    return len;
                });
    }

    /** Whole blocks from {@code pos} (aligned) towards {@code end}, at most one command's worth. */
    private int alignedBlocks(long pos, long end) {
        int bs = blockSize();
        long whole = (end - pos) / bs;
        int max = Math.min(namespace.maxBlocksPerCommand(), Math.max(1, MAX_BYTES_PER_COMMAND / bs));
        return (int) Math.min(whole, max);
    }

    /**
     * Read block {@code lba}, patch {@code n} bytes at {@code inBlock} from {@code src[bufAt..]}, write it back, all
     * under the block's stripe lock. The lock is taken on the calling thread and released when the write completes
     * (a semaphore, so any thread may release it). The write is issued from the common pool, never from a queue thread.
     */
    private CompletableFuture<Void> readModifyWrite(long lba, int inBlock, ByteBuffer src, int bufAt, int n) {
        Semaphore lock = locks[stripe(lba)];
        lock.acquireUninterruptibly();
        CompletableFuture<Void> result;
        try {
            ByteBuffer block = ByteBuffer.allocateDirect(blockSize()).order(ByteOrder.LITTLE_ENDIAN);
            result = namespace.readAsync(lba, 1, block).thenComposeAsync(v -> {
                block.put(inBlock, src, bufAt, n);
                return namespace.writeAsync(lba, 1, block);
            });
        } catch (RuntimeException e) {
            lock.release();
            throw e;
        }
        return result.whenComplete((v, e) -> lock.release());
    }

    private static int stripe(long lba) {
        return (int) ((lba * 0x9E3779B97F4A7C15L) >>> 54); // Fibonacci hashing to 10 bits
    }

    private void checkRange(long offset, int len) {
        if (offset < 0 || offset + len > size() || offset + len < 0) {
            throw new IllegalArgumentException(
                    "bytes " + offset + ".." + (offset + len) + " are outside the device (" + size() + " bytes)");
        }
    }

    @Override
    public String toString() {
        return "block device over " + namespace;
    }
}

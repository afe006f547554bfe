package io.nvmeof.initiator;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Block I/O on one NVMe namespace, however it is reached: one controller ({@link Namespace}) or several controllers
 * of one subsystem ({@code io.nvmeof.initiator.multipath.MultipathNamespace}). Code that only reads and writes blocks
 * (the perf tool, an application's storage layer) takes this type and works with either.
 *
 * <p>The forms and rules of every command (blocking, future, allocation-free callback, try-callback that never
 * waits; buffers; back-pressure; errors) are those described on {@link Namespace}.
 */
public interface BlockNamespace {
    /** The namespace ID. */
    int nsid();

    /** Identify Namespace, decoded (on a multipath namespace: as the path in use last read it). */
    NamespaceIdentity identity();

    /** Size in bytes. */
    long sizeBytes();

    /** Logical block size in bytes. */
    int blockSize();

    /** Number of logical blocks (NSZE). */
    long blockCount();

    /** Whether the namespace is write protected. */
    boolean readOnly();

    /** False once the namespace went away or was closed. */
    boolean isActive();

    /** The most blocks one read, write or compare may move. */
    int maxBlocksPerCommand();

    /**
     * How long one command may take: for a {@link Namespace} its controller's command timeout (its blocking forms
     * wait longer while the controller reconnects); for a multipath namespace the bound of its blocking forms, twice
     * the command timeout plus the no-path timeout.
     */
    Duration commandTimeout();

    /** A buffer for {@code blocks} blocks of I/O data (see {@link Namespace#allocateBuffer}). */
    ByteBuffer allocateBuffer(int blocks) throws NvmeException;

    /** A byte-addressed view of this namespace. */
    BlockDevice blockDevice();

    void read(long lba, int blocks, ByteBuffer dst) throws NvmeException;

    /** The read as a future (the callback form with {@link FutureCallback}). */
    default CompletableFuture<Void> readAsync(long lba, int blocks, ByteBuffer dst) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        read(lba, blocks, dst, FutureCallback.INSTANCE, f);
        return f;
    }

    void read(long lba, int blocks, ByteBuffer dst, IoCallback callback, Object attachment);

    boolean tryRead(long lba, int blocks, ByteBuffer dst, IoCallback callback, Object attachment);

    void write(long lba, int blocks, ByteBuffer src) throws NvmeException;

    /** The write as a future (the callback form with {@link FutureCallback}). */
    default CompletableFuture<Void> writeAsync(long lba, int blocks, ByteBuffer src) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        write(lba, blocks, src, FutureCallback.INSTANCE, f);
        return f;
    }

    void write(long lba, int blocks, ByteBuffer src, IoCallback callback, Object attachment);

    boolean tryWrite(long lba, int blocks, ByteBuffer src, IoCallback callback, Object attachment);

    void compare(long lba, int blocks, ByteBuffer expected) throws NvmeException;

    /** The compare as a future (the callback form with {@link FutureCallback}). */
    default CompletableFuture<Void> compareAsync(long lba, int blocks, ByteBuffer expected) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        compare(lba, blocks, expected, FutureCallback.INSTANCE, f);
        return f;
    }

    void compare(long lba, int blocks, ByteBuffer expected, IoCallback callback, Object attachment);

    boolean tryCompare(long lba, int blocks, ByteBuffer expected, IoCallback callback, Object attachment);

    void flush() throws NvmeException;

    /** The flush as a future (the callback form with {@link FutureCallback}). */
    default CompletableFuture<Void> flushAsync() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        flush(FutureCallback.INSTANCE, f);
        return f;
    }

    void flush(IoCallback callback, Object attachment);

    boolean tryFlush(IoCallback callback, Object attachment);

    void writeZeroes(long lba, int blocks) throws NvmeException;

    /** The Write Zeroes as a future (the callback form with {@link FutureCallback}). */
    default CompletableFuture<Void> writeZeroesAsync(long lba, int blocks) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        writeZeroes(lba, blocks, FutureCallback.INSTANCE, f);
        return f;
    }

    void writeZeroes(long lba, int blocks, IoCallback callback, Object attachment);

    void deallocate(LbaRange... ranges) throws NvmeException;

    CompletableFuture<Void> deallocateAsync(List<LbaRange> ranges);
}

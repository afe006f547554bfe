package io.nvmeof.initiator.multipath;

import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.LbaRange;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.NvmeException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One command of a {@link MultipathNamespace} while it is outstanding: what to send (so that it can be sent again on
 * another path), the caller's callback and attachment, and the path it is on. Preallocated and reused through the
 * {@link RequestDispatcher}'s free list, like a {@code CommandSlot}; it is its own {@link IoCallback} for the path's
 * {@link Namespace}, so a command that succeeds allocates nothing here.
 */
final class MultipathRequest implements IoCallback {
    static final int READ = 0;
    static final int WRITE = 1;
    static final int COMPARE = 2;
    static final int FLUSH = 3;
    static final int WRITE_ZEROES = 4;
    static final int DEALLOCATE = 5;

    final int index;
    private final RequestDispatcher dispatcher;

    int op;
    long lba;
    int blocks;
    ByteBuffer buffer;
    List<LbaRange> ranges;
    IoCallback callback;
    Object attachment;
    NamespacePath path;
    boolean countedActive;
    /** When it stops waiting for a path (System.nanoTime()); 0 until its first path error or wait. */
    long deadline;
    /** The last path error, for the message when it runs out of time. */
    NvmeException lastError;
    /** Times it was sent again after an error status that is not a path error (Linux: nvme_max_retries, 5). */
    int retries;

    MultipathRequest(RequestDispatcher dispatcher, int index) {
        this.dispatcher = dispatcher;
        this.index = index;
    }

    void set(int op, long lba, int blocks, ByteBuffer buffer, List<LbaRange> ranges, IoCallback cb, Object att) {
        this.op = op;
        this.lba = lba;
        this.blocks = blocks;
        this.buffer = buffer;
        this.ranges = ranges;
        this.callback = cb;
        this.attachment = att;
        this.path = null;
        this.deadline = 0;
        this.lastError = null;
        this.retries = 0;
    }

    void clear() {
        buffer = null;
        ranges = null;
        callback = null;
        attachment = null;
        path = null;
        lastError = null;
    }

    /**
     * Sends it on {@code ns}: {@code wait} as the waiting callback forms, else as the {@code try} forms. False only
     * when {@code !wait} and the path's queue has no free slot (then nothing was sent and no callback will come).
     */
    boolean sendOn(Namespace ns, boolean wait) {
        switch (op) {
            case READ:
                if (wait) {
                    ns.read(lba, blocks, buffer, this, null);
                    return true;
                }
                return ns.tryRead(lba, blocks, buffer, this, null);
            case WRITE:
                if (wait) {
                    ns.write(lba, blocks, buffer, this, null);
                    return true;
                }
                return ns.tryWrite(lba, blocks, buffer, this, null);
            case COMPARE:
                if (wait) {
                    ns.compare(lba, blocks, buffer, this, null);
                    return true;
                }
                return ns.tryCompare(lba, blocks, buffer, this, null);
            case FLUSH:
                if (wait) {
                    ns.flush(this, null);
                    return true;
                }
                return ns.tryFlush(this, null);
            case WRITE_ZEROES:
                ns.writeZeroes(lba, blocks, this, null);
                return true;
            case DEALLOCATE:
                // Cold path: the range list is built anew for each path.
                CompletableFuture<Void> f = ns.deallocateAsync(ranges);
                f.whenComplete((v, e) -> {
                    if (e == null) {
                        completed(null);
                    } else {
                        Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                                ? e.getCause()
                                : e;
                        failed(
                                c instanceof NvmeException ne ? ne : new NvmeException("deallocate failed: " + c, c),
                                null);
                    }
                });
                return true;
            default:
                throw new IllegalStateException("unknown operation " + op);
        }
    }

    @Override
    public void completed(Object ignored) {
        dispatcher.completed(this);
    }

    @Override
    public void failed(NvmeException error, Object ignored) {
        dispatcher.failed(this, error);
    }
}

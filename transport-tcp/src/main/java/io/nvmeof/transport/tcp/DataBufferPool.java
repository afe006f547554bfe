package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Where host-to-controller data lands: a per-connection free list of Netty pooled direct buffers in power-of-two size
 * classes from 4 KiB to 1 MiB, each with a little-endian {@link ByteBuffer} view made once when the buffer is
 * created, so {@code TargetRequest.data()} is indexed absolutely from 0 and costs nothing per I/O.
 *
 * <p>Owned by one event loop; no locks. Transfers above 1 MiB get a buffer (and view) of their own that is released
 * when the command completes: the one place where a large write still allocates two small objects per I/O.
 * {@link #close()} releases every free buffer; entries still out are released by whoever gives them back
 * afterwards.
 */
final class DataBufferPool {
    static final int MIN_SHIFT = 12;
    static final int MAX_SHIFT = 20;
    private static final int CLASSES = MAX_SHIFT - MIN_SHIFT + 1;

    /** One buffer: the Netty reference this pool owns and its cached view. */
    static final class Entry {
        final ByteBuf buf;
        final ByteBuffer view;
        final int sizeClass;

        Entry(ByteBuf buf, int sizeClass) {
            this.buf = buf;
            this.view = buf.nioBuffer(0, buf.capacity()).order(ByteOrder.LITTLE_ENDIAN);
            this.sizeClass = sizeClass;
        }
    }

    private final ByteBufAllocator alloc;
    private final Entry[][] free = new Entry[CLASSES][];
    private final int[] freeCount = new int[CLASSES];
    private int outstanding;
    private int created;
    private boolean closed;

    DataBufferPool(ByteBufAllocator alloc) {
        this.alloc = alloc;
        for (int i = 0; i < CLASSES; i++) {
            free[i] = new Entry[4];
        }
    }

    /** A buffer of at least {@code length} bytes (may throw OutOfMemoryError when direct memory runs out). */
    Entry take(int length) {
        int shift = Math.max(MIN_SHIFT, 32 - Integer.numberOfLeadingZeros(Math.max(1, length) - 1));
        Entry e;
        if (shift > MAX_SHIFT) {
            e = new Entry(alloc.directBuffer(length, length), -1);
            created++;
        } else {
            int c = shift - MIN_SHIFT;
            if (freeCount[c] > 0) {
                e = free[c][--freeCount[c]];
                free[c][freeCount[c]] = null;
            } else {
                int size = 1 << shift;
                e = new Entry(alloc.directBuffer(size, size), c);
                created++;
            }
        }
        outstanding++;
        return e;
    }

    void giveBack(Entry e) {
        outstanding--;
        if (closed || e.sizeClass < 0) {
            e.buf.release();
            return;
        }
        int c = e.sizeClass;
        if (freeCount[c] == free[c].length) {
            Entry[] bigger = new Entry[freeCount[c] * 2];
            System.arraycopy(free[c], 0, bigger, 0, freeCount[c]);
            free[c] = bigger;
        }
        free[c][freeCount[c]++] = e;
    }

    /** Releases every buffer on the free lists; later give-backs release at once. */
    void close() {
        closed = true;
        for (int c = 0; c < CLASSES; c++) {
            for (int i = 0; i < freeCount[c]; i++) {
                free[c][i].buf.release();
                free[c][i] = null;
            }
            freeCount[c] = 0;
        }
    }

    /** Buffers taken and not given back (for tests). */
    int outstanding() {
        return outstanding;
    }

    /** Buffers ever allocated (for tests: flat in steady state). */
    int created() {
        return created;
    }
}

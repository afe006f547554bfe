package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

/**
 * Where host-to-controller data lands: a per-connection free list of Netty pooled direct buffers in power-of-two size
 * classes from 4 KiB to 1 MiB, each with a little-endian {@link ByteBuffer} view made once when the buffer is
 * created, so {@code TargetRequest.data()} is indexed absolutely from 0 and costs nothing per I/O.
 *
 * <p>Owned by one event loop; no locks. Transfers above 1 MiB get a buffer (and view) of their own that is released
 * when the command completes: the one place where a large write still allocates two small objects per I/O.
 * {@link #close()} releases every free buffer; entries still out are released by whoever gives them back
 * afterwards.
 *
 * <p><b>Bounded when idle.</b> The free lists hold what the connection once had in flight (a queue that ran 128 KiB
 * writes at depth 128 would keep 16 MiB). Once the queue has drained (nothing taken) and holds more than
 * {@link #RETAIN_BYTES} (1 MiB, system property {@value #RETAIN_PROPERTY}) of free buffers, the largest go back to
 * Netty's pooled allocator, shared by every connection of the loop, until at most that much is left: at once if the
 * last trim was a second ago or more, else by one task on the connection's loop a second after it. So an idle queue
 * holds at most 1 MiB of write buffers, and a busy one re-creates at most a second's worth of trimmed buffers: never
 * an allocation per I/O in a steady state that stays below the bound, and at most a few per second above it.
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

    static final String RETAIN_PROPERTY = "io.nvmeof.tcp.retainedWriteBufferBytes";
    /** The most bytes of free write buffers a drained connection keeps. */
    static final long RETAIN_BYTES = Math.max(0L, Long.getLong(RETAIN_PROPERTY, 1L << 20));

    private static final long TRIM_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ByteBufAllocator alloc;
    /** The connection's event loop, for the delayed trim (null: trims only happen at once, e.g. in tests). */
    private final EventExecutor loop;

    private final long retainBytes;
    private final Entry[][] free = new Entry[CLASSES][];
    private final int[] freeCount = new int[CLASSES];
    private long freeBytes;
    private long lastTrim;
    private boolean trimScheduled;
    /** The delayed trim, allocated once. */
    private final Runnable trimTask = this::delayedTrim;

    private int outstanding;
    private int created;
    private int trimmed;
    private boolean closed;

    DataBufferPool(ByteBufAllocator alloc) {
        this(alloc, null, RETAIN_BYTES);
    }

    DataBufferPool(ByteBufAllocator alloc, EventExecutor loop, long retainBytes) {
        this.alloc = alloc;
        this.loop = loop;
        this.retainBytes = retainBytes;
        this.lastTrim = System.nanoTime() - TRIM_INTERVAL_NANOS;
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
                freeBytes -= e.buf.capacity();
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
        freeBytes += e.buf.capacity();
        if (outstanding == 0 && freeBytes > retainBytes) {
            trimSoon();
        }
    }

    /** The queue has drained with more than the bound on the free lists: trim now, or once a second at most. */
    private void trimSoon() {
        long now = System.nanoTime();
        if (now - lastTrim >= TRIM_INTERVAL_NANOS) {
            trim(now);
        } else if (!trimScheduled && loop != null) {
            trimScheduled = true;
            loop.schedule(trimTask, lastTrim + TRIM_INTERVAL_NANOS - now, TimeUnit.NANOSECONDS);
        }
    }

    private void delayedTrim() {
        trimScheduled = false;
        if (!closed && outstanding == 0 && freeBytes > retainBytes) {
            trim(System.nanoTime());
        }
    }

    /** Releases free buffers, largest first, until at most the bound is left. */
    private void trim(long now) {
        lastTrim = now;
        for (int c = CLASSES - 1; c >= 0 && freeBytes > retainBytes; c--) {
            while (freeCount[c] > 0 && freeBytes > retainBytes) {
                Entry e = free[c][--freeCount[c]];
                free[c][freeCount[c]] = null;
                freeBytes -= e.buf.capacity();
                e.buf.release();
                trimmed++;
            }
        }
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
        freeBytes = 0;
    }

    /** Bytes of buffers on the free lists. */
    long freeBytes() {
        return freeBytes;
    }

    /** Buffers released by trimming so far (for tests). */
    int trimmed() {
        return trimmed;
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

package io.nvmeof.transport.rdma;

import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Registered buffers in power-of-two size classes ({@value #MIN_SIZE} bytes … {@value #MAX_SIZE}), owned by one queue
 * thread. Each class is carved from one region ({@link ProtectionDomain#allocate} + one registration), so taking and
 * giving back a buffer never registers memory and never allocates: the {@link Buffer} objects are made once. A class
 * grows by another region only when it runs dry (a cold path, counted in {@link #growths()}).
 *
 * <p>The host preallocates its classes at connect ({@link #prefill}); the target grows lazily (its data mostly moves
 * straight between namespace memory and the host, so these are bounce buffers for the rest).
 */
final class RegisteredBufferPool implements AutoCloseable {
    static final int MIN_SHIFT = 12;
    static final int MIN_SIZE = 1 << MIN_SHIFT;
    static final int MAX_SHIFT = 20;
    static final int MAX_SIZE = 1 << MAX_SHIFT;
    private static final int CLASSES = MAX_SHIFT - MIN_SHIFT + 1;
    /** A class grows by regions of at least this many bytes (or one buffer, if larger). */
    private static final int GROW_BYTES = 256 * 1024;

    /** One registered buffer: {@link #view} covers exactly its {@link #capacity} bytes, little-endian, at offset 0. */
    static final class Buffer {
        final MemoryRegion region;
        /** Offset of byte 0 of this buffer in {@link #region}. */
        final int regionOffset;

        final int capacity;
        final int sizeClass;
        final ByteBuffer view;

        Buffer(MemoryRegion region, ByteBuffer regionBuffer, int regionOffset, int capacity, int sizeClass) {
            this.region = region;
            this.regionOffset = regionOffset;
            this.capacity = capacity;
            this.sizeClass = sizeClass;
            this.view = regionBuffer
                    .duplicate()
                    .position(regionOffset)
                    .limit(regionOffset + capacity)
                    .slice()
                    .order(ByteOrder.LITTLE_ENDIAN);
        }

        /** The remote address of byte {@code offset} (for keyed SGL descriptors). */
        long address(int offset) {
            return region.address() + regionOffset + offset;
        }
    }

    private final ProtectionDomain pd;
    private final int access;

    @SuppressWarnings("unchecked")
    private final ArrayDeque<Buffer>[] free = new ArrayDeque[CLASSES];

    private final List<MemoryRegion> regions = new ArrayList<>();
    private int growths;
    private boolean closed;

    RegisteredBufferPool(ProtectionDomain pd, int access) {
        this.pd = pd;
        this.access = access;
        for (int i = 0; i < CLASSES; i++) {
            free[i] = new ArrayDeque<>(64);
        }
    }

    static int sizeClass(int length) {
        if (length <= MIN_SIZE) {
            return 0;
        }
        return 32 - Integer.numberOfLeadingZeros(length - 1) - MIN_SHIFT;
    }

    /** Registers {@code count} buffers of class {@code size} up front (one region). */
    void prefill(int size, int count) throws IOException {
        int c = sizeClass(size);
        addRegion(c, count);
    }

    /** A buffer of at least {@code length} bytes ({@code length} ≤ {@value #MAX_SIZE}). */
    Buffer take(int length) {
        if (length > MAX_SIZE) {
            throw new IllegalArgumentException("at most " + MAX_SIZE + " bytes per buffer: " + length);
        }
        int c = sizeClass(length);
        Buffer b = free[c].pollFirst();
        if (b != null) {
            return b;
        }
        // Dry: a larger free buffer before a new registration.
        for (int k = c + 1; k < CLASSES; k++) {
            b = free[k].pollFirst();
            if (b != null) {
                return b;
            }
        }
        try {
            addRegion(c, Math.max(1, GROW_BYTES >>> (c + MIN_SHIFT)));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot register " + (MIN_SIZE << c) + " more bytes", e);
        }
        growths++;
        return free[c].pollFirst();
    }

    void giveBack(Buffer b) {
        if (!closed) {
            free[b.sizeClass].addFirst(b);
        }
    }

    private void addRegion(int c, int count) throws IOException {
        if (closed) {
            throw new IOException("buffer pool closed");
        }
        int size = MIN_SIZE << c;
        ByteBuffer mem = pd.allocate(size * count);
        MemoryRegion mr = pd.register(mem, access);
        regions.add(mr);
        ByteBuffer regionBuffer = mr.buffer();
        for (int i = 0; i < count; i++) {
            free[c].addLast(new Buffer(mr, regionBuffer, i * size, size, c));
        }
    }

    /** Regions registered after the start because a class ran dry. */
    int growths() {
        return growths;
    }

    int regionCount() {
        return regions.size();
    }

    /** Deregisters every region; buffers still out must not be used any more. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (MemoryRegion mr : regions) {
            try {
                mr.close();
            } catch (RuntimeException ignored) {
                // the device may be gone already
            }
        }
        regions.clear();
        for (ArrayDeque<Buffer> f : free) {
            f.clear();
        }
    }
}

package io.nvmeof.target.namespace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The file behind a file-backed namespace, memory-mapped shared ({@code MAP_SHARED}) in {@link #REGION_SIZE} regions
 * mapped on first use, so opening even a 1 TiB file maps and touches nothing.
 *
 * <p>A new file is created sparse at the namespace size (only its length is set: no block is allocated until written).
 * An existing file must have exactly the namespace size: a different size is refused with a message naming both, so a
 * typo in {@code size=} never truncates or silently grows a volume.
 *
 * <p>Why the data survives: writes go into the page cache through the shared mapping, so when the process ends in any
 * way (even {@code kill -9}) the kernel still holds them and writes them back to the file. {@link #force} ({@code
 * msync}) waits until a range is on the storage device, which is what survives a power loss.
 *
 * <p>Owned by one {@link RamNamespace}; regions are published by compare-and-set, so queue threads share it without a
 * lock. Mappings are never unmapped explicitly (a transport may still be sending from one): the garbage collector
 * unmaps a region once no chunk refers to it.
 */
final class MappedFile {
    /** Region size: 1 GiB, so a region offset is an int and a 1 TiB file is 1024 mappings. */
    static final int REGION_SHIFT = 30;

    static final long REGION_SIZE = 1L << REGION_SHIFT;
    private static final long REGION_MASK = REGION_SIZE - 1;

    private final Path path;
    private final FileChannel channel;
    private final long size;
    private final AtomicReferenceArray<MappedByteBuffer> regions;
    /** Hole punching on this file, or null where it is not available (deallocate then keeps the blocks). */
    private final FileHoles holes;

    private MappedFile(Path path, FileChannel channel, long size, FileHoles holes) {
        this.path = path;
        this.channel = channel;
        this.size = size;
        this.holes = holes;
        this.regions = new AtomicReferenceArray<>((int) ((size + REGION_MASK) >>> REGION_SHIFT));
    }

    /**
     * Opens {@code path}, creating it sparse at {@code size} bytes if it does not exist.
     *
     * @throws IllegalArgumentException if it exists with another size, is not a regular file, or cannot be opened
     */
    static MappedFile open(Path path, long size) {
        FileChannel ch = null;
        try {
            boolean created = false;
            try {
                ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            } catch (NoSuchFileException e) {
                ch = FileChannel.open(
                        path, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW);
                created = true;
            }
            if (!Files.isRegularFile(path)) {
                throw new IllegalArgumentException("namespace file " + path + " is not a regular file");
            }
            long existing = ch.size();
            if (created || existing == 0) {
                // Sparse: writing the last byte sets the length without allocating the blocks before it.
                ch.write(ByteBuffer.allocate(1), size - 1);
                ch.force(true); // the length itself survives a power loss
            } else if (existing != size) {
                throw new IllegalArgumentException("namespace file " + path + " has " + existing
                        + " bytes but the namespace is " + size
                        + " bytes: give size=" + existing + " to use it as it is (a size mismatch is never resized)");
            }
            return new MappedFile(path, ch, size, FileHoles.open(path, size));
        } catch (IOException e) {
            closeQuietly(ch);
            throw new IllegalArgumentException("cannot open namespace file " + path + ": " + e, e);
        } catch (RuntimeException e) {
            closeQuietly(ch);
            throw e;
        }
    }

    /**
     * {@code length} bytes at byte {@code offset} of the file as a shared mapping, mapping its region if needed. The
     * range must lie within one region (chunks are aligned, and a region is a whole number of chunks).
     */
    ByteBuffer slice(long offset, int length) {
        MappedByteBuffer region = region((int) (offset >>> REGION_SHIFT));
        return region.slice((int) (offset & REGION_MASK), length);
    }

    private MappedByteBuffer region(int index) {
        MappedByteBuffer r = regions.get(index);
        if (r != null) {
            return r;
        }
        long start = (long) index << REGION_SHIFT;
        try {
            r = channel.map(FileChannel.MapMode.READ_WRITE, start, Math.min(REGION_SIZE, size - start));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map " + path + " at " + start, e);
        }
        if (regions.compareAndSet(index, null, r)) {
            return r;
        }
        return regions.get(index); // another queue mapped it first; ours is unmapped by the GC
    }

    /**
     * Writes the dirty pages of {@code length} bytes at byte {@code offset} to the storage device and waits ({@code
     * msync(MS_SYNC)}). Ranges in regions never mapped have nothing dirty.
     */
    void force(long offset, long length) {
        long end = offset + length;
        while (offset < end) {
            int index = (int) (offset >>> REGION_SHIFT);
            int within = (int) (offset & REGION_MASK);
            long regionEnd = Math.min(end, ((long) index + 1) << REGION_SHIFT);
            int n = (int) (regionEnd - offset);
            MappedByteBuffer r = regions.get(index);
            if (r != null) {
                r.force(within, n);
            }
            offset = regionEnd;
        }
    }

    /** {@link #force} of the whole file. */
    void forceAll() {
        for (int i = 0; i < regions.length(); i++) {
            MappedByteBuffer r = regions.get(i);
            if (r != null) {
                r.force();
            }
        }
    }

    /** Whether {@link #punch} deallocates blocks of this file. */
    boolean punchesHoles() {
        return holes != null;
    }

    /** The unit of {@link #punch}: the file system's block size. Only valid if {@link #punchesHoles()}. */
    long holeBlockSize() {
        return holes.blockSize();
    }

    /**
     * Deallocates the file's blocks in {@code length} bytes at byte {@code offset} (multiples of {@link
     * #holeBlockSize()}): they read as zeroes through the mappings from now on and take no space. Pages of the range
     * leave the page cache, so memory registrations (which pin pages) made on them are stale: the caller drops the
     * chunks over the range. Blocks for as long as the file system takes.
     *
     * @throws UncheckedIOException if the file system refuses
     */
    void punch(long offset, long length) {
        try {
            holes.punch(offset, length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Whether the file may hold data in {@code length} bytes at byte {@code offset}: false only for a range known to be
     * a hole (never written, or punched), which reads as zeroes. Always true where hole punching is unavailable.
     */
    boolean hasData(long offset, long length) {
        return holes == null || holes.hasData(offset, length);
    }

    /** The bytes the file occupies on its device ({@code du}), or -1 where hole punching (and so stat) is unavailable. */
    long allocatedBytes() {
        return holes == null ? -1 : holes.allocatedBytes();
    }

    /** Forces everything, then closes the file (mappings stay valid until the GC unmaps them). */
    void close() {
        try {
            forceAll();
        } finally {
            closeQuietly(channel);
            if (holes != null) {
                holes.close();
            }
        }
    }

    Path path() {
        return path;
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing a file we only read its size from or failed to set up
            }
        }
    }
}

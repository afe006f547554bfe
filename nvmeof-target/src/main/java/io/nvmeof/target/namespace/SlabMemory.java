package io.nvmeof.target.namespace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The memory calls behind {@link Slab}s, in {@code libnvmeoffile.so} ({@link NativeLibrary}; src/main/native/
 * nvmeofslab.c): aligned anonymous mappings, the transparent huge page advice, backing a range in one call, giving
 * pages back and unmapping. Each returns a non-negative result or -errno.
 *
 * <p>Where the library is not loaded, {@link #effective} turns every {@link SlabMode} into {@link SlabMode#OFF}: the
 * pool then allocates chunk by chunk as before.
 */
final class SlabMemory {
    private static final Path THP_ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    private SlabMemory() {}

    /** The mode the pool can use: {@code requested}, or {@link SlabMode#OFF} if the native library is not loaded. */
    static SlabMode effective(SlabMode requested) {
        return NativeLibrary.unavailableReason() == null ? requested : SlabMode.OFF;
    }

    /** A line for the log: what {@code mode} means on this machine. */
    static String describe(SlabMode mode) {
        switch (mode) {
            case HUGE:
                return "2 MiB slabs with transparent huge pages (" + THP_ENABLED + ": " + thpSetting() + ")";
            case SMALL:
                return "2 MiB slabs of small pages (-D" + SlabMode.PROPERTY + "=small)";
            default:
                String why = NativeLibrary.unavailableReason();
                return "one allocateDirect per chunk (" + (why != null ? why : "-D" + SlabMode.PROPERTY + "=off") + ")";
        }
    }

    /** The kernel's THP setting, e.g. {@code always [madvise] never}, or why it cannot be read. */
    static String thpSetting() {
        try {
            return Files.readString(THP_ENABLED).trim();
        } catch (IOException | RuntimeException e) {
            return "not readable, no THP: " + e.getMessage();
        }
    }

    static native long map0(long bytes);

    static native int adviseHuge0(long address, long bytes);

    static native int populate0(long address, long bytes);

    static native int discard0(long address, long bytes);

    static native int unmap0(long address, long bytes);

    static native ByteBuffer wrap0(long address, long bytes);
}

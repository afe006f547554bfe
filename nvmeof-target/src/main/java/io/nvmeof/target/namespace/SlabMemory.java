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
    private static final Path VIRTIO_DEVICES = Path.of("/sys/bus/virtio/devices");
    /** VIRTIO_BALLOON_F_REPORTING: the balloon reports free pages to the host (virtio spec 5.5.3). */
    private static final int BALLOON_F_REPORTING = 5;

    private SlabMemory() {}

    /**
     * The mode the pool can use: {@code requested}, with {@link SlabMode#AUTO} resolved ({@link #freePageReporting});
     * {@link SlabMode#OFF} if the native library is not loaded.
     */
    static SlabMode effective(SlabMode requested) {
        if (NativeLibrary.unavailableReason() != null) {
            return SlabMode.OFF;
        }
        if (requested == SlabMode.AUTO) {
            return freePageReporting() ? SlabMode.SMALL : SlabMode.HUGE;
        }
        return requested;
    }

    /**
     * The mode a preallocated namespace ({@link RamNamespace#preallocated}) makes its memory in: as {@link #effective},
     * except that {@link SlabMode#AUTO} is {@link SlabMode#HUGE} on every machine. The reason {@code auto} avoids huge
     * pages where the balloon reports free pages (their first touch waits for the host) does not apply there: all the
     * memory is touched when the namespace is created, off the I/O path, and from then on every I/O gains from the
     * smaller page table (one TLB entry per 2 MiB instead of 512; perf/README.md measures the gain).
     */
    static SlabMode forPreallocation(SlabMode requested) {
        return effective(requested == SlabMode.AUTO ? SlabMode.HUGE : requested);
    }

    /**
     * Whether this machine is a virtual machine whose virtio balloon reports free pages to the host: a bound {@code
     * virtio_balloon} device with feature bit {@value #BALLOON_F_REPORTING} set in its sysfs {@code features} (one
     * character per feature bit).
     */
    static boolean freePageReporting() {
        try (var devices = Files.list(VIRTIO_DEVICES)) {
            return devices.anyMatch(d -> {
                try {
                    Path driver = d.resolve("driver").toRealPath();
                    String features = Files.readString(d.resolve("features")).trim();
                    return driver.getFileName().toString().equals("virtio_balloon")
                            && features.length() > BALLOON_F_REPORTING
                            && features.charAt(BALLOON_F_REPORTING) == '1';
                } catch (IOException | RuntimeException e) {
                    return false;
                }
            });
        } catch (IOException | RuntimeException e) {
            return false; // no virtio bus: not such a VM
        }
    }

    /** A line for the log: what {@code mode} means on this machine. */
    static String describe(SlabMode mode) {
        switch (mode) {
            case HUGE:
                return "2 MiB slabs with transparent huge pages (" + THP_ENABLED + ": " + thpSetting() + ")";
            case SMALL:
                return "2 MiB slabs of small pages"
                        + (freePageReporting()
                                ? " (this VM's balloon reports free pages to the host: huge pages are slow to back here)"
                                : "");
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

package io.nvmeof.target.namespace;

import java.util.Locale;

/**
 * How the {@link ChunkPool} gets namespace RAM, set with {@code -Dio.nvmeof.chunkSlabs=auto|huge|small|off}.
 *
 * <ul>
 *   <li>{@link #AUTO} (default): {@link #HUGE}, except in a virtual machine whose balloon device reports free pages to
 *       the host (virtio-balloon with {@code VIRTIO_BALLOON_F_REPORTING}, feature bit 5), where {@link #SMALL}: there
 *       the guest hands free 2 MiB blocks back to the host, so a huge page is memory the host must back again on the
 *       first touch, measured 5–40× slower than small pages (perf/README.md);
 *   <li>{@link #HUGE}: 2 MiB {@link Slab}s of anonymous memory advised for transparent huge pages
 *       ({@code madvise(MADV_HUGEPAGE)}) and backed in one call ({@code MADV_POPULATE_WRITE}), so one huge page fault
 *       (one zeroing pass) backs 16 chunks;
 *   <li>{@link #SMALL}: the same slabs without the huge page advice (512 small-page faults per slab, still in one call);
 *   <li>{@link #OFF}: chunk by chunk with {@link java.nio.ByteBuffer#allocateDirect} (32 faults and a zeroing pass per
 *       chunk), the behaviour before slabs and the fallback where {@code libnvmeoffile.so} is not available.
 * </ul>
 */
enum SlabMode {
    AUTO,
    HUGE,
    SMALL,
    OFF;

    static final String PROPERTY = "io.nvmeof.chunkSlabs";

    /** The mode named by {@code value} (case-insensitive; null means the default, {@link #AUTO}). */
    static SlabMode parse(String value) {
        if (value == null || value.isBlank()) {
            return AUTO;
        }
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "auto":
                return AUTO;
            case "huge":
                return HUGE;
            case "small":
                return SMALL;
            case "off":
                return OFF;
            default:
                throw new IllegalArgumentException(
                        "-D" + PROPERTY + " must be auto, huge, small or off, not '" + value + "'");
        }
    }

    /** The mode from {@code -Dio.nvmeof.chunkSlabs}. */
    static SlabMode configured() {
        return parse(System.getProperty(PROPERTY));
    }
}

package io.nvmeof.target.config;

import java.nio.file.Path;
import java.util.UUID;

/**
 * One namespace: in RAM, or with {@code file} in a memory-mapped file that keeps its data across restarts.
 *
 * @param nsid      namespace ID, 1..1024 (0: the next free one in its subsystem)
 * @param sizeBytes capacity in bytes, a positive multiple of the block size
 * @param blockSize logical block size, 512 or 4096
 * @param uuid      the namespace UUID, also the source of its NGUID (null: derived from subsystem NQN and NSID, so it is
 *                  stable across restarts and unique across subsystems)
 * @param readOnly  whether writes fail with Namespace is Write Protected
 * @param anaGroup  its ANA group ID (ANAGRPID), 1..{@value #MAX_ANA_GROUP} (0: group 1)
 * @param file      the file that holds the namespace (created sparse at {@code sizeBytes} if missing; an existing file
 *                  must have exactly that size), or null for RAM only
 * @param preallocate whether a RAM namespace takes all its memory when it is created, as SPDK's malloc bdev does
 *                  (instead of 128 KiB at a time as blocks are first written); not with {@code file}
 */
public record NamespaceConfig(
        int nsid,
        long sizeBytes,
        int blockSize,
        UUID uuid,
        boolean readOnly,
        int anaGroup,
        Path file,
        boolean preallocate) {
    public static final int MAX_NSID = 1024;
    /** ANAGRPMAX: the highest ANA group ID, as nvmet. */
    public static final int MAX_ANA_GROUP = 128;

    public NamespaceConfig {
        if (nsid < 0 || nsid > MAX_NSID) {
            throw new IllegalArgumentException("nsid must be 1.." + MAX_NSID + ": " + nsid);
        }
        if (blockSize != 512 && blockSize != 4096) {
            throw new IllegalArgumentException("block size must be 512 or 4096: " + blockSize);
        }
        if (sizeBytes <= 0 || sizeBytes % blockSize != 0) {
            throw new IllegalArgumentException(
                    "namespace size must be a positive multiple of the block size (" + blockSize + "): " + sizeBytes);
        }
        if (anaGroup < 0 || anaGroup > MAX_ANA_GROUP) {
            throw new IllegalArgumentException("an ANA group ID is 1.." + MAX_ANA_GROUP + ": " + anaGroup);
        }
        if (anaGroup == 0) {
            anaGroup = 1;
        }
        if (preallocate && file != null) {
            throw new IllegalArgumentException(
                    "preallocate is for RAM namespaces: a namespace in a file lives in the page cache");
        }
    }

    /** A namespace whose memory is taken as blocks are first written. */
    public NamespaceConfig(
            int nsid, long sizeBytes, int blockSize, UUID uuid, boolean readOnly, int anaGroup, Path file) {
        this(nsid, sizeBytes, blockSize, uuid, readOnly, anaGroup, file, false);
    }

    /** A RAM namespace. */
    public NamespaceConfig(int nsid, long sizeBytes, int blockSize, UUID uuid, boolean readOnly, int anaGroup) {
        this(nsid, sizeBytes, blockSize, uuid, readOnly, anaGroup, null);
    }

    /** A namespace in ANA group 1. */
    public NamespaceConfig(int nsid, long sizeBytes, int blockSize, UUID uuid, boolean readOnly) {
        this(nsid, sizeBytes, blockSize, uuid, readOnly, 0);
    }

    public static NamespaceConfig of(int nsid, long sizeBytes) {
        return new NamespaceConfig(nsid, sizeBytes, 4096, null, false);
    }

    public NamespaceConfig withNsid(int newNsid) {
        return new NamespaceConfig(newNsid, sizeBytes, blockSize, uuid, readOnly, anaGroup, file, preallocate);
    }

    /** This namespace in ANA group {@code group}. */
    public NamespaceConfig withAnaGroup(int group) {
        return new NamespaceConfig(nsid, sizeBytes, blockSize, uuid, readOnly, group, file, preallocate);
    }

    /** This namespace kept in {@code path} (null: in RAM only). */
    public NamespaceConfig withFile(Path path) {
        return new NamespaceConfig(nsid, sizeBytes, blockSize, uuid, readOnly, anaGroup, path, preallocate);
    }
}

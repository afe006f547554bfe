package io.nvmeof.conformance;

import java.util.UUID;

/**
 * What both targets are set up with, so the same bytes mean the same thing to both: one subsystem with namespace 1 of
 * {@code blocks} × {@code blockSize} bytes (nvmet: a loop device on tmpfs, 512-byte logical blocks), any host allowed.
 */
public record Geometry(String subNqn, String hostNqn, UUID hostId, long blocks, int blockSize) {
    public static final Geometry DEFAULT = new Geometry(
            "nqn.2026-01.io.nvmeof:conformance",
            "nqn.2014-08.org.nvmexpress:uuid:c0f0c0f0-0000-4000-8000-00000000d1ff",
            UUID.fromString("c0f0c0f0-0000-4000-8000-00000000d1ff"),
            (16L << 20) / 512,
            512);

    /** Blocks at each end of the namespace where commands which change the media start. */
    public static final int EDGE_REGION_BLOCKS = 64;

    /**
     * Blocks from the namespace's start that a media-changing command can reach: it starts in the first edge region
     * and may run on for up to 256 blocks (NLB up to 255; a longer one is beyond the namespace or its data). The runner
     * zeroes all of them, and the last edge region, after a sequence that changed the media.
     */
    public static final int RESTORED_HEAD_BLOCKS = EDGE_REGION_BLOCKS + 256;

    public long bytes() {
        return blocks * blockSize;
    }
}

package io.nvmeof.initiator;

/**
 * A range of logical blocks for {@link Namespace#deallocate}: a Dataset Management range (nvmeof-protocol.md §4.5).
 *
 * @param lba    the first block
 * @param blocks the number of blocks, 1..2^32-1
 */
public record LbaRange(long lba, long blocks) {
    public LbaRange {
        if (lba < 0) {
            throw new IllegalArgumentException("lba must not be negative: " + lba);
        }
        if (blocks < 1 || blocks > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("a range has 1..4294967295 blocks: " + blocks);
        }
    }
}

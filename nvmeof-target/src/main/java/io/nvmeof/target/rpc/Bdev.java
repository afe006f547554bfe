package io.nvmeof.target.rpc;

import java.util.UUID;

/**
 * An SPDK-style block device as the RPC layer sees it: a name, a size and, once added to a subsystem, the namespace
 * it became. Both kinds are RAM namespaces of this target when added: a {@code MALLOC} bdev is one; a {@code NULL}
 * bdev is also one (it keeps what is written instead of dropping it, and its blocks cost RAM like a malloc bdev's),
 * and only it can be resized, as in SPDK. A bdev holds no memory until added; removing it from its subsystem frees
 * its blocks (SPDK's malloc bdev keeps them).
 *
 * @param claimedBy the subsystem NQN it is a namespace of, or null
 */
record Bdev(String name, Kind kind, int blockSize, long numBlocks, UUID uuid, String claimedBy, int nsid) {
    enum Kind {
        MALLOC("bdev_malloc_create", "Malloc disk"),
        NULL("bdev_null_create", "Null disk");

        final String createMethod;
        final String productName;

        Kind(String createMethod, String productName) {
            this.createMethod = createMethod;
            this.productName = productName;
        }
    }

    long sizeBytes() {
        return numBlocks * blockSize;
    }

    boolean claimed() {
        return claimedBy != null;
    }

    Bdev claim(String nqn, int id) {
        return new Bdev(name, kind, blockSize, numBlocks, uuid, nqn, id);
    }

    Bdev release() {
        return new Bdev(name, kind, blockSize, numBlocks, uuid, null, 0);
    }

    Bdev withNumBlocks(long blocks) {
        return new Bdev(name, kind, blockSize, blocks, uuid, claimedBy, nsid);
    }
}

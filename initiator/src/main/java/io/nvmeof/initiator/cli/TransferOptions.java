package io.nvmeof.initiator.cli;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.NvmeException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options {@code read} and {@code write} share, with nvme-cli's names. */
final class TransferOptions {
    @Option(
            names = {"-s", "--start-block"},
            required = true,
            paramLabel = "LBA",
            description = "First logical block")
    long startBlock;

    @Option(
            names = {"-z", "--data-size"},
            required = true,
            paramLabel = "BYTES",
            description = "Bytes to transfer; rounded up to whole blocks on the wire (a write pads with zeroes)")
    long dataSize;

    @Option(
            names = {"-d", "--data"},
            paramLabel = "FILE",
            description = "Data file (default: stdin for write, stdout for read)")
    Path data;

    @Option(
            names = {"-n", "--namespace-id"},
            paramLabel = "NSID",
            description = "Namespace ID (default: the URI's nsid, else the first active one)")
    Integer nsid;

    Namespace namespace(Controller c) throws NvmeException {
        if (nsid != null && nsid < 1) {
            throw new IllegalArgumentException("--namespace-id must be at least 1: " + nsid);
        }
        return nsid != null ? c.namespace(nsid) : c.namespace();
    }

    /** Checks the range against the namespace; returns the number of blocks. */
    long blocks(Namespace ns) {
        if (startBlock < 0) {
            throw new IllegalArgumentException("--start-block must not be negative: " + startBlock);
        }
        if (dataSize <= 0) {
            throw new IllegalArgumentException("--data-size must be positive: " + dataSize);
        }
        long blocks = (dataSize + ns.blockSize() - 1) / ns.blockSize();
        if (startBlock + blocks > ns.blockCount()) {
            throw new IllegalArgumentException(
                    "blocks " + startBlock + ".." + (startBlock + blocks - 1) + " are beyond namespace " + ns.nsid()
                            + " (" + ns.blockCount() + " blocks of " + ns.blockSize() + " bytes)");
        }
        return blocks;
    }

    /** Blocks per command: at most 1 MiB and the namespace's limit. */
    static int chunkBlocks(Namespace ns) {
        return Math.max(1, Math.min(ns.maxBlocksPerCommand(), (1 << 20) / ns.blockSize()));
    }
}

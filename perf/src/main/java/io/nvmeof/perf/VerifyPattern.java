package io.nvmeof.perf;

import io.nvmeof.initiator.BlockNamespace;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * The {@code --verify=crc32c} block format: every block of a write starts with "NVPV", the CRC32C of its bytes
 * 16.., and its LBA, then pseudo-random data unique to that write; a read is checked against it. Owned by one
 * {@link Job}; verify runs are driven by the job thread, the only one that uses it (not thread-safe).
 */
final class VerifyPattern {
    /** Bytes 0–3 of a verify block: ASCII "NVPV". */
    static final int VERIFY_MAGIC = 'N' | ('V' << 8) | ('P' << 16) | ('V' << 24);

    static final int VERIFY_HEADER = 16;

    private final int jobIndex;
    private final BlockNamespace ns;
    private final int blockSize;
    private final int blocksPerIo;
    private final CRC32C crc = new CRC32C();
    private long generation;

    VerifyPattern(int jobIndex, BlockNamespace ns, int blockSize, int blocksPerIo) {
        this.jobIndex = jobIndex;
        this.ns = ns;
        this.blockSize = blockSize;
        this.blocksPerIo = blocksPerIo;
    }

    /** Every block: "NVPV", CRC32C of bytes 16.., its LBA, then pseudo-random data unique to this write. */
    void fill(IoUnit u) {
        ByteBuffer b = u.buf;
        for (int k = 0; k < blocksPerIo; k++) {
            int base = k * blockSize;
            long x = (u.lba + k) * 0x9E3779B97F4A7C15L ^ ++generation ^ (long) jobIndex << 56;
            for (int j = VERIFY_HEADER; j < blockSize; j += 8) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                b.putLong(base + j, x);
            }
            b.putLong(base + 8, u.lba + k);
            b.putInt(base, VERIFY_MAGIC);
            b.putInt(base + 4, crcOf(u, base));
        }
    }

    private int crcOf(IoUnit u, int base) {
        ByteBuffer v = u.view;
        v.limit(base + blockSize).position(base + VERIFY_HEADER);
        crc.reset();
        crc.update(v);
        v.clear();
        return (int) crc.getValue();
    }

    /** Checks every block of a read unit; returns a message naming the first bad LBA, or null. */
    String check(IoUnit u) {
        ByteBuffer b = u.buf;
        for (int k = 0; k < blocksPerIo; k++) {
            int base = k * blockSize;
            long lba = u.lba + k;
            int magic = b.getInt(base);
            long storedLba = b.getLong(base + 8);
            if (magic != VERIFY_MAGIC || storedLba != lba) {
                return String.format(
                        "verify failed at LBA %d (byte offset %d, namespace %d): bad header: magic 0x%08x "
                                + "(expected 0x%08x \"NVPV\"), LBA field %d (expected %d)",
                        lba, lba * blockSize, ns.nsid(), magic, VERIFY_MAGIC, storedLba, lba);
            }
            int stored = b.getInt(base + 4);
            int actual = crcOf(u, base);
            if (stored != actual) {
                return String.format(
                        "verify failed at LBA %d (byte offset %d, namespace %d): crc32c mismatch: header "
                                + "0x%08x, data 0x%08x",
                        lba, lba * blockSize, ns.nsid(), stored, actual);
            }
        }
        return null;
    }

    /**
     * The order in which a verify pass writes a region of {@code units} I/O units: each unit once, in order, or for a
     * random workload shuffled with {@code rng} (Fisher–Yates).
     */
    static int[] writeOrder(int units, boolean random, SplittableRandom rng) {
        int[] order = new int[units];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        if (random) {
            for (int i = order.length - 1; i > 0; i--) {
                int j = rng.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        return order;
    }
}

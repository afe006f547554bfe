package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.namespace.RamNamespace;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Write through a transport that places data directly (RDMA zero copy): the core names namespace chunks, no data(). */
class DirectPlacementTest {
    private static final int BS = 4096;
    private final NvmeTarget target = TestTargets.standard(4L * RamNamespace.CHUNK_SIZE, 0);
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    private static DirectPlacementRequest write(int nsid, long slba, byte[] data) {
        DirectPlacementRequest w = new DirectPlacementRequest(data);
        w.sqe().opcode(0x01).nsid(nsid).slba(slba).nlb(data.length / BS - 1);
        return w;
    }

    @Test
    void writesLandInNamespaceChunksAndReadBack() {
        host.bringUp(TestTargets.NQN, 1);
        byte[] data = new byte[32 * BS];
        new Random(9).nextBytes(data);
        long slba = RamNamespace.CHUNK_SIZE / BS - 3; // crosses a chunk boundary
        DirectPlacementRequest w = write(1, slba, data);
        check(host.io(w));
        assertEquals(2, w.destinations.size(), "one destination per chunk");
        assertArrayEquals(data, check(host.io(InJvmHost.read(1, slba, 32, BS))).received());
        // the checks still come first: out of range, length mismatch, read-only namespace
        long blocks = (64L << 20) / BS;
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(write(1, blocks, new byte[BS])).status());
        assertEquals(
                Status.dnr(Status.NAMESPACE_WRITE_PROTECTED),
                host.io(write(3, 0, new byte[BS])).status());
        // budget of 4 chunks: 2 used; a write needing 3 new chunks is refused and releases what it named
        DirectPlacementRequest big = write(1, 4L * RamNamespace.CHUNK_SIZE / BS, new byte[3 * RamNamespace.CHUNK_SIZE]);
        assertEquals(Status.CAPACITY_EXCEEDED, host.io(big).status());
        assertEquals(
                4L * RamNamespace.CHUNK_SIZE, target.memoryUsedBytes(), "two new chunks stay allocated (in the table)");
    }
}

package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.namespace.RamNamespace;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** NVM I/O commands and their statuses (nvmeof-protocol.md §4) over the in-JVM transport. */
class NvmIoTest {
    private static final int BS = 4096;
    private static final int CHUNK = RamNamespace.CHUNK_SIZE;
    private NvmeTarget target = TestTargets.standard();
    private InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    private static byte[] random(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void writeReadAcrossChunkBoundariesAndUnwrittenZeroes() {
        host.bringUp(TestTargets.NQN, 2);
        // 256 KiB starting 8 KiB before a chunk boundary: touches three chunks
        long slba = CHUNK / BS - 2;
        byte[] data = random(64 * BS, 1);
        check(host.io(InJvmHost.write(1, slba, data, BS)));
        FakeRequest read = check(host.io(2, InJvmHost.read(1, slba, 64, BS)));
        assertArrayEquals(data, read.received());
        assertTrue(read.segments().isEmpty(), "released after completion");
        // a read that spans written and unwritten blocks
        FakeRequest mixed = check(host.io(InJvmHost.read(1, slba - 2, 4, BS)));
        byte[] expected = new byte[4 * BS];
        System.arraycopy(data, 0, expected, 2 * BS, 2 * BS);
        assertArrayEquals(expected, mixed.received());
        // far away: zeroes
        assertArrayEquals(
                new byte[8 * BS],
                check(host.io(InJvmHost.read(1, 10_000, 8, BS))).received());
        // write data delivered later (R2T-like) and from a direct buffer
        byte[] more = random(3 * BS, 2);
        FakeRequest w = InJvmHost.write(1, 5, more, BS);
        FakeRequest direct = new FakeRequest().send(more, true).asyncData();
        direct.sqe().opcode(0x01).nsid(1).slba(100).nlb(2);
        check(host.io(w.asyncData()));
        check(host.io(direct));
        assertArrayEquals(more, check(host.io(InJvmHost.read(1, 5, 3, BS))).received());
        assertArrayEquals(more, check(host.io(InJvmHost.read(1, 100, 3, BS))).received());
        // 512-byte namespace
        byte[] small = random(3 * 512, 3);
        check(host.io(InJvmHost.write(2, 255, small, 512)));
        assertArrayEquals(small, check(host.io(InJvmHost.read(2, 255, 3, 512))).received());
        // last block of the namespace
        long last = (64L << 20) / BS - 1;
        check(host.io(InJvmHost.write(1, last, random(BS, 4), BS)));
        check(host.io(InJvmHost.flush(1)));
        check(host.io(InJvmHost.flush(0xFFFFFFFF)));
    }

    @Test
    void errorStatuses() {
        host.bringUp(TestTargets.NQN, 1);
        long blocks = (64L << 20) / BS;
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                host.io(InJvmHost.read(9, 0, 1, BS)).status());
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                host.io(InJvmHost.read(0, 0, 1, BS)).status());
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                host.io(InJvmHost.flush(0)).status());
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(InJvmHost.read(1, blocks, 1, BS)).status());
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(InJvmHost.read(1, blocks - 1, 2, BS)).status());
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(InJvmHost.read(1, -1L, 1, BS)).status(),
                "unsigned SLBA");
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(InJvmHost.read(1, Long.MAX_VALUE, 2, BS)).status());
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(InJvmHost.write(1, blocks, new byte[BS], BS)).status());
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(InJvmHost.writeZeroes(1, blocks - 1, 2, false)).status());
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                host.io(InJvmHost.read(1, 0, 1, BS).dataLength(512)).status());
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                host.io(InJvmHost.write(1, 0, new byte[2 * BS], BS).dataLength(BS))
                        .status());
        FakeRequest wrongNlb = InJvmHost.write(1, 0, new byte[BS], BS);
        wrongNlb.sqe().nlb(1);
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID), host.io(wrongNlb).status());
        assertEquals(
                Status.dnr(Status.NAMESPACE_WRITE_PROTECTED),
                host.io(InJvmHost.write(3, 0, new byte[BS], BS)).status());
        assertEquals(
                Status.dnr(Status.NAMESPACE_WRITE_PROTECTED),
                host.io(InJvmHost.writeZeroes(3, 0, 1, true)).status());
        assertEquals(
                Status.dnr(Status.NAMESPACE_WRITE_PROTECTED),
                host.io(InJvmHost.deallocate(3, 0, 1)).status());
        check(host.io(InJvmHost.read(3, 0, 1, BS)));
        FakeRequest unknown = InJvmHost.flush(1);
        unknown.sqe().opcode(0x04); // Write Uncorrectable is not advertised
        assertEquals(Status.dnr(Status.INVALID_OPCODE), host.io(unknown).status());
        FakeRequest vendor = InJvmHost.flush(1);
        vendor.sqe().opcode(0x81);
        assertEquals(Status.dnr(Status.INVALID_OPCODE), host.io(vendor).status());
        // a failed data transfer completes with the transport's status
        assertEquals(
                Status.DATA_TRANSFER_ERROR,
                host.io(InJvmHost.write(1, 0, new byte[BS], BS).dataStatus(Status.DATA_TRANSFER_ERROR))
                        .status());
        FakeRequest shortDsm = InJvmHost.deallocate(1, 0, 1).dataLength(8);
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID), host.io(shortDsm).status());
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(InJvmHost.deallocate(1, blocks - 1, 2)).status());
        // the error log lists the last failure first
        FakeRequest log = check(host.admin(InJvmHost.getLogPage(0x01, 0, 0, 64, false)));
        assertTrue(log.dataBuffer().getLong(0) > 0);
        assertEquals(Status.dnr(Status.LBA_OUT_OF_RANGE), log.dataBuffer().getShort(12) & 0xFFFF);
        assertEquals(1, log.dataBuffer().getShort(8), "SQID");
    }

    @Test
    void writeZeroesDeallocateAndCompare() {
        host.bringUp(TestTargets.NQN, 1);
        int chunkBlocks = CHUNK / BS;
        byte[] data = random(2 * CHUNK, 5);
        // write two whole chunks, 2 * 32 blocks in 64-block commands
        check(host.io(InJvmHost.write(1, 0, Arrays.copyOf(data, CHUNK), BS)));
        check(host.io(InJvmHost.write(1, chunkBlocks, Arrays.copyOfRange(data, CHUNK, 2 * CHUNK), BS)));
        long used = target.memoryUsedBytes();
        assertEquals(2L * CHUNK, used);
        // Compare: success, then a mismatch
        check(host.io(InJvmHost.compare(1, 3, Arrays.copyOfRange(data, 3 * BS, 5 * BS), BS)));
        byte[] wrong = Arrays.copyOfRange(data, 3 * BS, 5 * BS);
        wrong[BS + 7] ^= 1;
        assertEquals(
                Status.dnr(Status.COMPARE_FAILURE),
                host.io(InJvmHost.compare(1, 3, wrong, BS)).status());
        assertEquals(
                Status.dnr(Status.COMPARE_FAILURE),
                host.io(InJvmHost.compare(1, 5000, wrong, BS)).status());
        check(host.io(InJvmHost.compare(1, 5000, new byte[2 * BS], BS)));

        // Write Zeroes without DEAC zeroes in place and keeps the memory
        check(host.io(InJvmHost.writeZeroes(1, 1, 2, false)));
        byte[] expect = Arrays.copyOf(data, 4 * BS);
        Arrays.fill(expect, BS, 3 * BS, (byte) 0);
        assertArrayEquals(expect, check(host.io(InJvmHost.read(1, 0, 4, BS))).received());
        assertEquals(used, target.memoryUsedBytes());
        // Write Zeroes with DEAC over a whole chunk frees it
        check(host.io(InJvmHost.writeZeroes(1, chunkBlocks, chunkBlocks, true)));
        assertEquals(CHUNK, target.memoryUsedBytes());
        assertArrayEquals(
                new byte[BS],
                check(host.io(InJvmHost.read(1, chunkBlocks + 3, 1, BS))).received());

        // DSM deallocate: a partial range is zeroed, a whole chunk goes back to the budget
        check(host.io(InJvmHost.writeZeroes(1, 0, 0 + 1, false))); // no-op on memory
        check(host.io(InJvmHost.deallocate(1, 4, 2)));
        assertEquals(CHUNK, target.memoryUsedBytes());
        byte[] after = check(host.io(InJvmHost.read(1, 3, 4, BS))).received();
        assertArrayEquals(Arrays.copyOfRange(data, 3 * BS, 4 * BS), Arrays.copyOf(after, BS));
        assertArrayEquals(new byte[2 * BS], Arrays.copyOfRange(after, BS, 3 * BS));
        check(host.io(InJvmHost.deallocate(1, 0, chunkBlocks, 9000, 10)));
        assertEquals(0, target.memoryUsedBytes(), "DSM deallocate returned the memory to the budget");
        assertArrayEquals(
                new byte[BS], check(host.io(InJvmHost.read(1, 7, 1, BS))).received());
        // DSM without AD is a hint
        FakeRequest hint = InJvmHost.deallocate(1, 0, 1);
        hint.sqe().cdw(11, 1);
        check(host.io(hint));
    }

    @Test
    void memoryBudgetRefusalLeavesEverythingElseWorking() {
        host.close();
        target.close();
        target = TestTargets.standard(2L * CHUNK, 0);
        host = new InJvmHost(target).bringUp(TestTargets.NQN, 1);
        byte[] block = random(BS, 6);
        check(host.io(InJvmHost.write(1, 0, block, BS)));
        check(host.io(InJvmHost.write(1, CHUNK / BS, block, BS)));
        assertEquals(2L * CHUNK, target.memoryUsedBytes());
        FakeRequest refused = host.io(InJvmHost.write(1, 2L * CHUNK / BS, block, BS));
        assertEquals(Status.CAPACITY_EXCEEDED, refused.status());
        assertEquals(1, target.memoryBudget().refusals());
        // writes into allocated chunks, reads, admin commands keep working
        check(host.io(InJvmHost.write(1, 1, block, BS)));
        assertArrayEquals(block, check(host.io(InJvmHost.read(1, 1, 1, BS))).received());
        check(host.admin(InJvmHost.keepAlive()));
        // freeing a chunk makes room again
        check(host.io(InJvmHost.deallocate(1, 0, CHUNK / BS)));
        check(host.io(InJvmHost.write(1, 2L * CHUNK / BS, block, BS)));
        assertEquals(2L * CHUNK, target.memoryUsedBytes());
    }

    @Test
    void smartCountsDataUnitsAndCommands() {
        host.bringUp(TestTargets.NQN, 1);
        for (int i = 0; i < 3; i++) {
            check(host.io(InJvmHost.write(1, i * 64L, new byte[64 * BS], BS)));
        }
        check(host.io(InJvmHost.read(1, 0, 1, BS)));
        var smart = check(host.admin(InJvmHost.getLogPage(0x02, 0xFFFFFFFF, 0, 512, false)))
                .dataBuffer();
        assertEquals(2, smart.getLong(48), "3 × 256 KiB written = 1536 units of 512 bytes → 2 data units");
        assertEquals(1, smart.getLong(32));
        assertEquals(1, smart.getLong(64), "host read commands");
        assertEquals(3, smart.getLong(80), "host write commands");
        assertEquals(
                3,
                check(host.admin(InJvmHost.getLogPage(0x02, 1, 0, 512, false)))
                        .dataBuffer()
                        .getLong(80),
                "namespace 1 alone (LPA bit 0)");
        check(host.admin(InJvmHost.getLogPage(0x02, 0, 0, 512, false)));
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                host.admin(InJvmHost.getLogPage(0x02, 9, 0, 512, false)).status(),
                "an NSID with no namespace, as nvmet");
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                host.admin(InJvmHost.getLogPage(0x02, 0xB488C3D5, 0, 512, false))
                        .status());
    }

    /** Flush, Write Zeroes and Verify move no data: a data SGL longer than 0 bytes is refused, as nvmet does. */
    @Test
    void commandsWithoutDataRefuseADataSgl() {
        host.bringUp(TestTargets.NQN, 1);
        FakeRequest verify = InJvmHost.writeZeroes(1, 0, 8, false);
        verify.sqe().opcode(0x0C);
        check(host.io(verify));
        FakeRequest[] withData = {
            InJvmHost.writeZeroes(1, 0, 1, false).dataLength(BS),
            InJvmHost.flush(1).dataLength(BS),
            InJvmHost.flush(0xFFFFFFFF).dataLength(8),
            InJvmHost.writeZeroes(1, 0, 8, false).dataLength(8 * BS),
        };
        withData[3].sqe().opcode(0x0C);
        for (FakeRequest r : withData) {
            assertEquals(Status.dnr(Status.DATA_SGL_LENGTH_INVALID), host.io(r).status(), r.toString());
        }
        check(host.io(InJvmHost.writeZeroes(1, 0, 1, false)));
        check(host.io(InJvmHost.flush(1)));
        check(host.io(InJvmHost.flush(0xFFFFFFFF)));
    }

    @Test
    void unexpectedExceptionBecomesInternalError() {
        host.bringUp(TestTargets.NQN, 1);
        FakeRequest broken = new FakeRequest() {
            @Override
            public java.nio.ByteBuffer data() {
                throw new IllegalStateException("boom (test)");
            }
        }.send(new byte[BS]);
        broken.sqe().opcode(0x01).nsid(1).slba(0).nlb(0);
        FakeRequest r = host.io(broken);
        assertEquals(Status.INTERNAL_ERROR, r.status());
        assertEquals(1, r.completions());
        check(host.io(InJvmHost.flush(1)));
    }
}

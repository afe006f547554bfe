package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Verify, Copy and fused Compare and Write over the in-JVM transport. */
class NvmVerifyCopyFusedTest {
    private static final int BS = 4096;
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    private static byte[] filled(int blocks, int value) {
        byte[] b = new byte[blocks * BS];
        Arrays.fill(b, (byte) value);
        return b;
    }

    private static FakeRequest verify(int nsid, long slba, int blocks) {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x0C).nsid(nsid).slba(slba).nlb(blocks - 1);
        return r;
    }

    /** Copy of {slba, blocks} pairs to {@code sdlba}, format {@code df}. */
    private static FakeRequest copy(int nsid, long sdlba, int df, long... slbaAndBlocks) {
        int ranges = slbaAndBlocks.length / 2;
        ByteBuffer b = ByteBuffer.allocate(ranges * 32).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < ranges; i++) {
            b.putLong(32 * i + 8, slbaAndBlocks[2 * i]);
            b.putShort(32 * i + 16, (short) (slbaAndBlocks[2 * i + 1] - 1));
        }
        FakeRequest r = new FakeRequest().send(b.array());
        r.sqe()
                .opcode(0x19)
                .nsid(nsid)
                .cdw(10, (int) sdlba)
                .cdw(11, (int) (sdlba >>> 32))
                .cdw(12, (ranges - 1) | (df << 8));
        return r;
    }

    private static FakeRequest fused(FakeRequest r, int fuse) {
        SubmissionQueueEntry s = r.sqe();
        s.flags(SubmissionQueueEntry.FLAGS_SGL | fuse);
        return r;
    }

    private static FakeRequest await(FakeRequest r) {
        try {
            return r.done.get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("no completion for " + r, e);
        }
    }

    @Test
    void verifyChecksTheRangeOnly() {
        host.bringUp(TestTargets.NQN, 1);
        check(host.io(verify(1, 0, 16)));
        long blocks = target.subsystem(TestTargets.NQN).namespace(1).blocks();
        check(host.io(verify(1, blocks - 1, 1)));
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(verify(1, blocks - 1, 2)).status());
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE), host.io(verify(9, 0, 1)).status());
    }

    @Test
    void copyGathersRangesToTheDestination() {
        host.bringUp(TestTargets.NQN, 1);
        check(host.io(InJvmHost.write(1, 10, filled(2, 0xA1), BS)));
        check(host.io(InJvmHost.write(1, 40, filled(1, 0xB2), BS)));
        // Two ranges (blocks 10–11 and 40) and an unwritten one (block 70, zeroes) → blocks 100..103.
        check(host.io(copy(1, 100, 0, 10, 2, 40, 1, 70, 1)));
        byte[] expected = new byte[4 * BS];
        System.arraycopy(filled(2, 0xA1), 0, expected, 0, 2 * BS);
        System.arraycopy(filled(1, 0xB2), 0, expected, 2 * BS, BS);
        assertArrayEquals(
                expected, check(host.io(InJvmHost.read(1, 100, 4, BS))).received());
        // Overlapping source and destination: as if every source were read first.
        check(host.io(copy(1, 11, 0, 10, 2)));
        assertArrayEquals(
                filled(3, 0xA1), check(host.io(InJvmHost.read(1, 10, 3, BS))).received());
    }

    @Test
    void copyErrorsAsTheSpecNamesThem() {
        host.bringUp(TestTargets.NQN, 1);
        long blocks = target.subsystem(TestTargets.NQN).namespace(1).blocks();
        assertEquals(
                Status.dnr(Status.INVALID_FIELD), host.io(copy(1, 0, 1, 0, 1)).status(), "format 1");
        long[] tooMany = new long[2 * (NvmCopy.MSRC + 2)];
        for (int i = 0; i < tooMany.length; i += 2) {
            tooMany[i] = i;
            tooMany[i + 1] = 1;
        }
        assertEquals(
                Status.dnr(Status.COMMAND_SIZE_LIMIT_EXCEEDED),
                host.io(copy(1, 0, 0, tooMany)).status());
        assertEquals(
                Status.dnr(Status.COMMAND_SIZE_LIMIT_EXCEEDED),
                host.io(copy(1, 0, 0, 0, NvmCopy.MSSRL + 1)).status(),
                "a range beyond MSSRL");
        assertEquals(
                Status.dnr(Status.COMMAND_SIZE_LIMIT_EXCEEDED),
                host.io(copy(1, 0, 0, 0, NvmCopy.MSSRL, 1000, 1)).status(),
                "all ranges beyond MCL");
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(copy(1, 0, 0, blocks - 1, 2)).status());
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                host.io(copy(1, blocks - 1, 0, 0, 2)).status());
        assertEquals(
                Status.dnr(Status.NAMESPACE_WRITE_PROTECTED),
                host.io(copy(3, 0, 0, 0, 1)).status(),
                "read-only namespace");
        FakeRequest shortList = copy(1, 0, 0, 0, 1, 5, 1);
        shortList.dataLength(32);
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID), host.io(shortList).status());
    }

    @Test
    void fusedCompareAndWrite() {
        host.bringUp(TestTargets.NQN, 1);
        InJvmQueue q = host.io.get(1);
        check(host.io(InJvmHost.write(1, 5, filled(2, 0x11), BS)));
        // Equal: both succeed, the write lands.
        FakeRequest first = q.submit(fused(InJvmHost.compare(1, 5, filled(2, 0x11), BS), 1));
        FakeRequest second = q.submit(fused(InJvmHost.write(1, 5, filled(2, 0x22), BS), 2));
        assertEquals(0, await(first).status());
        assertEquals(0, await(second).status());
        assertArrayEquals(
                filled(2, 0x22), check(host.io(InJvmHost.read(1, 5, 2, BS))).received());
        // Miscompare: Compare Failure, the write is aborted and changes nothing.
        first = q.submit(fused(InJvmHost.compare(1, 5, filled(2, 0x11), BS), 1));
        second = q.submit(fused(InJvmHost.write(1, 5, filled(2, 0x33), BS), 2));
        assertEquals(Status.dnr(Status.COMPARE_FAILURE), await(first).status());
        assertEquals(Status.dnr(Status.ABORTED_FAILED_FUSED), await(second).status());
        assertArrayEquals(
                filled(2, 0x22), check(host.io(InJvmHost.read(1, 5, 2, BS))).received());
        // A first followed by an ordinary command: Missing Fused; the ordinary command runs.
        first = q.submit(fused(InJvmHost.compare(1, 5, filled(2, 0x22), BS), 1));
        check(host.io(InJvmHost.flush(1)));
        assertEquals(Status.dnr(Status.ABORTED_MISSING_FUSED), await(first).status());
        // A second without a first.
        assertEquals(
                Status.dnr(Status.ABORTED_MISSING_FUSED),
                host.io(fused(InJvmHost.write(1, 5, filled(2, 0x44), BS), 2)).status());
        // Blocks that differ: Invalid Field for the second, Missing Fused for the first.
        first = q.submit(fused(InJvmHost.compare(1, 5, filled(2, 0x22), BS), 1));
        second = q.submit(fused(InJvmHost.write(1, 6, filled(2, 0x44), BS), 2));
        assertEquals(Status.dnr(Status.ABORTED_MISSING_FUSED), await(first).status());
        assertEquals(Status.dnr(Status.INVALID_FIELD), await(second).status());
        // Only Compare comes first; FUSE on the admin queue and FUSE 11b are Invalid Field.
        assertEquals(
                Status.dnr(Status.INVALID_OPCODE),
                host.io(fused(InJvmHost.read(1, 5, 1, BS), 1)).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(fused(InJvmHost.keepAlive(), 1)).status());
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.io(fused(InJvmHost.flush(1), 3)).status());
        assertArrayEquals(
                filled(2, 0x22), check(host.io(InJvmHost.read(1, 5, 2, BS))).received());
    }

    @Test
    void fusedPairsOnTwoQueuesNeverLoseAnUpdateWhileAThirdQueueWrites() throws Exception {
        host.bringUp(TestTargets.NQN, 3);
        check(host.io(InJvmHost.write(1, 0, filled(1, 0), BS)));
        AtomicInteger successes = new AtomicInteger();
        Runnable incrementer = () -> {
            InJvmQueue q = host.io.get(Thread.currentThread().getName().endsWith("1") ? 1 : 2);
            for (int i = 0; i < 200; i++) {
                // Read-compare-increment: the fused pair must see no other pair's write in between.
                int v = check(q.call(InJvmHost.read(1, 0, 1, BS))).received()[0] & 0xFF;
                FakeRequest f = q.submit(fused(InJvmHost.compare(1, 0, filled(1, v), BS), 1));
                FakeRequest s = q.submit(fused(InJvmHost.write(1, 0, filled(1, (v + 1) & 0xFF), BS), 2));
                if (await(f).status() == 0) {
                    assertEquals(0, await(s).status());
                    successes.incrementAndGet();
                } else {
                    assertEquals(Status.dnr(Status.ABORTED_FAILED_FUSED), await(s).status());
                }
            }
        };
        CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
            InJvmQueue q = host.io.get(3);
            for (int i = 0; i < 400; i++) {
                check(q.call(InJvmHost.write(1, 8 + (i % 4), filled(1, i), BS))); // other blocks: never waits long
            }
        });
        Thread a = new Thread(incrementer, "caw-1");
        Thread b = new Thread(incrementer, "caw-2");
        a.start();
        b.start();
        a.join(60_000);
        b.join(60_000);
        other.get(60, TimeUnit.SECONDS);
        assertFalse(a.isAlive() || b.isAlive());
        int value = check(host.io(InJvmHost.read(1, 0, 1, BS))).received()[0] & 0xFF;
        assertEquals(successes.get() & 0xFF, value, "every successful pair incremented exactly once");
        assertTrue(successes.get() > 0, "some pairs succeed");
    }

    @Test
    void identifyAdvertisesVerifyCopyAndFused() {
        host.bringUp(TestTargets.NQN, 1);
        ByteBuffer ctrl = check(host.admin(InJvmHost.identify(1, 0))).dataBuffer();
        int oncs = ctrl.getShort(520) & 0xFFFF;
        assertEquals(1, oncs & 1, "Compare");
        assertEquals(1 << 7, oncs & (1 << 7), "Verify");
        assertEquals(1 << 8, oncs & (1 << 8), "Copy");
        assertEquals(1, ctrl.getShort(522) & 1, "FUSES: Compare and Write");
        assertEquals(1, ctrl.getShort(534) & 1, "OCFS: format 0");
        ByteBuffer ns = check(host.admin(InJvmHost.identify(0, 1))).dataBuffer();
        assertEquals(NvmCopy.MSSRL, ns.getShort(74) & 0xFFFF);
        assertEquals(NvmCopy.MCL, ns.getInt(76));
        assertEquals(NvmCopy.MSRC, ns.get(80));
    }
}

package io.nvmeof.target.e2e;

import static io.nvmeof.target.e2e.RawTcpHost.expectOk;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.e2e.RawTcpHost.Completion;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Data over NVMe/TCP on loopback, verified byte for byte: in-capsule, R2T/H2CData, digests, several queues. */
@Timeout(120)
class TcpDataPathTest {
    private E2eTarget t;

    @BeforeEach
    void start() throws Exception {
        t = new E2eTarget();
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @ParameterizedTest(name = "{0} bytes, digests={1}")
    @CsvSource({
        "4096, false", "16384, false", "131072, false", "1048576, false",
        "4096, true", "16384, true", "131072, true", "1048576, true",
    })
    void writeThenReadBack(int size, boolean digests) throws Exception {
        try (RawTcpHost admin = t.admin(digests);
                RawTcpHost io = t.io(admin, 1, digests)) {
            byte[] data = random(size, size * 31L + (digests ? 1 : 0));
            long slba = 1000;
            int inCapsule0 = io.inCapsuleWrites; // the Connect data went in-capsule already
            expectOk(io.write(1, slba, 4096, data), "write " + size);
            // IOCCSZ says 16 KiB in-capsule: 4k and 16k travel in the capsule, larger writes need an R2T.
            if (size <= 16384) {
                assertEquals(inCapsule0 + 1, io.inCapsuleWrites, "in-capsule path");
                assertEquals(0, io.r2tCount, "no R2T for in-capsule data");
            } else {
                assertEquals(inCapsule0, io.inCapsuleWrites);
                assertTrue(io.r2tCount >= 1, "R2T path");
                assertTrue(io.h2cDataCount >= 1);
            }
            byte[] back = new byte[size];
            Completion c = expectOk(io.read(1, slba, 4096, back), "read " + size);
            assertArrayEquals(data, back, "data read back differs: " + c);
            assertTrue(io.c2hDataCount >= 1);

            // Neighbouring blocks are untouched.
            byte[] before = new byte[4096];
            expectOk(io.read(1, slba - 1, 4096, before), "read before");
            assertTrue(TcpBringUpTest.isZero(before), "the block before the write was touched");
            byte[] after = new byte[4096];
            expectOk(io.read(1, slba + size / 4096, 4096, after), "read after");
            assertTrue(TcpBringUpTest.isZero(after), "the block after the write was touched");
        }
        t.assertNoErrorsLogged();
    }

    @Test
    void fiveTwelveByteNamespaceAndOddSizes() throws Exception {
        try (RawTcpHost admin = t.admin(false);
                RawTcpHost io = t.io(admin, 1, false)) {
            for (int blocks : new int[] {1, 3, 33, 257}) {
                byte[] data = random(blocks * 512, blocks);
                long slba = blocks * 7L;
                expectOk(io.write(2, slba, 512, data), "write " + blocks + " blocks");
                byte[] back = new byte[data.length];
                expectOk(io.read(2, slba, 512, back), "read " + blocks + " blocks");
                assertArrayEquals(data, back, blocks + " blocks of 512");
            }
        }
    }

    @Test
    void errorsAreStatusesAndTheQueueGoesOn() throws Exception {
        try (RawTcpHost admin = t.admin(false);
                RawTcpHost io = t.io(admin, 1, false)) {
            long lastLba = E2eTarget.NS1_BYTES / 4096 - 1;
            Completion oor = io.read(1, lastLba, 4096, new byte[8192]);
            assertTrue(Status.is(oor.status(), Status.LBA_OUT_OF_RANGE), "read past the end: " + oor);
            Completion noNs = io.read(7, 0, 4096, new byte[4096]);
            assertTrue(Status.is(noNs.status(), Status.INVALID_NAMESPACE), "inactive NSID: " + noNs);
            byte[] data = random(8192, 5);
            expectOk(io.write(1, lastLba - 1, 4096, data), "write of the last two blocks");
            byte[] back = new byte[8192];
            expectOk(io.read(1, lastLba - 1, 4096, back), "read of the last two blocks");
            assertArrayEquals(data, back);
            expectOk(io.writeZeroes(1, lastLba - 1, 2), "Write Zeroes");
            expectOk(io.read(1, lastLba - 1, 4096, back), "read after Write Zeroes");
            assertTrue(TcpBringUpTest.isZero(back), "Write Zeroes left data behind");
            expectOk(io.flush(1), "Flush");
        }
        t.assertNoErrorsLogged();
    }

    @Test
    void sqFlowControlDisabledAllowsC2hSuccess() throws Exception {
        // With CATTR bit 2 the target may skip the CapsuleResp after a read (nvmeof-protocol.md §5.10); both forms must
        // carry the data.
        try (RawTcpHost admin = t.admin(true);
                RawTcpHost io = RawTcpHost.connect(t.address, true, true)) {
            expectOk(
                    io.connectIo(
                            1,
                            31,
                            0x04,
                            admin.cntlid(),
                            E2eTarget.NQN,
                            RawTcpHost.DEFAULT_HOST_NQN,
                            RawTcpHost.DEFAULT_HOST_ID),
                    "I/O Connect with SQ flow control disabled");
            byte[] data = random(65536, 77);
            expectOk(io.write(1, 64, 4096, data), "write");
            byte[] back = new byte[data.length];
            Completion c = expectOk(io.read(1, 64, 4096, back), "read");
            assertArrayEquals(data, back);
            System.out.println("read with SQ flow control disabled completed "
                    + (c.viaC2hSuccess() ? "by C2HData SUCCESS" : "by CapsuleResp"));
        }
    }

    @Test
    void twoIoQueuesOnTwoConnectionsFromTwoThreads() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (RawTcpHost admin = t.admin(false)) {
            expectOk(admin.setNumberOfQueues(2), "Set Features Number of Queues");
            List<Future<Integer>> results = new ArrayList<>();
            for (int qid = 1; qid <= 2; qid++) {
                final int q = qid;
                RawTcpHost io = t.io(admin, q, q == 2);
                Callable<Integer> job = () -> {
                    try (io) {
                        Random r = new Random(q);
                        int done = 0;
                        // Disjoint LBA ranges per queue: queue 1 uses 0..4095, queue 2 uses 4096..8191.
                        for (int i = 0; i < 200; i++) {
                            int blocks = 1 + r.nextInt(48);
                            long slba = (q - 1) * 4096L + r.nextInt(4096 - blocks);
                            byte[] data = random(blocks * 4096, r.nextLong());
                            expectOk(io.write(1, slba, 4096, data), "q" + q + " write");
                            byte[] back = new byte[data.length];
                            expectOk(io.read(1, slba, 4096, back), "q" + q + " read");
                            assertArrayEquals(data, back, "q" + q + " iteration " + i);
                            done++;
                        }
                        return done;
                    }
                };
                results.add(pool.submit(job));
            }
            assertEquals(2, t.target.controllers().get(0).ioQueueCount());
            for (Future<Integer> f : results) {
                assertEquals(200, f.get(100, TimeUnit.SECONDS));
            }
            expectOk(admin.keepAlive(), "Keep Alive after the I/O");
            admin.shutdown();
        } finally {
            pool.shutdownNow();
        }
        t.awaitNoControllers(10_000);
        t.assertNoErrorsLogged();
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }
}

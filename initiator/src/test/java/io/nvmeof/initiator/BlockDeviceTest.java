package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Byte-addressed I/O, verified byte for byte against a model of the device kept in a byte array. */
class BlockDeviceTest {
    static final int SIZE = 4 << 20;

    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("4M").namespace("4M", 512).build();

    static Controller controller;

    @BeforeAll
    static void connect() throws Exception {
        controller = Nvme.connect(target.uri("queues=2&depth=16"));
    }

    @AfterAll
    static void close() {
        controller.close();
    }

    static void check(BlockDevice dev, byte[] model) throws Exception {
        ByteBuffer all = ByteBuffer.allocateDirect(SIZE);
        assertEquals(SIZE, dev.read(0, all));
        byte[] got = new byte[SIZE];
        all.get(0, got);
        assertArrayEquals(model, got);
    }

    @Test
    void unalignedWritesAndReadsMatchTheModel() throws Exception {
        for (int nsid : new int[] {1, 2}) {
            BlockDevice dev = controller.namespace(nsid).blockDevice();
            assertEquals(SIZE, dev.size());
            byte[] model = new byte[SIZE];
            dev.write(0, ByteBuffer.wrap(new byte[SIZE])); // start from zeroes whatever earlier tests did
            Random rnd = new Random(nsid);
            int bs = dev.blockSize();
            long[][] cases = {
                {1, 1},
                {bs - 1, 2},
                {bs - 3, 7},
                {5, bs},
                {bs, bs},
                {0, 3 * bs + 5},
                {bs / 2, 40 * bs},
                {SIZE - 1, 1},
                {SIZE - bs - 17, bs + 17},
                {7, 3 * (1 << 20) + 123}, // spans many blocks, >1 MiB
            };
            List<long[]> all = new ArrayList<>(List.of(cases));
            for (int i = 0; i < 60; i++) {
                int len = 1 + rnd.nextInt(3 * bs);
                all.add(new long[] {rnd.nextInt(SIZE - len), len});
            }
            for (long[] c : all) {
                byte[] data = new byte[(int) c[1]];
                rnd.nextBytes(data);
                boolean direct = rnd.nextBoolean();
                ByteBuffer src =
                        direct ? ByteBuffer.allocateDirect(data.length + 3) : ByteBuffer.allocate(data.length + 3);
                src.position(3);
                src.put(3, data);
                assertEquals(data.length, dev.write(c[0], src));
                assertEquals(3 + data.length, src.position(), "position advanced");
                System.arraycopy(data, 0, model, (int) c[0], data.length);
                // read back exactly that range, unaligned
                ByteBuffer dst = ByteBuffer.allocate(data.length);
                assertEquals(data.length, dev.read(c[0], dst));
                assertEquals(data.length, dst.position());
                assertArrayEquals(data, dst.array(), "range " + c[0] + "+" + c[1]);
            }
            check(dev, model);
        }
    }

    @Test
    void concurrentTinyWritesIntoTheSameBlocksAreNotLost() throws Exception {
        BlockDevice dev = controller.namespace(1).blockDevice();
        long base = 1 << 20;
        dev.write(base, ByteBuffer.allocate(2 * 4096));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> fs = new ArrayList<>();
            // 8 threads each write their own bytes of the same two blocks, one byte at a time: every one is an RMW
            for (int t = 0; t < 8; t++) {
                int thread = t;
                fs.add(pool.submit(() -> {
                    for (int i = thread; i < 2 * 4096; i += 8 * 13) {
                        dev.write(base + i, ByteBuffer.wrap(new byte[] {(byte) (i * 3 + 1)}));
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        ByteBuffer r = ByteBuffer.allocate(2 * 4096);
        dev.read(base, r);
        for (int i = 0; i < 2 * 4096; i++) {
            int owner = i % (8 * 13);
            byte expected = owner < 8 ? (byte) (i * 3 + 1) : 0;
            assertEquals(expected, r.get(i), "byte " + i);
        }
    }

    @Test
    void rangesOutsideTheDeviceAreRejected() throws Exception {
        BlockDevice dev = controller.namespace(1).blockDevice();
        assertThrows(IllegalArgumentException.class, () -> dev.read(SIZE - 1, ByteBuffer.allocate(2)));
        assertThrows(IllegalArgumentException.class, () -> dev.write(-1, ByteBuffer.allocate(1)));
        assertEquals(0, assertDoesNotThrowZero(dev));
    }

    private static int assertDoesNotThrowZero(BlockDevice dev) {
        try {
            return dev.read(SIZE, ByteBuffer.allocate(0));
        } catch (NvmeException e) {
            throw new AssertionError(e);
        }
    }
}

package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every NVM I/O command (nvmeof-protocol.md §4) over NVMe/TCP against our target, with its statuses. */
class IoCommandsTest {
    @RegisterExtension
    static NvmeofTargetExtension target = NvmeofTargetExtension.builder()
            .namespace("16M")
            .namespace("1M", 512)
            .readOnlyNamespace("1M")
            .build();

    static Controller controller;
    static Namespace ns;

    @BeforeAll
    static void connect() throws Exception {
        controller = Nvme.connect(target.uri("queues=2&depth=32"));
        ns = controller.namespace(1);
    }

    @AfterAll
    static void close() {
        controller.close();
    }

    static ByteBuffer pattern(int bytes, int seed, boolean direct) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes);
        for (int i = 0; i < bytes; i++) {
            b.put(i, (byte) (seed * 31 + i * 7 + (i >>> 8)));
        }
        return b;
    }

    @Test
    void writeThenReadDirectAndHeapBuffers() throws Exception {
        for (boolean direct : new boolean[] {true, false}) {
            for (int blocks : new int[] {1, 3, 4, 5, 32, 256}) { // in-capsule (≤16 KiB) and R2T sizes
                ByteBuffer w = pattern(blocks * 4096, blocks, direct);
                ns.write(100, blocks, w);
                ByteBuffer r = direct ? ByteBuffer.allocateDirect(blocks * 4096) : ByteBuffer.allocate(blocks * 4096);
                ns.read(100, blocks, r);
                assertEquals(w, r, blocks + " blocks, direct " + direct);
                assertEquals(0, r.position(), "position untouched");
            }
        }
    }

    @Test
    void bufferPositionIsWhereTheDataGoes() throws Exception {
        ByteBuffer w = pattern(4096 + 10, 5, true);
        w.position(10);
        ns.write(7, 1, w);
        ByteBuffer r = ByteBuffer.allocateDirect(4096 + 3);
        r.position(3);
        ns.read(7, 1, r);
        assertEquals(w.slice(10, 4096), r.slice(3, 4096));
    }

    @Test
    void smallBlockNamespace() throws Exception {
        Namespace small = controller.namespace(2);
        ByteBuffer w = pattern(512 * 3, 9, true);
        small.write(2045, 3, w);
        ByteBuffer r = ByteBuffer.allocateDirect(512 * 3);
        small.read(2045, 3, r);
        assertEquals(w, r);
    }

    @Test
    void flushSucceeds() throws Exception {
        ns.flush();
        ns.flushAsync().get(5, TimeUnit.SECONDS);
    }

    @Test
    void writeZeroesZeroes() throws Exception {
        ns.write(200, 4, pattern(4 * 4096, 1, true));
        ns.writeZeroes(201, 2);
        ByteBuffer r = ByteBuffer.allocateDirect(4 * 4096);
        ns.read(200, 4, r);
        ByteBuffer expected = pattern(4 * 4096, 1, true);
        for (int i = 4096; i < 3 * 4096; i++) {
            expected.put(i, (byte) 0);
        }
        assertEquals(expected, r);
    }

    @Test
    void deallocateReadsBackZeroes() throws Exception {
        assertEquals(1, ns.identity().dlfeat() & 0x7, "the target reports deallocated blocks read as zero");
        ns.write(300, 8, pattern(8 * 4096, 2, true));
        ns.deallocate(new LbaRange(300, 2), new LbaRange(305, 3));
        ByteBuffer r = ByteBuffer.allocateDirect(8 * 4096);
        ns.read(300, 8, r);
        ByteBuffer expected = pattern(8 * 4096, 2, true);
        for (int b : new int[] {0, 1, 5, 6, 7}) {
            for (int i = 0; i < 4096; i++) {
                expected.put(b * 4096 + i, (byte) 0);
            }
        }
        assertEquals(expected, r);
    }

    @Test
    void compareMatchesAndMismatches() throws Exception {
        ByteBuffer data = pattern(2 * 4096, 3, true);
        ns.write(400, 2, data);
        ns.compare(400, 2, data);
        ByteBuffer other = pattern(2 * 4096, 3, true);
        other.put(5000, (byte) ~other.get(5000));
        NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> ns.compare(400, 2, other));
        assertEquals(Status.SCT_MEDIA, e.sct());
        assertEquals(0x85, e.sc());
        assertTrue(Status.is(e.status(), Status.COMPARE_FAILURE));
        assertEquals(0x05, e.opcode());
        assertTrue(e.getMessage().contains("Compare (opc 0x05) nsid 1 slba 400 nlb 2"), e.getMessage());
        assertTrue(e.getMessage().contains("Compare Failure"), e.getMessage());
    }

    @Test
    void lbaOutOfRangeCarriesTheCommand() {
        long last = ns.blockCount();
        NvmeStatusException e =
                assertThrows(NvmeStatusException.class, () -> ns.read(last - 1, 2, ByteBuffer.allocateDirect(8192)));
        assertTrue(Status.is(e.status(), Status.LBA_OUT_OF_RANGE), e.getMessage());
        assertTrue(e.dnr());
        assertTrue(e.getMessage().contains("slba " + (last - 1) + " nlb 2"), e.getMessage());
    }

    @Test
    void readOnlyNamespaceRefusesWrites() throws Exception {
        Namespace ro = controller.namespace(3);
        assertTrue(ro.readOnly());
        NvmeStatusException e =
                assertThrows(NvmeStatusException.class, () -> ro.write(0, 1, ByteBuffer.allocateDirect(4096)));
        assertTrue(Status.is(e.status(), Status.NAMESPACE_WRITE_PROTECTED), e.getMessage());
        ro.read(0, 1, ByteBuffer.allocateDirect(4096));
    }

    @Test
    void futureFormsFailWithTheStatus() {
        CompletableFuture<Void> f = ns.readAsync(ns.blockCount(), 1, ByteBuffer.allocateDirect(4096));
        CompletionException e = assertThrows(CompletionException.class, f::join);
        assertInstanceOf(NvmeStatusException.class, e.getCause());
    }

    @Test
    void callbackFormsDeliverToTheCallbackWithTheAttachment() throws Exception {
        CountDownLatch done = new CountDownLatch(2);
        AtomicReference<Object> ok = new AtomicReference<>();
        AtomicReference<NvmeException> failed = new AtomicReference<>();
        IoCallback cb = new IoCallback() {
            @Override
            public void completed(Object attachment) {
                ok.set(attachment);
                done.countDown();
            }

            @Override
            public void failed(NvmeException error, Object attachment) {
                failed.set(error);
                done.countDown();
            }
        };
        ByteBuffer buf = pattern(4096, 4, true);
        ns.write(500, 1, buf, cb, "mine");
        assertTrue(ns.tryRead(ns.blockCount() + 10, 1, ByteBuffer.allocateDirect(4096), cb, "bad"));
        assertTrue(done.await(5, TimeUnit.SECONDS));
        assertEquals("mine", ok.get());
        assertInstanceOf(NvmeStatusException.class, failed.get());
    }

    @Test
    void badArgumentsAreRejectedAtOnce() {
        assertThrows(IllegalArgumentException.class, () -> ns.read(0, 0, ByteBuffer.allocateDirect(4096)));
        assertThrows(IllegalArgumentException.class, () -> ns.read(-1, 1, ByteBuffer.allocateDirect(4096)));
        assertThrows(IllegalArgumentException.class, () -> ns.read(0, 2, ByteBuffer.allocateDirect(4096)));
        assertThrows(
                IllegalArgumentException.class,
                () -> ns.read(0, 1, ByteBuffer.allocateDirect(4096).asReadOnlyBuffer()));
        assertThrows(IllegalArgumentException.class, () -> ns.read(0, Namespace.MAX_NLB + 1, ByteBuffer.allocate(16)));
        assertThrows(IllegalArgumentException.class, () -> ns.deallocate());
    }

    @Test
    void commandsAreCappedAtFourMiBWhateverMdtsSays() throws Exception {
        assertEquals(0, controller.identity().mdts(), "our target reports no limit, like nvmet-tcp");
        assertEquals(1024, ns.maxBlocksPerCommand());
        assertEquals(8192, controller.namespace(2).maxBlocksPerCommand());
        ByteBuffer four = pattern(4 << 20, 8, true);
        ns.write(1024, 1024, four); // exactly 4 MiB: accepted by nvmet too
        ByteBuffer back = ByteBuffer.allocateDirect(4 << 20);
        ns.read(1024, 1024, back);
        assertEquals(four, back);
        assertThrows(
                IllegalArgumentException.class, () -> ns.read(0, 1025, ByteBuffer.allocateDirect((4 << 20) + 4096)));
    }

    @Test
    void namespaceIdentityIsDecoded() {
        NamespaceIdentity id = ns.identity();
        assertEquals(4096, id.blockSize());
        assertEquals(16L << 20, id.sizeBytes());
        assertEquals(id.nsze(), id.ncap());
        assertFalse(id.readOnly());
        assertEquals(1, id.nmic());
    }
}

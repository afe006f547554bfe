package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Write data used where the decoder put it (the CapsuleCmd's, or the one H2CData's carrying the whole transfer, PDU
 * buffer, kept by the slot) instead of being copied into a {@link DataBufferPool} buffer: no pooled buffer is taken, every command sees its own bytes, and
 * the kept buffer is released exactly once on completion, on close and on a fault. The harness's allocator is direct
 * and its leak detection paranoid; {@link TargetHarness#assertClean} checks every input buffer and pooled allocation
 * was released.
 */
class WriteDataInPlaceTest {
    private static final int HELD_WRITE = FakeCore.HOLD_OPCODE | 0x01;

    private static TargetHarness connected(int dgst) {
        TargetHarness h = new TargetHarness();
        h.connectIc(dgst);
        h.feed(Bytes.capsule(Bytes.connectSqe(1, 1, 127, 0), Bytes.pattern(1024, 1), hd(dgst), dd(dgst)));
        assertStatus(h.drainPdus(), 1, 0);
        return h;
    }

    private static boolean hd(int dgst) {
        return (dgst & 1) != 0;
    }

    private static boolean dd(int dgst) {
        return (dgst & 2) != 0;
    }

    /** Exactly one PDU, a CapsuleResp for {@code cid} with {@code status}. */
    private static void assertStatus(List<byte[]> pdus, int cid, int status) {
        assertEquals(1, pdus.size());
        byte[] pdu = pdus.get(0);
        assertEquals(PduHeader.TYPE_CAPSULE_RESP, pdu[0]);
        ByteBuffer b = Bytes.view(pdu);
        assertEquals(cid, b.getShort(20) & 0xFFFF, "CID");
        assertEquals(status, b.getShort(22) & 0xFFFF, "status");
    }

    private static byte[] bytes(ByteBuffer data, int length) {
        byte[] a = new byte[length];
        for (int i = 0; i < length; i++) {
            a[i] = data.get(i);
        }
        return a;
    }

    @Test
    void inCapsuleWritesTakeNoPooledBufferAndArriveIntact() {
        for (int dgst = 0; dgst <= 3; dgst++) {
            TargetHarness h = connected(dgst);
            for (int i = 0; i < 4; i++) {
                byte[] data = Bytes.pattern(4096, 10 + i);
                h.feed(Bytes.capsule(Bytes.sqe(0x01, 40 + i, 0x01, data.length), data, hd(dgst), dd(dgst)));
                assertStatus(h.drainPdus(), 40 + i, 0);
                assertArrayEquals(data, h.core.received.get(1 + i), "DGST " + dgst);
            }
            // Neither Connect's 1024 bytes nor the four writes were copied into a pooled buffer.
            assertEquals(0, h.handler.dataPool().created(), "DGST " + dgst);
            h.assertClean();
        }
    }

    @Test
    void heapMemoryFallsBackToTheCopy() {
        TargetHarness h = connected(0);
        byte[] data = Bytes.pattern(4096, 5);
        h.feedHeap(Bytes.capsule(Bytes.sqe(0x01, 9, 0x01, data.length), data, false, false));
        assertStatus(h.drainPdus(), 9, 0);
        assertArrayEquals(data, h.core.received.get(1));
        assertEquals(1, h.handler.dataPool().created(), "a heap capsule has no address: copied into the pool");
        assertEquals(0, h.handler.dataPool().outstanding());
        h.assertClean();
    }

    @Test
    void heldCommandsKeepTheirOwnDataAcrossLaterReadsAndCloseReleasesIt() {
        TargetHarness h = connected(3);
        byte[] a = Bytes.pattern(4096, 21);
        byte[] b = Bytes.pattern(4096, 22);
        h.feed(Bytes.capsule(Bytes.sqe(HELD_WRITE, 1, 0x01, a.length), a, true, true));
        h.feed(Bytes.capsule(Bytes.sqe(HELD_WRITE, 2, 0x01, b.length), b, true, true));
        // More reads after them, one byte at a time: the decoder's cumulation is refilled (and, as the held slices
        // keep it referenced, copied by Netty) under the held commands.
        byte[] c = Bytes.pattern(2048, 23);
        h.feedByteByByte(Bytes.capsule(Bytes.sqe(0x01, 3, 0x01, c.length), c, true, true));
        assertStatus(h.drainPdus(), 3, 0);
        assertArrayEquals(c, h.core.received.get(1));

        TargetRequest ra = h.core.held.get(0);
        TargetRequest rb = h.core.held.get(1);
        ByteBuffer va = ra.data();
        ByteBuffer vb = rb.data();
        assertNotSame(va, vb, "each slot has its own view");
        assertTrue(va.isDirect());
        assertEquals(ByteOrder.LITTLE_ENDIAN, va.order());
        assertArrayEquals(a, bytes(va, a.length));
        assertArrayEquals(b, bytes(vb, b.length));
        assertEquals(Bytes.view(a).getLong(8), va.getLong(8), "little-endian, absolute from 0");
        assertEquals(0, h.handler.dataPool().created());

        // Asynchronous completion: the slices go back then.
        h.core.channel.execute(ra::complete);
        h.core.channel.execute(rb::complete);
        assertEquals(2, h.drainPdus().size());

        // The next command reuses a slot, and with it that slot's view: nothing made per command.
        h.feed(Bytes.capsule(Bytes.sqe(HELD_WRITE, 4, 0x01, 512), Bytes.pattern(512, 24), true, true));
        TargetRequest rc = h.core.held.get(2);
        assertTrue(rc.data() == va || rc.data() == vb, "a reused slot reuses its view");
        assertArrayEquals(Bytes.pattern(512, 24), bytes(rc.data(), 512));

        // Closed with it outstanding: its PDU buffer is released once; a late completion releases nothing again.
        h.channel.close();
        assertEquals(1, h.core.closes);
        rc.complete();
        h.assertClean();
    }

    @Test
    void aDataDigestErrorFailsOnlyThatCommand() {
        TargetHarness h = connected(3);
        byte[] bad = Bytes.capsule(Bytes.sqe(0x01, 30, 0x01, 4096), Bytes.pattern(4096, 1), true, true);
        bad[bad.length - 1] ^= 0x55; // corrupt DDGST
        h.feed(bad);
        assertStatus(h.drainPdus(), 30, Status.DATA_TRANSFER_ERROR);
        byte[] good = Bytes.pattern(4096, 2);
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 31, 0x01, good.length), good, true, true));
        assertStatus(h.drainPdus(), 31, 0);
        assertArrayEquals(good, h.core.received.get(1));
        assertTrue(h.channel.isOpen());
        assertEquals(0, h.handler.dataPool().created());
        h.assertClean();
    }

    @Test
    void aProtocolFaultReleasesHeldInCapsuleData() {
        TargetHarness h = connected(0);
        h.feed(Bytes.capsule(Bytes.sqe(HELD_WRITE, 1, 0x01, 4096), Bytes.pattern(4096, 3), false, false));
        assertEquals(1, h.core.held.size());
        // H2CData for a TTAG that awaits nothing: C2HTermReq and close.
        h.feed(Bytes.h2cData(7, 99, 0, Bytes.pattern(512, 0), true, false, false));
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size());
        assertEquals(PduHeader.TYPE_C2H_TERM_REQ, pdus.get(0)[0]);
        assertFalse(h.channel.isOpen());
        assertEquals(1, h.core.closes);
        h.assertClean();
    }

    @Test
    void aCoreFailureAfterTheSlotKeptTheDataReleasesIt() {
        TargetHarness h = connected(0);
        h.core.throwOnOpcode = 0x01;
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 70, 0x01, 4096), Bytes.pattern(4096, 4), false, false));
        assertFalse(h.channel.isOpen(), "a failure in the core closes this connection only");
        assertEquals(1, h.core.closes);
        h.assertClean();
    }

    @Test
    void oneH2cDataCarryingTheWholeTransferIsUsedInPlace() {
        for (int dgst = 0; dgst <= 3; dgst++) {
            boolean hd = hd(dgst);
            boolean dd = dd(dgst);
            TargetHarness h = connected(dgst);
            byte[] data = Bytes.pattern(8192, 31 + dgst);
            h.feed(Bytes.capsule(Bytes.sqe(HELD_WRITE, 50, 0x5A, data.length), null, hd, dd));
            int ttag = Bytes.view(h.drainPdus().get(0)).getShort(10);
            assertEquals(1, h.handler.dataPool().outstanding(), "a buffer is taken for the R2T");
            h.feed(Bytes.h2cData(50, ttag, 0, data, true, hd, dd));
            TargetRequest r = h.core.held.get(0);
            assertEquals(0, h.handler.dataPool().outstanding(), "it went back unused: the data is read in place");
            assertArrayEquals(data, bytes(r.data(), data.length), "DGST " + dgst);
            h.core.channel.execute(r::complete);
            assertStatus(h.drainPdus(), 50, 0);

            // Completed at once by the core, like a RAM namespace.
            byte[] more = Bytes.pattern(4096, 41);
            h.feed(Bytes.capsule(Bytes.sqe(0x01, 51, 0x5A, more.length), null, hd, dd));
            ttag = Bytes.view(h.drainPdus().get(0)).getShort(10);
            h.feed(Bytes.h2cData(51, ttag, 0, more, true, hd, dd));
            assertStatus(h.drainPdus(), 51, 0);
            assertArrayEquals(more, h.core.received.get(1));
            h.assertClean();
        }
    }

    @Test
    void oneH2cDataWithABadDigestFailsTheCommandAndAHeldOneIsReleasedOnClose() {
        TargetHarness h = connected(3);
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 60, 0x5A, 4096), null, true, true));
        int ttag = Bytes.view(h.drainPdus().get(0)).getShort(10);
        byte[] bad = Bytes.h2cData(60, ttag, 0, Bytes.pattern(4096, 1), true, true, true);
        bad[bad.length - 2] ^= 0x01;
        h.feed(bad);
        assertStatus(h.drainPdus(), 60, Status.DATA_TRANSFER_ERROR);
        assertEquals(0, h.handler.dataPool().outstanding());

        h.feed(Bytes.capsule(Bytes.sqe(HELD_WRITE, 61, 0x5A, 4096), null, true, true));
        ttag = Bytes.view(h.drainPdus().get(0)).getShort(10);
        h.feed(Bytes.h2cData(61, ttag, 0, Bytes.pattern(4096, 2), true, true, true));
        assertArrayEquals(Bytes.pattern(4096, 2), bytes(h.core.held.get(0).data(), 4096));
        h.channel.close(); // held, its H2CData PDU kept: released once here
        assertEquals(1, h.core.closes);
        h.core.held.get(0).complete();
        h.assertClean();
    }
}

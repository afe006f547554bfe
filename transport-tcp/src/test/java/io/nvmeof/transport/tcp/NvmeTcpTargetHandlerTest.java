package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.Bytes.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.TargetRequest;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The controller pipeline (PduBatch + decoder + handler) against a fake core, fed through EmbeddedChannel. */
class NvmeTcpTargetHandlerTest {
    private static final int IO_QUEUE_SIZE = 128;

    // ----------------------------------------------------------------------------------------------- helpers

    private static void assertCapsuleResp(byte[] pdu, int cid, int status, boolean hd) {
        ByteBuffer b = Bytes.view(pdu);
        assertEquals(0x05, pdu[0], "not a CapsuleResp: " + hex(pdu));
        assertEquals(hd ? 1 : 0, pdu[1]);
        assertEquals(24, pdu[2]);
        assertEquals(0, pdu[3]);
        assertEquals(hd ? 28 : 24, b.getInt(4));
        assertEquals(cid, b.getShort(20) & 0xFFFF, "CID");
        assertEquals(status, b.getShort(22) & 0xFFFF, "status " + Status.toString(b.getShort(22) & 0xFFFF));
        if (hd) {
            assertEquals(Bytes.crc32c(pdu, 0, 24), b.getInt(24), "CapsuleResp HDGST");
        }
    }

    private static void assertTermReq(byte[] pdu, int fes, int fei) {
        ByteBuffer b = Bytes.view(pdu);
        assertEquals(0x03, pdu[0], "not a C2HTermReq: " + hex(pdu));
        assertEquals(0, pdu[1]);
        assertEquals(24, pdu[2]);
        assertTrue(b.getInt(4) >= 24 && b.getInt(4) <= 152, "PLEN " + b.getInt(4));
        assertEquals(pdu.length, b.getInt(4));
        assertEquals(fes, b.getShort(8), "FES");
        assertEquals(fei, b.getInt(10), "FEI");
    }

    /** A fault: exactly one C2HTermReq, the channel closed, onClose once with a protocol exception. */
    private static byte[] assertTerminated(TargetHarness h, int fes, int fei) {
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size(), "expected only a C2HTermReq");
        assertTermReq(pdus.get(0), fes, fei);
        assertFalse(h.channel.isOpen(), "connection must be closed after a TermReq");
        assertEquals(1, h.core.closes);
        NvmeTcpProtocolException e = assertInstanceOf(NvmeTcpProtocolException.class, h.core.closeCause);
        assertEquals(fes, e.fes());
        return pdus.get(0);
    }

    /** ICReq + Connect on queue {@code qid}; returns the harness ready for commands. */
    private static TargetHarness connected(int qid, int cattr, int dgst) {
        TargetHarness h = new TargetHarness();
        h.connectIc(dgst);
        boolean hd = (dgst & 1) != 0;
        boolean dd = (dgst & 2) != 0;
        byte[] connectData = Bytes.pattern(1024, 1);
        h.feed(Bytes.capsule(Bytes.connectSqe(1, qid, qid == 0 ? 31 : IO_QUEUE_SIZE - 1, cattr), connectData, hd, dd));
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size());
        assertCapsuleResp(pdus.get(0), 1, 0, hd);
        assertArrayEquals(connectData, h.core.received.get(0));
        return h;
    }

    // ----------------------------------------------------------------------------------------------- IC

    @Test
    void icReqByteByByteGetsIcResp() {
        TargetHarness h = new TargetHarness();
        assertEquals(1, h.core.accepts, "the acceptor is called once, at connection start");
        h.feedByteByByte(Bytes.icReq(0));
        // nvmeof-protocol.md §5.4 ICResp: PFV 0, CPDA 0, DGST 0, MAXH2CDATA 131072 (0x00020000).
        byte[] golden = Bytes.concat(hex("01 00 80 00 80 00 00 00 00 00 00 00 00 00 02 00"), new byte[112]);
        assertArrayEquals(golden, h.drain());
        assertTrue(h.handler.initialized());
        h.assertClean();
        assertEquals(1, h.core.closes);
        assertNull(h.core.closeCause, "an orderly close has no cause");
    }

    @Test
    void digestsAreEchoedWhenAllowedAndRefusedOtherwise() {
        TargetHarness h = new TargetHarness();
        assertEquals(3, h.connectIc(3)[11]);
        assertTrue(h.handler.headerDigest());
        assertTrue(h.handler.dataDigest());
        h.assertClean();

        TargetHarness off = new TargetHarness(
                new ListenerOptions(new InetSocketAddress("127.0.0.1", 4420), 1, 128, 16384, 0, false));
        assertEquals(0, off.connectIc(3)[11]);
        assertFalse(off.handler.headerDigest());
        off.assertClean();
    }

    @Test
    void icReqWithHpdaOrPfvIsUnsupported() {
        TargetHarness h = new TargetHarness();
        h.feed(Bytes.icReq(0, 0, 1));
        byte[] term = assertTerminated(h, 6, 10);
        assertEquals(24 + 128, term.length, "the whole ICReq header is quoted");
        h.assertClean();

        TargetHarness p = new TargetHarness();
        p.feed(Bytes.icReq(0, 1, 0));
        assertTerminated(p, 6, 8);
        p.assertClean();
    }

    // ----------------------------------------------------------------------------------------------- commands

    @Test
    void connectWithInCapsuleDataByteByByte() {
        TargetHarness h = new TargetHarness();
        h.connectIc(0);
        byte[] data = Bytes.pattern(1024, 3);
        h.feedByteByByte(Bytes.capsule(Bytes.connectSqe(0x1234, 0, 31, 0), data, false, false));
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size());
        assertCapsuleResp(pdus.get(0), 0x1234, 0, false);
        assertEquals(1, Bytes.view(pdus.get(0)).getInt(8), "DW0 = CNTLID from the core");
        assertArrayEquals(data, h.core.received.get(0));
        assertTrue(h.core.events.get(0).contains("incapsule=true"));
        assertEquals(0, h.handler.qid());
        h.assertClean();
    }

    @Test
    void writeViaR2tAndSeveralH2cDataPdus() {
        for (int dgst = 0; dgst <= 3; dgst++) {
            boolean hd = (dgst & 1) != 0;
            boolean dd = (dgst & 2) != 0;
            TargetHarness h = connected(1, 0, dgst);
            byte[] data = Bytes.pattern(12288, dgst);
            h.feed(Bytes.capsule(Bytes.sqe(0x01, 0x2005, 0x5A, data.length), null, hd, dd));
            List<byte[]> pdus = h.drainPdus();
            assertEquals(1, pdus.size());
            byte[] r2t = pdus.get(0);
            ByteBuffer r = Bytes.view(r2t);
            assertEquals(0x09, r2t[0]);
            assertEquals(hd ? 28 : 24, r.getInt(4));
            assertEquals(0x2005, r.getShort(8) & 0xFFFF, "CCCID");
            int ttag = r.getShort(10) & 0xFFFF;
            assertEquals(0, r.getInt(12), "R2TO");
            assertEquals(data.length, r.getInt(16), "R2TL");
            if (hd) {
                assertEquals(Bytes.crc32c(r2t, 0, 24), r.getInt(24), "R2T HDGST");
            }
            for (int off = 0; off < data.length; off += 4096) {
                byte[] part = new byte[4096];
                System.arraycopy(data, off, part, 0, 4096);
                byte[] pdu = Bytes.h2cData(0x2005, ttag, off, part, off + 4096 == data.length, hd, dd);
                if (off == 4096) {
                    h.feedByteByByte(pdu);
                } else {
                    h.feed(pdu);
                }
            }
            pdus = h.drainPdus();
            assertEquals(1, pdus.size());
            assertCapsuleResp(pdus.get(0), 0x2005, 0, hd);
            assertArrayEquals(data, h.core.received.get(1));
            assertEquals(0, h.handler.dataPool().outstanding(), "write buffer back in the pool");
            h.assertClean();
        }
    }

    @Test
    void inCapsuleWriteOnAnIoQueue() {
        TargetHarness h = connected(1, 0, 3);
        byte[] data = Bytes.pattern(4096, 9);
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 77, 0x01, data.length), data, true, true));
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size());
        assertCapsuleResp(pdus.get(0), 77, 0, true);
        assertArrayEquals(data, h.core.received.get(1));
        h.assertClean();
    }

    @Test
    void readSendsOneC2hDataFromTheSegmentsThenCapsuleResp() {
        for (int dgst = 0; dgst <= 3; dgst++) {
            boolean hd = (dgst & 1) != 0;
            boolean dd = (dgst & 2) != 0;
            TargetHarness h = connected(1, 0, dgst);
            int length = 10000;
            h.feed(Bytes.capsule(Bytes.sqe(0x02, 0x31, 0x5A, length), null, hd, dd));
            List<byte[]> pdus = h.drainPdus();
            assertEquals(2, pdus.size());
            byte[] c2h = pdus.get(0);
            ByteBuffer c = Bytes.view(c2h);
            int h4 = hd ? 4 : 0;
            int d4 = dd ? 4 : 0;
            assertEquals(0x07, c2h[0]);
            assertEquals(PduHeader.FLAG_LAST_PDU | (hd ? 1 : 0) | (dd ? 2 : 0), c2h[1], "LAST_PDU, no SUCCESS");
            assertEquals(24, c2h[2]);
            assertEquals(24 + h4, c2h[3], "PDO");
            assertEquals(24 + h4 + length + d4, c.getInt(4), "PLEN");
            assertEquals(0x31, c.getShort(8));
            assertEquals(0, c.getInt(12), "DATAO");
            assertEquals(length, c.getInt(16), "DATAL");
            if (hd) {
                assertEquals(Bytes.crc32c(c2h, 0, 24), c.getInt(24), "C2HData HDGST");
            }
            byte[] data = new byte[length];
            System.arraycopy(c2h, 24 + h4, data, 0, length);
            assertArrayEquals(Bytes.pattern(length, 7), data);
            if (dd) {
                assertEquals(Bytes.crc32c(data, 0, length), c.getInt(24 + h4 + length), "DDGST over all segments");
            }
            assertCapsuleResp(pdus.get(1), 0x31, 0, hd);
            assertEquals(3, h.core.releases.size());
            h.core.assertEachReleasedOnce();
            h.assertClean();
            h.core.assertEachReleasedOnce();
        }
    }

    @Test
    void successFlagReplacesCapsuleRespWithoutSqFlowControl() {
        TargetHarness h = connected(1, 0x04, 0); // CATTR bit 2: SQ flow control disabled (nvmeof-protocol.md §2.2)
        h.feed(Bytes.capsule(Bytes.sqe(0x02, 0x40, 0x5A, 4096), null, false, false));
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size(), "no CapsuleResp after SUCCESS");
        assertEquals(PduHeader.FLAG_LAST_PDU | PduHeader.FLAG_SUCCESS, pdus.get(0)[1]);

        // A failed read sends no data and a CapsuleResp.
        h.core.readStatus = Status.LBA_OUT_OF_RANGE;
        h.feed(Bytes.capsule(Bytes.sqe(0x02, 0x41, 0x5A, 4096), null, false, false));
        pdus = h.drainPdus();
        assertEquals(1, pdus.size());
        assertCapsuleResp(pdus.get(0), 0x41, Status.LBA_OUT_OF_RANGE, false);
        h.core.assertEachReleasedOnce();
        h.assertClean();

        // With flow control on, SUCCESS is never used.
        TargetHarness normal = connected(1, 0, 0);
        normal.feed(Bytes.capsule(Bytes.sqe(0x02, 0x42, 0x5A, 4096), null, false, false));
        pdus = normal.drainPdus();
        assertEquals(2, pdus.size());
        assertEquals(PduHeader.FLAG_LAST_PDU, pdus.get(0)[1]);
        normal.assertClean();
    }

    @Test
    void noDataCommandAndSteadyStateReusesSlotsAndBuffers() {
        TargetHarness h = connected(1, 0, 3);
        h.core.dw0 = 0xCAFE;
        h.feed(Bytes.capsule(Bytes.sqe(0x18, 9, 0x5A, 0), null, true, true));
        List<byte[]> pdus = h.drainPdus();
        assertCapsuleResp(pdus.get(0), 9, 0, true);
        assertEquals(0xCAFE, Bytes.view(pdus.get(0)).getInt(8));

        int slots = h.handler.slotCount();
        int views = h.handler.segmentPool().created();
        int buffers = h.handler.dataPool().created();
        for (int i = 0; i < 200; i++) {
            h.feed(Bytes.capsule(Bytes.sqe(0x02, i, 0x5A, 4096), null, true, true));
            h.feed(Bytes.capsule(Bytes.sqe(0x01, i, 0x01, 4096), Bytes.pattern(4096, i), true, true));
            assertEquals(3, h.drainPdus().size());
        }
        assertEquals(slots, h.handler.slotCount(), "slots are reused");
        assertEquals(Math.max(views, 3), h.handler.segmentPool().created(), "segment views are reused");
        assertEquals(buffers, h.handler.dataPool().created(), "write buffers are reused");
        h.core.assertEachReleasedOnce();
        h.assertClean();
    }

    // ----------------------------------------------------------------------------------------------- batching

    /** The messages the target wrote so far, each as its bytes (every one released). */
    private static List<byte[]> drainMessages(TargetHarness h) {
        h.channel.runPendingTasks();
        List<byte[]> messages = new ArrayList<>();
        for (Object o; (o = h.channel.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            byte[] a = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), a);
            b.release();
            messages.add(a);
        }
        return messages;
    }

    /** No-data commands (opcode 0x18) with CIDs [from, to), back to back. */
    private static void noDataCommands(ByteArrayOutputStream burst, int from, int to, boolean hd) {
        for (int cid = from; cid < to; cid++) {
            burst.writeBytes(Bytes.capsule(Bytes.sqe(0x18, cid, 0x5A, 0), null, hd, false));
        }
    }

    @Test
    void aBurstOfCompletionsIsOneMessageWithTheReadDataBetween() {
        TargetHarness h = connected(1, 0, 0);
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        noDataCommands(burst, 0, 20, false);
        burst.writeBytes(Bytes.capsule(Bytes.sqe(0x02, 100, 0x5A, 4096), null, false, false));
        noDataCommands(burst, 20, 40, false);
        h.feed(burst.toByteArray());
        List<byte[]> messages = drainMessages(h);
        // 20 CapsuleResps and the read's C2HData header; its 3 data segments as they are; its CapsuleResp and 20 more.
        assertEquals(1 + h.core.readSegments + 1, messages.size(), "messages");
        assertEquals(20 * 24 + 24, messages.get(0).length);
        assertEquals(21 * 24, messages.get(messages.size() - 1).length);
        List<byte[]> pdus = Bytes.split(Bytes.concat(messages.toArray(new byte[0][])));
        assertEquals(42, pdus.size());
        for (int i = 0; i < 20; i++) {
            assertCapsuleResp(pdus.get(i), i, 0, false);
        }
        assertEquals(0x07, pdus.get(20)[0], "C2HData after the first 20 responses");
        assertEquals(24 + 4096, pdus.get(20).length);
        assertCapsuleResp(pdus.get(21), 100, 0, false);
        for (int i = 20; i < 40; i++) {
            assertCapsuleResp(pdus.get(i + 2), i, 0, false);
        }
        h.core.assertEachReleasedOnce();
        h.assertClean();
    }

    @Test
    void eachSocketReadsCompletionsGoOutBeforeTheNextRead() {
        // A burst of in-capsule writes longer than one socket read, as 32 writes of 4 KiB are in 64 KiB reads: what a
        // read completed is flushed before the next read is processed (ReadBoundary), not only at the burst's end.
        TargetHarness h = connected(1, 0, 0);
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        for (int cid = 0; cid < 5; cid++) {
            burst.writeBytes(Bytes.capsule(Bytes.sqe(0x01, cid, 0x01, 4096), Bytes.pattern(4096, cid), false, false));
        }
        byte[] all = burst.toByteArray();
        int cut = 3 * (72 + 4096) + 100; // three whole writes and the start of the fourth
        h.read(Arrays.copyOfRange(all, 0, cut));
        List<byte[]> first = drainMessages(h);
        assertEquals(1, first.size(), "the first read's completions, flushed before the second read");
        List<byte[]> pdus = Bytes.split(first.get(0));
        assertEquals(3, pdus.size());
        for (int cid = 0; cid < 3; cid++) {
            assertCapsuleResp(pdus.get(cid), cid, 0, false);
        }
        h.read(Arrays.copyOfRange(all, cut, all.length));
        List<byte[]> second = drainMessages(h);
        assertEquals(1, second.size(), "the second read's completions");
        pdus = Bytes.split(second.get(0));
        assertEquals(2, pdus.size());
        assertCapsuleResp(pdus.get(0), 3, 0, false);
        assertCapsuleResp(pdus.get(1), 4, 0, false);
        h.endReadBurst();
        assertEquals(0, drainMessages(h).size(), "nothing left for the end of the burst");
        for (int cid = 0; cid < 5; cid++) {
            assertArrayEquals(Bytes.pattern(4096, cid), h.core.received.get(1 + cid), "data of CID " + cid);
        }
        h.assertClean();
    }

    @Test
    void capsulesOfOneSocketReadShareOneArrivalTime() throws InterruptedException {
        // One clock read per socket read: the capsules a read completes arrived together; a capsule split across two
        // reads arrived with the second.
        TargetHarness h = connected(1, 0, 0);
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        for (int cid = 0; cid < 3; cid++) {
            burst.writeBytes(Bytes.capsule(Bytes.sqe(0x00, cid, 0x01, 0), new byte[0], false, false));
        }
        byte[] all = burst.toByteArray();
        int cut = 2 * 72 + 30; // two whole capsules and the start of the third
        int before = h.core.arrivals.size();
        long t0 = System.nanoTime();
        h.read(Arrays.copyOfRange(all, 0, cut));
        long t1 = System.nanoTime();
        Thread.sleep(2);
        h.read(Arrays.copyOfRange(all, cut, all.length));
        h.endReadBurst();
        List<Long> a = h.core.arrivals.subList(before, h.core.arrivals.size());
        assertEquals(3, a.size());
        assertTrue(a.get(0) >= t0 && a.get(0) <= t1, "stamped during the first read");
        assertEquals(a.get(0), a.get(1), "the first read's two capsules share its time");
        assertTrue(a.get(2) - t1 >= 2_000_000, "the third capsule completed in the second read, 2 ms later");
        drainMessages(h);
        h.assertClean();
    }

    @Test
    void aBurstLargerThanOneBatchContinuesInTheNext() {
        TargetHarness h = connected(1, 0, 1); // header digests: 28-byte CapsuleResps
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        int n = 200; // more than PduBatch.CAPACITY / 28
        noDataCommands(burst, 0, n, true);
        h.feed(burst.toByteArray());
        List<byte[]> messages = drainMessages(h);
        int perBatch = PduBatch.CAPACITY / 28;
        assertEquals((n + perBatch - 1) / perBatch, messages.size());
        List<byte[]> pdus = Bytes.split(Bytes.concat(messages.toArray(new byte[0][])));
        assertEquals(n, pdus.size());
        for (int i = 0; i < n; i++) {
            assertCapsuleResp(pdus.get(i), i, 0, true);
        }
        h.assertClean();
    }

    @Test
    void completionsGatheredBeforeAFaultGoOutBeforeTheTermReq() {
        // The decoder's fault (a wrong HLEN) and the handler's (H2CData for a TTAG awaiting nothing), each after three
        // commands completed in the same read.
        byte[] badHlen = Bytes.capsule(Bytes.sqe(0x18, 9, 0x5A, 0), null, false, false);
        badHlen[2] = 0x40;
        byte[] unknownTtag = Bytes.h2cData(7, 99, 0, Bytes.pattern(512, 0), true, false, false);
        int[][] expected = {{1, 2}, {1, 10}}; // FES, FEI
        byte[][] faults = {badHlen, unknownTtag};
        for (int f = 0; f < faults.length; f++) {
            TargetHarness h = connected(1, 0, 0);
            ByteArrayOutputStream burst = new ByteArrayOutputStream();
            noDataCommands(burst, 0, 3, false);
            burst.writeBytes(faults[f]);
            h.feed(burst.toByteArray());
            List<byte[]> pdus = h.drainPdus();
            assertEquals(4, pdus.size(), "three CapsuleResps, then the C2HTermReq");
            for (int cid = 0; cid < 3; cid++) {
                assertCapsuleResp(pdus.get(cid), cid, 0, false);
            }
            assertTermReq(pdus.get(3), expected[f][0], expected[f][1]);
            assertFalse(h.channel.isOpen());
            h.assertClean();
        }
    }

    @Test
    void gatheredPdusNeverSentAreReleasedWhenTheConnectionCloses() {
        TargetHarness h = connected(1, 0, 0);
        h.feed(Bytes.capsule(Bytes.sqe(FakeCore.HOLD_OPCODE, 5, 0x5A, 0), null, false, false));
        TargetRequest held = h.core.held.remove(0);
        held.response().status(0);
        held.complete(); // gathered; the flush is a task not run yet
        h.channel.pipeline().close(); // as the core or a fault closes it: no flush first
        assertEquals(0, h.drain().length, "nothing written after the close");
        h.assertClean(); // the gathered CapsuleResp's buffer was released
    }

    @Test
    void executeRunsOnTheQueueThreadAndIsDroppedAfterClose() {
        TargetHarness h = connected(1, 0, 0);
        AtomicInteger ran = new AtomicInteger();
        assertTrue(h.core.channel.inQueueThread());
        h.core.channel.execute(ran::incrementAndGet);
        h.channel.runPendingTasks();
        assertEquals(1, ran.get());
        h.core.channel.close();
        assertFalse(h.core.channel.isOpen());
        h.core.channel.execute(ran::incrementAndGet);
        h.channel.runPendingTasks();
        assertEquals(1, ran.get());
        assertEquals(1, h.core.closes);
        h.assertClean();
        assertEquals(1, h.core.closes, "onClose exactly once");
    }

    @Test
    void asynchronousCompletionIsFlushed() {
        TargetHarness h = connected(1, 0, 0);
        h.feed(Bytes.capsule(Bytes.sqe(FakeCore.HOLD_OPCODE, 5, 0x5A, 0), null, false, false));
        assertEquals(0, h.drain().length);
        TargetRequest held = h.core.held.remove(0);
        h.core.channel.execute(() -> {
            held.response().status(0);
            held.complete();
        });
        List<byte[]> pdus = h.drainPdus(); // drain runs the pending tasks, including the flush
        assertEquals(1, pdus.size());
        assertCapsuleResp(pdus.get(0), 5, 0, false);
        assertThrows(IllegalStateException.class, held::complete, "a completed request is not the core's any more");
        h.assertClean();
    }

    @Test
    void closeReleasesEverythingHeldExactlyOnce() {
        TargetHarness h = connected(1, 0, 0);
        // A read holding two segments, an R2T write waiting for data, an in-capsule write holding a buffer.
        h.feed(Bytes.capsule(Bytes.sqe(FakeCore.HOLD_OPCODE, 1, 0x5A, 8192), null, false, false));
        TargetRequest read = h.core.held.get(0);
        ByteBuffer src = FakeCore.pattern(8192);
        read.addData(src, 0, 4096, h.core.counted());
        read.addData(src, 4096, 4096, h.core.counted());
        assertThrows(
                IllegalArgumentException.class,
                () -> read.addData(src, 0, 1, h.core.counted()),
                "more than dataLength");
        h.feed(Bytes.capsule(Bytes.sqe(FakeCore.HOLD_OPCODE | 0x01, 2, 0x5A, 8192), null, false, false));
        h.feed(Bytes.capsule(
                Bytes.sqe(FakeCore.HOLD_OPCODE | 0x01, 3, 0x01, 512), Bytes.pattern(512, 0), false, false));
        assertEquals(3, h.core.held.size());
        assertEquals(1, h.drainPdus().size(), "one R2T");
        // The R2T write holds a pooled buffer; the in-capsule write holds its CapsuleCmd PDU's buffer instead.
        assertEquals(1, h.handler.dataPool().outstanding());
        assertEquals(Bytes.pattern(512, 0)[511], h.core.held.get(2).data().get(511));

        h.channel.close();
        assertEquals(1, h.core.closes);
        h.core.assertEachReleasedOnce();
        // A late completion after onClose is tolerated and releases nothing twice.
        read.complete();
        h.core.assertEachReleasedOnce();
        assertEquals(0, h.handler.dataPool().outstanding());
        h.assertClean();
    }

    // ----------------------------------------------------------------------------------------------- SGL checks

    @Test
    void badDataPointersBecomeTransportStatusesAndTheDataIsStillConsumed() {
        TargetHarness h = connected(0, 0, 0); // admin queue: in-capsule limit 8192
        // Keyed SGL (RDMA) on TCP.
        h.feed(Bytes.capsule(Bytes.sqe(0x06, 10, 0x40, 4096), null, false, false));
        // 10000 bytes in-capsule on the admin queue (> 8192).
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 11, 0x01, 10000), Bytes.pattern(10000, 1), false, false));
        // In-capsule data on a read.
        h.feed(Bytes.capsule(Bytes.sqe(0x02, 12, 0x01, 512), Bytes.pattern(512, 1), false, false));
        // SGL LENGTH disagrees with PLEN.
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 13, 0x01, 600), Bytes.pattern(512, 1), false, false));
        // Then a good command on the same connection.
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 14, 0x01, 512), Bytes.pattern(512, 2), false, false));
        List<byte[]> pdus = h.drainPdus();
        assertEquals(5, pdus.size());
        assertCapsuleResp(pdus.get(0), 10, Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID), false);
        assertCapsuleResp(pdus.get(1), 11, Status.dnr(Status.SGL_OFFSET_INVALID), false);
        assertCapsuleResp(pdus.get(2), 12, Status.dnr(Status.INVALID_FIELD), false);
        assertCapsuleResp(pdus.get(3), 13, Status.dnr(Status.DATA_SGL_LENGTH_INVALID), false);
        assertCapsuleResp(pdus.get(4), 14, 0, false);
        assertArrayEquals(Bytes.pattern(512, 2), h.core.received.get(1));
        assertTrue(h.channel.isOpen());
        h.assertClean();
    }

    @Test
    void zeroLengthSglOfEveryTypeIsNoData() {
        // Third-party hosts send Keep Alive, Flush and Property Get/Set with an all-zero SGL1 (type 0h, length 0);
        // nvmet ignores a descriptor of LENGTH 0 whatever its type (nvmet_tcp_map_data). Every type, every subtype.
        TargetHarness h = connected(0, 0, 0);
        int cid = 100;
        for (int type = 0; type < 16; type++) {
            for (int subtype : new int[] {0x0, 0x1, 0xA, 0xF}) {
                int id = (type << 4) | subtype;
                byte[] sqe = Bytes.sqe(0x18, cid, id, 0); // Keep Alive
                if (type == 0x4) {
                    ByteBuffer.wrap(sqe).put(35, (byte) 0x7F); // a keyed descriptor's KEY may be anything
                }
                h.feed(Bytes.capsule(sqe, null, false, false));
                List<byte[]> pdus = h.drainPdus();
                assertEquals(1, pdus.size());
                assertCapsuleResp(pdus.get(0), cid, 0, false);
                cid++;
            }
        }
        assertTrue(h.channel.isOpen());
        h.assertClean();
    }

    @Test
    void ioQueueInCapsuleLimitIsThePortSetting() {
        TargetHarness h = connected(1, 0, 0);
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 20, 0x01, 16384), Bytes.pattern(16384, 1), false, false));
        assertCapsuleResp(h.drainPdus().get(0), 20, 0, false);
        h.assertClean();
    }

    // ----------------------------------------------------------------------------------------------- digests

    @Test
    void dataDigestMismatchFailsTheCommandNotTheQueue() {
        TargetHarness h = connected(1, 0, 3);
        byte[] capsule = Bytes.capsule(Bytes.sqe(0x01, 30, 0x01, 512), Bytes.pattern(512, 1), true, true);
        capsule[capsule.length - 1] ^= 0x55; // corrupt DDGST
        h.feed(capsule);
        assertCapsuleResp(h.drainPdus().get(0), 30, Status.DATA_TRANSFER_ERROR, true);

        h.feed(Bytes.capsule(Bytes.sqe(0x01, 31, 0x5A, 8192), null, true, true));
        int ttag = Bytes.view(h.drainPdus().get(0)).getShort(10);
        byte[] first = Bytes.h2cData(31, ttag, 0, Bytes.pattern(4096, 1), false, true, true);
        first[first.length - 2] ^= 0x01;
        h.feed(first);
        h.feed(Bytes.h2cData(31, ttag, 4096, Bytes.pattern(4096, 2), true, true, true));
        assertCapsuleResp(h.drainPdus().get(0), 31, Status.DATA_TRANSFER_ERROR, true);
        assertEquals(List.of(0, Status.DATA_TRANSFER_ERROR), h.core.dataStatuses.subList(0, 2));
        assertTrue(h.channel.isOpen());
        h.assertClean();
    }

    @Test
    void headerDigestMismatchTerminates() {
        TargetHarness h = connected(1, 0, 1);
        byte[] capsule = Bytes.capsule(Bytes.sqe(0x18, 40, 0x5A, 0), null, true, false);
        capsule[72] ^= 0x01;
        int received = Bytes.view(capsule).getInt(72);
        h.feedByteByByte(capsule);
        byte[] term = assertTerminated(h, 3, received);
        assertEquals(24 + 72, term.length, "the CapsuleCmd header is quoted");
        h.assertClean();
    }

    @Test
    void missingDigestFlagTerminates() {
        TargetHarness h = connected(1, 0, 1);
        h.feed(Bytes.capsule(Bytes.sqe(0x18, 40, 0x5A, 0), null, false, false));
        assertTerminated(h, 1, 1);
        h.assertClean();
    }

    // ----------------------------------------------------------------------------------------------- bad streams

    @Test
    void garbageTerminatesAtOnce() {
        TargetHarness h = new TargetHarness();
        h.feedByteByByte("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        byte[] term = assertTerminated(h, 1, 0);
        assertEquals(24 + 8, term.length, "only the 8 bytes of the bogus common header are quoted");
        assertEquals('G', term[24]);
        h.assertClean();
    }

    /**
     * A fault whose TermReq write closes the connection at once, inside the decoder's fault handling (an
     * {@code EmbeddedChannel} runs its pending tasks, the channel-inactive event among them, at the end of a write
     * and a close made by a handler): one TermReq, the rest of the read dropped, no second fault, nothing leaked. (The
     * queue's close comes before the decoder reports the fault here, so its cause is not checked; on a socket the
     * close's events come later.)
     */
    @Test
    void aCloseInsideTheTermReqsWriteEndsTheQueueOnce() {
        TargetHarness h = connected(1, 0, 0);
        byte[] capsule = Bytes.capsule(Bytes.sqe(0x18, 1, 0x5A, 0), null, false, false);
        capsule[0] = 0x18; // no such PDU type
        byte[] twice = new byte[2 * capsule.length];
        System.arraycopy(capsule, 0, twice, 0, capsule.length);
        System.arraycopy(capsule, 0, twice, capsule.length, capsule.length);
        h.read(twice); // through the pipeline as a socket read comes, not EmbeddedChannel's writeInbound
        h.endReadBurst();
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size(), "one C2HTermReq");
        assertTermReq(pdus.get(0), 1, 0);
        assertFalse(h.channel.isOpen());
        assertEquals(1, h.core.closes, "the queue closed once");
        try {
            h.channel.checkException(); // the fault's report, after the handlers left the closed pipeline
        } catch (Exception e) { // rethrown as it was recorded, a checked exception among them
            assertEquals(1, assertInstanceOf(NvmeTcpProtocolException.class, e).fes());
        }
        h.assertClean();
    }

    @Test
    void capsuleBeforeIcReqIsASequenceError() {
        TargetHarness h = new TargetHarness();
        h.feed(Bytes.capsule(Bytes.connectSqe(1, 0, 31, 0), Bytes.pattern(1024, 0), false, false));
        assertTerminated(h, 2, 0);
        assertTrue(h.core.events.stream().noneMatch(e -> e.startsWith("cmd")), "the core saw no command");
        h.assertClean();
    }

    @Test
    void secondIcReqIsASequenceError() {
        TargetHarness h = new TargetHarness();
        h.connectIc(0);
        h.feed(Bytes.icReq(0));
        assertTerminated(h, 2, 0);
        h.assertClean();
    }

    @Test
    void wrongHlenTerminates() {
        TargetHarness h = connected(1, 0, 0);
        byte[] capsule = Bytes.capsule(Bytes.sqe(0x18, 1, 0x5A, 0), null, false, false);
        capsule[2] = 0x40;
        h.feed(capsule);
        assertTerminated(h, 1, 2);
        h.assertClean();
    }

    @Test
    void plenTooSmallTerminates() {
        TargetHarness h = connected(1, 0, 0);
        byte[] capsule = Bytes.capsule(Bytes.sqe(0x18, 1, 0x5A, 0), null, false, false);
        Bytes.view(capsule).putInt(4, 60);
        h.feed(capsule);
        assertTerminated(h, 1, 4);
        h.assertClean();
    }

    @Test
    void plenTooLargeTerminatesBeforeBufferingTheBody() {
        TargetHarness h = connected(1, 0, 0);
        byte[] header = Bytes.capsule(Bytes.sqe(0x01, 1, 0x01, 1 << 20), null, false, false);
        ByteBuffer b = Bytes.view(header);
        b.put(3, (byte) 72).putInt(4, 72 + (1 << 20));
        byte[] first8 = new byte[8];
        System.arraycopy(header, 0, first8, 0, 8);
        h.feedByteByByte(first8); // the common header alone is enough to refuse it
        assertTerminated(h, 5, 0);
        h.assertClean();
    }

    @Test
    void controllerToHostTypeFromTheHostTerminates() {
        TargetHarness h = connected(1, 0, 0);
        byte[] resp = new byte[24];
        Bytes.view(resp).put(0, (byte) 0x05).put(2, (byte) 24).putInt(4, 24);
        h.feed(resp);
        assertTerminated(h, 1, 0);
        h.assertClean();
    }

    @Test
    void h2cDataForAnUnknownTtagTerminates() {
        TargetHarness h = connected(1, 0, 0);
        h.feed(Bytes.h2cData(7, 99, 0, Bytes.pattern(512, 0), true, false, false));
        assertTerminated(h, 1, 10);
        h.assertClean();
    }

    @Test
    void h2cDataOutOfOrderTerminates() {
        TargetHarness h = connected(1, 0, 0);
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 50, 0x5A, 8192), null, false, false));
        int ttag = Bytes.view(h.drainPdus().get(0)).getShort(10);
        h.feed(Bytes.h2cData(50, ttag, 4096, Bytes.pattern(4096, 0), true, false, false));
        assertTerminated(h, 1, 12);
        assertEquals(0, h.handler.dataPool().outstanding(), "the waiting write buffer was released on close");
        h.assertClean();
    }

    @Test
    void h2cDataBeyondTheTransferOrWithWrongCidTerminates() {
        TargetHarness h = connected(1, 0, 0);
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 51, 0x5A, 4096), null, false, false));
        int ttag = Bytes.view(h.drainPdus().get(0)).getShort(10);
        h.feed(Bytes.h2cData(51, ttag, 0, Bytes.pattern(8192, 0), true, false, false));
        assertTerminated(h, 4, 0);
        h.assertClean();

        TargetHarness c = connected(1, 0, 0);
        c.feed(Bytes.capsule(Bytes.sqe(0x01, 52, 0x5A, 4096), null, false, false));
        ttag = Bytes.view(c.drainPdus().get(0)).getShort(10);
        c.feed(Bytes.h2cData(53, ttag, 0, Bytes.pattern(4096, 0), true, false, false));
        assertTerminated(c, 1, 8);
        c.assertClean();
    }

    @Test
    void h2cDataWithDatalDisagreeingWithPlenTerminates() {
        TargetHarness h = connected(1, 0, 0);
        h.feed(Bytes.capsule(Bytes.sqe(0x01, 54, 0x5A, 4096), null, false, false));
        int ttag = Bytes.view(h.drainPdus().get(0)).getShort(10);
        byte[] pdu = Bytes.h2cData(54, ttag, 0, Bytes.pattern(4096, 0), true, false, false);
        Bytes.view(pdu).putInt(16, 4000);
        h.feed(pdu);
        assertTerminated(h, 1, 16);
        h.assertClean();
    }

    @Test
    void h2cTermReqClosesWithoutAnswer() {
        TargetHarness h = connected(1, 0, 0);
        byte[] term = new byte[24 + 8];
        Bytes.view(term).put(0, (byte) 0x02).put(2, (byte) 24).putInt(4, 32).putShort(8, (short) 2);
        h.feedByteByByte(term);
        assertEquals(0, h.drain().length, "no TermReq is answered with a TermReq");
        assertFalse(h.channel.isOpen());
        assertEquals(1, h.core.closes);
        NvmeTcpProtocolException e = assertInstanceOf(NvmeTcpProtocolException.class, h.core.closeCause);
        assertEquals(2, e.fes());
        h.assertClean();
    }

    @Test
    void tooManyOutstandingCommandsTerminate() {
        TargetHarness h = connected(1, 0, 0);
        for (int i = 0; i < 2 * IO_QUEUE_SIZE; i++) {
            h.feed(Bytes.capsule(Bytes.sqe(FakeCore.HOLD_OPCODE, i, 0x5A, 0), null, false, false));
        }
        assertTrue(h.channel.isOpen());
        h.feed(Bytes.capsule(Bytes.sqe(FakeCore.HOLD_OPCODE, 999, 0x5A, 0), null, false, false));
        assertTerminated(h, 2, 0);
        h.assertClean();
    }
}

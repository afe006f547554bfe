package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.nvmeof.core.command.Status;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The host pipeline (PduBatch + HOST-role decoder + NvmeTcpHostHandler) in an EmbeddedChannel, controller bytes fed
 * one at a time.
 */
class NvmeTcpHostHandlerTest {
    private static final int READ = 0x02;
    private static final int WRITE = 0x01;
    private static final int KEEP_ALIVE = 0x18;

    private static ByteBuffer direct(byte[] content, int offset, int capacity) {
        ByteBuffer b = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
        b.put(offset, content);
        return b;
    }

    private static byte[] bytes(ByteBuffer b, int offset, int length) {
        byte[] a = new byte[length];
        b.get(offset, a);
        return a;
    }

    // ---------------------------------------------------------------------------------------------------------
    // ICReq / ICResp (nvmeof-protocol.md §5.4)

    @Test
    void icReqIsTheConservativeProfile() {
        HostHarness h = new HostHarness(true, true);
        byte[] icReq = h.drain();
        byte[] expected = new byte[128];
        System.arraycopy(Bytes.hex("00 00 80 00 80 00 00 00 00 00 00 03 00 00 00 00"), 0, expected, 0, 16);
        assertArrayEquals(expected, icReq, "PFV 0, HPDA 0, DGST 3, MAXR2T 0");
        h.feedByteByByte(HostHarness.icResp(0, 0, 3, 131072));
        assertTrue(h.queue.ready().isDone());
        assertTrue(h.queue.headerDigest() && h.queue.dataDigest());
        assertEquals(131072, h.queue.maxH2cData());
        h.queue.close();
        assertEquals(1, h.closeCalls);
        assertNull(h.closes.get(0), "orderly close");
        h.assertClean();
    }

    static Stream<Arguments> badIcResps() {
        return Stream.of(
                Arguments.of(
                        true,
                        false,
                        HostHarness.icResp(1, 0, 1, 131072),
                        "controller at 127.0.0.1:4420 answered ICReq with PFV 1 (only 0 exists)"),
                Arguments.of(
                        true,
                        false,
                        HostHarness.icResp(0, 0, 0, 131072),
                        "controller at 127.0.0.1:4420 refused header digests"),
                Arguments.of(
                        true,
                        true,
                        HostHarness.icResp(0, 0, 1, 131072),
                        "controller at 127.0.0.1:4420 refused data digests"),
                Arguments.of(
                        false,
                        false,
                        HostHarness.icResp(0, 0, 2, 131072),
                        "controller at 127.0.0.1:4420 enabled data digests that were not asked for"),
                Arguments.of(
                        false,
                        false,
                        HostHarness.icResp(0, 1, 0, 131072),
                        "controller at 127.0.0.1:4420 asks for PDU data alignment CPDA 1 (only 0 is supported, as on Linux)"),
                Arguments.of(
                        false,
                        false,
                        HostHarness.icResp(0, 0, 0, 2048),
                        "controller at 127.0.0.1:4420 sent MAXH2CDATA 2048 (must be a multiple of 4 and at least 4096)"),
                Arguments.of(
                        false,
                        false,
                        HostHarness.icResp(0, 0, 0, 8190),
                        "controller at 127.0.0.1:4420 sent MAXH2CDATA 8190 (must be a multiple of 4 and at least 4096)"),
                Arguments.of(false, false, withPlen(HostHarness.icResp(0, 0, 0, 131072), 132), "IC PDU with PLEN 132"),
                Arguments.of(false, false, Bytes.hex("05 00 18 00 18 00 00 00"), "CapsuleResp before ICResp"));
    }

    private static byte[] withPlen(byte[] pdu, int plen) {
        Bytes.view(pdu).putInt(4, plen);
        return pdu;
    }

    @ParameterizedTest
    @MethodSource("badIcResps")
    void badIcRespFailsTheConnectWithAClearMessage(boolean hd, boolean dd, byte[] icResp, String message) {
        HostHarness h = new HostHarness(hd, dd);
        h.drain();
        h.feedByteByByte(icResp);
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> h.queue.ready().get());
        assertInstanceOf(IOException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains(message), e.getCause().getMessage());
        assertFalse(h.channel.isOpen(), "closed");
        assertFalse(h.queue.isOpen());
        assertEquals(0, h.drain().length, "no H2CTermReq (nvmeof-protocol.md §7.8)");
        assertEquals(1, h.closeCalls);
        assertThrows(IllegalStateException.class, () -> h.queue.submit(new TestCommand(KEEP_ALIVE, 1)));
        h.assertClean();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Commands

    @Test
    void noDataCommandAndCidReuse() {
        HostHarness h = new HostHarness(true, false).connect(131072);
        TestCommand ka = new TestCommand(KEEP_ALIVE, 5);
        h.queue.submit(ka);
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size());
        ByteBuffer cmd = Bytes.view(pdus.get(0));
        assertEquals("04 01 48 00 4c 00 00 00", Bytes.hex(bytes(cmd, 0, 8)), "HDGSTF, PDO 0, PLEN 76");
        assertEquals(Bytes.crc32c(pdus.get(0), 0, 72), cmd.getInt(72), "HDGST");
        assertEquals(0x18, cmd.get(8));
        assertEquals(5, cmd.getShort(10));
        assertEquals(0x5A, cmd.get(8 + 39) & 0xFF, "SGL 0x5A");
        assertEquals(0, cmd.getInt(8 + 32), "LENGTH 0");

        assertThrows(
                IllegalStateException.class, () -> h.queue.submit(new TestCommand(KEEP_ALIVE, 5)), "CID in flight");
        assertThrows(
                IllegalArgumentException.class, () -> h.queue.submit(new TestCommand(KEEP_ALIVE, 32)), "out of range");
        assertEquals(0, h.drain().length);

        h.feedByteByByte(h.capsuleResp(5, 0, 0x1234));
        assertEquals(1, ka.responses.get());
        assertEquals(0, ka.status);
        assertEquals(0x1234, ka.dw0);
        assertEquals(5, ka.cid);
        h.queue.submit(ka.reset()); // free again
        assertEquals(1, h.drainPdus().size());
        h.feedByteByByte(h.capsuleResp(5, Status.dnr(Status.INVALID_FIELD), 0));
        assertEquals(Status.dnr(Status.INVALID_FIELD), ka.status, "an NVMe error is a status");
        assertTrue(h.queue.isOpen());
        h.queue.close();
        h.assertClean();
    }

    @Test
    void aCallbackMayResubmitItsCid() {
        HostHarness h = new HostHarness(false, false).connect(131072);
        int[] rounds = {0};
        TestCommand c = new TestCommand(KEEP_ALIVE, 3) {
            @Override
            public void onResponse(io.nvmeof.core.wire.CompletionQueueEntry response) {
                super.onResponse(response);
                if (++rounds[0] < 3) {
                    h.queue.submit(this);
                }
            }
        };
        h.queue.submit(c);
        for (int i = 0; i < 3; i++) {
            assertEquals(1, h.drainPdus().size());
            h.feedByteByByte(h.capsuleResp(3, 0, 0));
        }
        assertEquals(3, c.responses.get());
        assertEquals(0, h.drain().length);
        h.queue.close();
        h.assertClean();
    }

    @Test
    void commandsSubmittedFromCallbacksGoOutAfterEachSocketRead() {
        // Completions arriving in several socket reads of one read burst, each callback submitting its CID again (as
        // a queue-depth workload does): what a read's callbacks submitted is flushed before the next read is
        // processed (ReadBoundary), so the controller gets them while the rest of the burst is still being read.
        HostHarness h = new HostHarness(false, false).connect(131072);
        List<TestCommand> commands = new ArrayList<>();
        for (int cid = 0; cid < 4; cid++) {
            boolean[] again = {true};
            TestCommand c = new TestCommand(KEEP_ALIVE, cid) {
                @Override
                public void onResponse(io.nvmeof.core.wire.CompletionQueueEntry response) {
                    super.onResponse(response);
                    if (again[0]) {
                        again[0] = false;
                        h.queue.submit(this);
                    }
                }
            };
            commands.add(c);
            h.queue.submit(c);
        }
        assertEquals(4, h.drainPdus().size());
        ByteArrayOutputStream responses = new ByteArrayOutputStream();
        for (int cid = 0; cid < 4; cid++) {
            responses.writeBytes(h.capsuleResp(cid, 0, 0));
        }
        byte[] all = responses.toByteArray();
        int cut = 2 * 24 + 10; // two CapsuleResps and the start of the third
        h.read(Arrays.copyOfRange(all, 0, cut));
        ByteBuf first = h.channel.readOutbound();
        assertNotNull(first, "the first read's resubmissions, flushed before the second read");
        assertEquals(2 * 72, first.readableBytes());
        first.release();
        assertNull(h.channel.readOutbound());
        h.read(Arrays.copyOfRange(all, cut, all.length));
        List<byte[]> second = h.drainPdus();
        assertEquals(2, second.size(), "the second read's resubmissions");
        assertEquals(2, Bytes.view(second.get(0)).getShort(10), "CID");
        assertEquals(3, Bytes.view(second.get(1)).getShort(10), "CID");
        h.endReadBurst();
        assertEquals(0, h.drain().length, "nothing left for the end of the burst");
        for (TestCommand c : commands) {
            assertEquals(1, c.responses.get());
        }
        h.queue.close();
        h.assertClean();
    }

    @Test
    void badDataDescriptionsAreRefusedWithoutTakingTheCid() {
        HostHarness h = new HostHarness(false, false).connect(131072);
        ByteBuffer small = ByteBuffer.allocate(100);
        assertThrows(
                IllegalArgumentException.class, () -> h.queue.submit(new TestCommand(READ, 1).data(small, 50, 51)));
        assertThrows(IllegalArgumentException.class, () -> h.queue.submit(new TestCommand(READ, 1).data(null, 0, 8)));
        assertThrows(
                IllegalArgumentException.class,
                () -> h.queue.submit(new TestCommand(READ, 1).data(small.asReadOnlyBuffer(), 0, 8)));
        assertThrows(
                IllegalArgumentException.class,
                () -> h.queue.submit(new TestCommand(0x03, 1).data(small, 0, 8)),
                "bidirectional");
        assertThrows(
                IllegalArgumentException.class,
                () -> h.queue.submit(new TestCommand(KEEP_ALIVE, 1).data(small, 0, 8)),
                "a no-data opcode with data");
        h.queue.submit(new TestCommand(READ, 1).data(small, 0, 100)); // the CID was never taken
        assertEquals(1, h.drainPdus().size());
        h.queue.close();
        h.assertClean();
    }

    @Test
    void inCapsuleWriteWithDigests() {
        HostHarness h = new HostHarness(true, true).connect(131072);
        h.queue.maxInCapsuleData(8192);
        byte[] data = Bytes.pattern(4096, 9);
        TestCommand w = new TestCommand(WRITE, 7).data(direct(data, 64, 8192), 64, 4096);
        h.queue.submit(w);
        List<byte[]> pdus = h.drainPdus();
        assertEquals(1, pdus.size());
        byte[] p = pdus.get(0);
        ByteBuffer v = Bytes.view(p);
        assertEquals(72 + 4 + 4096 + 4, p.length);
        assertEquals("04 03 48 4c", Bytes.hex(bytes(v, 0, 4)), "HDGSTF|DDGSTF, HLEN 72, PDO 76");
        assertEquals(72 + 4 + 4096 + 4, v.getInt(4));
        assertEquals(Bytes.crc32c(p, 0, 72), v.getInt(72));
        assertEquals(0x01, v.get(8 + 39), "SGL 0x01 (data block, offset)");
        assertEquals(0L, v.getLong(8 + 24), "ADDRESS 0 (ICDOFF)");
        assertEquals(4096, v.getInt(8 + 32));
        assertArrayEquals(data, bytes(v, 76, 4096));
        assertEquals(Bytes.crc32c(data, 0, 4096), v.getInt(76 + 4096), "DDGST");
        assertEquals(0x01, w.sqe.sgl().identifier(), "SGL1 filled in the caller's SQE");

        // A write above the limit waits for R2T.
        TestCommand big = new TestCommand(WRITE, 8).data(ByteBuffer.allocate(8200), 0, 8200);
        h.queue.submit(big);
        ByteBuffer c = Bytes.view(h.drainPdus().get(0));
        assertEquals(76, c.getInt(4), "no data in the capsule");
        assertEquals(0x5A, c.get(8 + 39) & 0xFF);
        assertEquals(8200, c.getInt(8 + 32));

        h.feedByteByByte(h.capsuleResp(7, 0, 0));
        assertEquals(0, w.status);
        h.queue.close();
        assertEquals(1, big.errors.get(), "the write still in flight failed once");
        h.assertClean();
    }

    @Test
    void inCapsuleDataAreAViewOfTheCallersBufferNotACopy() {
        HostHarness h = new HostHarness(false, false).connect(131072);
        h.queue.maxInCapsuleData(8192);
        ByteBuffer buffer = direct(Bytes.pattern(4096, 3), 64, 8192);
        h.queue.submit(new TestCommand(WRITE, 7).data(buffer, 64, 4096));
        h.channel.runPendingTasks();
        ByteBuf header = h.channel.readOutbound();
        ByteBuf data = h.channel.readOutbound();
        assertNull(h.channel.readOutbound());
        assertEquals(72, header.readableBytes(), "the CapsuleCmd's header, then its data");
        assertEquals(4096, data.readableBytes());
        byte[] changed = Bytes.pattern(4096, 4);
        buffer.put(64, changed); // what the message holds is the caller's memory itself
        byte[] sent = new byte[4096];
        data.getBytes(data.readerIndex(), sent);
        assertArrayEquals(changed, sent);
        header.release();
        data.release();
        h.queue.close();
        h.assertClean();
    }

    @Test
    void fabricsCommandsGoInCapsuleUpTo8KiBWhateverTheLimit() {
        HostHarness h = new HostHarness(false, false).connect(131072);
        TestCommand connect = new TestCommand(0x7F, 0).data(ByteBuffer.wrap(Bytes.pattern(1024, 2)), 0, 1024);
        connect.sqe.fctype(0x01);
        h.queue.submit(connect);
        byte[] p = h.drainPdus().get(0);
        assertEquals(72 + 1024, p.length);
        assertEquals(
                "04 00 48 48 48 04 00 00",
                Bytes.hex(java.util.Arrays.copyOf(p, 8)),
                "nvmeof-protocol.md §5.5 example header");
        assertArrayEquals(Bytes.pattern(1024, 2), java.util.Arrays.copyOfRange(p, 72, 72 + 1024));
        h.queue.close();
        h.assertClean();
    }

    @Test
    void r2tIsAnsweredWithH2cDataSplitByMaxH2cDataWithDigests() {
        HostHarness h = new HostHarness(true, true).connect(4096);
        byte[] data = Bytes.pattern(10240, 3);
        TestCommand w = new TestCommand(WRITE, 9).data(direct(data, 10, 10250), 10, 10240);
        h.queue.submit(w);
        h.drain();
        h.feedByteByByte(h.r2t(9, 7, 0, 9192));
        List<byte[]> pdus = h.drainPdus();
        assertEquals(3, pdus.size());
        int[][] expect = {{0, 4096, 0}, {4096, 4096, 0}, {8192, 1000, 4}};
        for (int i = 0; i < 3; i++) {
            checkH2cData(pdus.get(i), 9, 7, expect[i][0], expect[i][1], expect[i][2], data);
        }
        h.feedByteByByte(h.r2t(9, 8, 9192, 1048));
        pdus = h.drainPdus();
        assertEquals(1, pdus.size());
        checkH2cData(pdus.get(0), 9, 8, 9192, 1048, 4, data);
        h.feedByteByByte(h.capsuleResp(9, 0, 0));
        assertEquals(0, w.status);
        h.queue.close();
        h.assertClean();
    }

    private static void checkH2cData(byte[] p, int cid, int ttag, int datao, int datal, int last, byte[] all) {
        ByteBuffer v = Bytes.view(p);
        assertEquals(0x06, v.get(0));
        assertEquals(1 | 2 | last, v.get(1), "HDGSTF|DDGSTF" + (last != 0 ? "|LAST_PDU" : ""));
        assertEquals(24, v.get(2));
        assertEquals(28, v.get(3), "PDO");
        assertEquals(28 + datal + 4, v.getInt(4), "PLEN");
        assertEquals(cid, v.getShort(8));
        assertEquals(ttag, v.getShort(10), "TTAG copied");
        assertEquals(datao, v.getInt(12), "DATAO absolute");
        assertEquals(datal, v.getInt(16));
        assertEquals(Bytes.crc32c(p, 0, 24), v.getInt(24), "HDGST");
        byte[] d = java.util.Arrays.copyOfRange(p, 28, 28 + datal);
        assertArrayEquals(java.util.Arrays.copyOfRange(all, datao, datao + datal), d);
        assertEquals(Bytes.crc32c(d, 0, datal), v.getInt(28 + datal), "DDGST per PDU");
    }

    @Test
    void c2hDataInSeveralPdusThenCapsuleResp() {
        HostHarness h = new HostHarness(true, true).connect(131072);
        byte[] data = Bytes.pattern(12288, 4);
        ByteBuffer heap = ByteBuffer.allocate(12288 + 100);
        TestCommand r = new TestCommand(READ, 2).data(heap, 100, 12288);
        h.queue.submit(r);
        ByteBuffer cmd = Bytes.view(h.drainPdus().get(0));
        assertEquals(0x5A, cmd.get(8 + 39) & 0xFF);
        assertEquals(12288, cmd.getInt(8 + 32));
        for (int at = 0; at < 12288; at += 4096) {
            h.feedByteByByte(
                    h.c2hData(2, at, java.util.Arrays.copyOfRange(data, at, at + 4096), at == 8192 ? 4 : 0, false));
        }
        assertEquals(0, r.outcomes(), "no completion before the CapsuleResp");
        h.feedByteByByte(h.capsuleResp(2, 0, 0));
        assertEquals(0, r.status);
        assertArrayEquals(data, bytes(heap, 100, 12288));
        h.queue.close();
        h.assertClean();
    }

    @Test
    void c2hDataWithSuccessCompletesWithoutCapsuleResp() {
        HostHarness h = new HostHarness(false, true).connect(131072);
        byte[] data = Bytes.pattern(8192, 5);
        ByteBuffer buf = ByteBuffer.allocateDirect(8192);
        TestCommand r = new TestCommand(READ, 4).data(buf, 0, 8192);
        h.queue.submit(r);
        h.drain();
        h.feedByteByByte(h.c2hData(4, 0, java.util.Arrays.copyOfRange(data, 0, 512), 0, false));
        h.feedByteByByte(h.c2hData(4, 512, java.util.Arrays.copyOfRange(data, 512, 8192), 4 | 8, false));
        assertEquals(1, r.responses.get());
        assertEquals(0, r.status);
        assertEquals(0, r.dw0);
        assertEquals(0, r.dw1);
        assertEquals(4, r.cid);
        assertArrayEquals(data, bytes(buf, 0, 8192));
        h.queue.submit(r.reset()); // the CID is free
        h.queue.close();
        h.assertClean();
    }

    @Test
    void dataDigestMismatchIsDataTransferErrorAndTheQueueLives() {
        HostHarness h = new HostHarness(true, true).connect(131072);
        TestCommand a = new TestCommand(READ, 1).data(ByteBuffer.allocate(4096), 0, 4096);
        TestCommand b = new TestCommand(READ, 2).data(ByteBuffer.allocateDirect(4096), 0, 4096);
        h.queue.submit(a);
        h.queue.submit(b);
        h.drain();
        h.feedByteByByte(h.c2hData(1, 0, Bytes.pattern(4096, 1), 4, true));
        assertEquals(0, a.outcomes(), "the CapsuleResp decides when");
        h.feedByteByByte(h.capsuleResp(1, 0, 0));
        assertEquals(Status.DATA_TRANSFER_ERROR, a.status);
        h.feedByteByByte(h.c2hData(2, 0, Bytes.pattern(4096, 2), 4 | 8, true));
        assertEquals(Status.DATA_TRANSFER_ERROR, b.status, "SUCCESS with a bad digest");
        assertTrue(h.queue.isOpen());
        h.queue.close();
        h.assertClean();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Faults: fatal to the queue, every command failed once, no H2CTermReq

    static Stream<Arguments> faults() {
        return Stream.of(
                Arguments.of(
                        "CapsuleResp for an unknown CID",
                        (Fault) h -> h.capsuleResp(20, 0, 0),
                        "CapsuleResp for CID 20, which is not in flight"),
                Arguments.of(
                        "CapsuleResp for a CID out of range",
                        (Fault) h -> h.capsuleResp(4000, 0, 0),
                        "CapsuleResp for CID 4000"),
                Arguments.of(
                        "C2HData DATAO out of order",
                        (Fault) h -> h.c2hData(1, 512, new byte[512], 0, false),
                        "C2HData DATAO 512 but 0 bytes received so far (CID 1)"),
                Arguments.of(
                        "C2HData SUCCESS without LAST_PDU",
                        (Fault) h -> h.c2hData(1, 0, new byte[4096], 8, false),
                        "C2HData with SUCCESS but without LAST_PDU (CID 1)"),
                Arguments.of(
                        "C2HData beyond the buffer",
                        (Fault) h -> h.c2hData(1, 0, new byte[4100], 4, false),
                        "C2HData [0, 4100) beyond the 4096 bytes of CID 1"),
                Arguments.of(
                        "C2HData for a write",
                        (Fault) h -> h.c2hData(2, 0, new byte[512], 4, false),
                        "C2HData for CID 2, which reads no data"),
                Arguments.of(
                        "C2HData for an unknown CID",
                        (Fault) h -> h.c2hData(9, 0, new byte[512], 4, false),
                        "C2HData for CID 9, which is not in flight"),
                Arguments.of("R2T with R2TL 0", (Fault) h -> h.r2t(2, 1, 0, 0), "R2T with R2TL 0 (CID 2)"),
                Arguments.of(
                        "R2T beyond the data",
                        (Fault) h -> h.r2t(2, 1, 4096, 8192),
                        "R2T [4096, 12288) beyond the 8192 bytes of CID 2"),
                Arguments.of(
                        "R2T for a read", (Fault) h -> h.r2t(1, 1, 0, 512), "R2T for CID 1, which has no data to send"),
                Arguments.of(
                        "R2T for an unknown CID",
                        (Fault) h -> h.r2t(11, 1, 0, 512),
                        "R2T for CID 11, which is not in flight"),
                Arguments.of(
                        "R2T going back",
                        (Fault) h -> Bytes.concat(h.r2t(2, 1, 0, 4096), h.r2t(2, 1, 0, 4096)),
                        "R2T R2TO 0 goes back before the 4096 bytes already sent (CID 2)"),
                Arguments.of(
                        "C2HTermReq",
                        (Fault) h -> HostHarness.c2hTermReq(1, 3),
                        "terminated queue 1 with C2HTermReq: FES 1 (Invalid PDU Header Field) FEI 3"),
                Arguments.of(
                        "header digest error",
                        (Fault) h -> {
                            byte[] p = h.capsuleResp(3, 0, 0);
                            p[27] ^= 1;
                            return p;
                        },
                        "CapsuleResp header digest"),
                Arguments.of("a second ICResp", (Fault) h -> HostHarness.icResp(0, 0, 3, 131072), "second ICResp"));
    }

    interface Fault {
        byte[] bytes(HostHarness h);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    void protocolFaultClosesTheQueueAndFailsEveryCommandOnce(String name, Fault fault, String message) {
        HostHarness h = new HostHarness(true, true).connect(131072);
        TestCommand read = new TestCommand(READ, 1).data(ByteBuffer.allocate(4096), 0, 4096);
        TestCommand write = new TestCommand(WRITE, 2).data(ByteBuffer.allocateDirect(8192), 0, 8192);
        TestCommand none = new TestCommand(KEEP_ALIVE, 3);
        h.queue.submit(read);
        h.queue.submit(write);
        h.queue.submit(none);
        h.drain();
        h.feedByteByByte(fault.bytes(h));
        h.drain(); // H2CData answering a first, good R2T may be out; nothing else may be
        assertFalse(h.channel.isOpen(), "connection closed");
        assertFalse(h.queue.isOpen());
        for (TestCommand c : List.of(read, write, none)) {
            assertEquals(1, c.errors.get(), "failed exactly once");
            assertEquals(0, c.responses.get());
            assertTrue(c.error.getMessage().contains(message), c.error.getMessage());
        }
        assertEquals(1, h.closeCalls, "listener once");
        assertInstanceOf(NvmeTcpProtocolException.class, h.closes.get(0));
        h.queue.close(); // no second round of callbacks
        assertEquals(1, h.closeCalls);
        assertEquals(1, read.errors.get());
        assertThrows(IllegalStateException.class, () -> h.queue.submit(new TestCommand(KEEP_ALIVE, 4)));
        h.assertClean();
    }

    @Test
    void faultsSendNoH2cTermReq() {
        HostHarness h = new HostHarness(false, false).connect(131072);
        h.queue.submit(new TestCommand(KEEP_ALIVE, 0));
        h.drain();
        h.feedByteByByte(h.capsuleResp(7, 0, 0));
        assertEquals(
                0, h.drain().length, "nvmet does not accept H2CTermReq (nvmeof-protocol.md §5.3, §7.8): just close");
        assertFalse(h.channel.isOpen());
        h.assertClean();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Threads and close

    @Test
    void foreignThreadSubmitsAreQueuedAndDrainedWithOneFlush() {
        HostHarness h = new HostHarness(false, false).connect(131072);
        h.queue.alwaysQueue = true; // as if from another thread
        TestCommand[] cmds = new TestCommand[3];
        for (int i = 0; i < 3; i++) {
            cmds[i] = new TestCommand(KEEP_ALIVE, i);
            h.queue.submit(cmds[i]);
        }
        assertThrows(
                IllegalStateException.class,
                () -> h.queue.submit(new TestCommand(KEEP_ALIVE, 1)),
                "a queued CID is in flight already");
        assertNull(h.channel.readOutbound(), "nothing written before the drain task runs");
        List<byte[]> pdus = h.drainPdus();
        assertEquals(3, pdus.size());
        for (int i = 0; i < 3; i++) {
            assertEquals(i, Bytes.view(pdus.get(i)).getShort(10));
            h.feed(h.capsuleResp(i, 0, 0));
            assertEquals(1, cmds[i].responses.get());
        }
        // Queued and never drained before close: failed by the close, exactly once.
        TestCommand late = new TestCommand(KEEP_ALIVE, 9);
        h.queue.submit(late);
        h.queue.close();
        assertEquals(1, late.errors.get());
        h.channel.runPendingTasks();
        assertEquals(1, late.errors.get());
        h.assertClean();
    }

    @Test
    void commandsSentTogetherAreOneMessage() {
        HostHarness h = new HostHarness(false, false).connect(131072);
        h.queue.alwaysQueue = true; // queued, then sent by one drain task
        int n = 20;
        for (int i = 0; i < n; i++) {
            h.queue.submit(new TestCommand(KEEP_ALIVE, i));
        }
        h.channel.runPendingTasks();
        ByteBuf m = h.channel.readOutbound();
        assertEquals(n * 72, m.readableBytes(), "20 CapsuleCmds in one message");
        byte[] stream = new byte[m.readableBytes()];
        m.getBytes(m.readerIndex(), stream);
        m.release();
        assertNull(h.channel.readOutbound());
        List<byte[]> pdus = Bytes.split(stream);
        for (int i = 0; i < n; i++) {
            assertEquals(i, Bytes.view(pdus.get(i)).getShort(10), "CID, in the order submitted");
        }
        h.queue.close();
        h.assertClean();
    }

    @Test
    void closeFailsInFlightCommandsThenTellsTheListenerOnce() {
        HostHarness h = new HostHarness(false, false).connect(131072);
        TestCommand a = new TestCommand(READ, 1).data(ByteBuffer.allocate(8192), 0, 8192);
        TestCommand b = new TestCommand(WRITE, 2).data(ByteBuffer.allocate(65536), 0, 65536);
        h.queue.submit(a);
        h.queue.submit(b);
        h.drain();
        h.feedByteByByte(h.r2t(2, 1, 0, 65536)); // H2CData views of b's buffer are written
        h.feedByteByByte(h.c2hData(1, 0, new byte[4096], 0, false)); // a is half read
        h.queue.close();
        assertEquals(1, a.errors.get());
        assertEquals(1, b.errors.get());
        assertTrue(a.error.getMessage().contains("closed"), a.error.getMessage());
        assertEquals(1, h.closeCalls);
        assertNull(h.closes.get(0));
        int[] late = {0};
        h.queue.onClose(cause -> late[0]++);
        h.channel.runPendingTasks();
        assertEquals(0, late[0], "the listener is told once per queue");
        h.assertClean();
    }

    @Test
    void listenerSetAfterTheCloseIsStillTold() {
        io.netty.channel.embedded.EmbeddedChannel ch = new io.netty.channel.embedded.EmbeddedChannel();
        TcpHostQueue q = TcpHostQueue.install(
                ch.pipeline(),
                new io.nvmeof.core.spi.HostQueueOptions(
                        new java.net.InetSocketAddress("127.0.0.1", 4420),
                        0,
                        32,
                        0,
                        false,
                        false,
                        java.time.Duration.ofSeconds(1)));
        q.close();
        int[] calls = {0};
        q.onClose(c -> calls[0]++);
        ch.runPendingTasks();
        assertEquals(1, calls[0]);
        io.netty.util.ReferenceCountUtil.release(ch.readOutbound()); // the ICReq
        assertFalse(ch.finish());
    }
}

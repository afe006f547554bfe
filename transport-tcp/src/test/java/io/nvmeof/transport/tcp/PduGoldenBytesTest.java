package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.Bytes.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The PDU flyweights against the example bytes of nvmeof-protocol.md (§5.4–§5.8). */
class PduGoldenBytesTest {
    private static byte[] bytes(ByteBuf b, int length) {
        byte[] out = new byte[length];
        b.getBytes(0, out);
        b.release();
        return out;
    }

    private static byte[] zeros(int n) {
        return new byte[n];
    }

    @Test
    void icReqWithoutDigests() {
        byte[] golden = Bytes.concat(
                hex("00 00 80 00 80 00 00 00 00 00 00 00 00 00 00 00"), zeros(112)); // nvmeof-protocol.md §5.4
        ByteBuf b = Unpooled.buffer(128);
        b.writerIndex(128).setByte(77, 0xEE); // reserved bytes must be zeroed by set()
        new IcReqPdu().wrap(b, 0).set(0, 0, 0, 0);
        assertArrayEquals(golden, bytes(b, 128));

        IcReqPdu read = new IcReqPdu().wrap(Unpooled.wrappedBuffer(Bytes.icReq(3)), 0);
        assertEquals(PduHeader.TYPE_IC_REQ, read.type());
        assertEquals(128, read.hlen());
        assertEquals(128, read.plen());
        assertEquals(3, read.dgst()); // nvmeof-protocol.md §5.4: with both digests byte 11 = 03
        assertEquals(0, read.hpda());
        assertEquals(0, read.pfv());
        assertEquals(0, read.maxR2t());
    }

    @Test
    void icRespAsNvmetSendsIt() {
        byte[] golden = Bytes.concat(
                hex("01 00 80 00 80 00 00 00 00 00 00 00 00 00 40 00"), zeros(112)); // nvmeof-protocol.md §5.4
        ByteBuf b = Unpooled.buffer(128);
        IcRespPdu p = new IcRespPdu().wrap(b, 0).set(0, 0, 0, 0x00400000);
        assertEquals(0x00400000L, p.maxH2cData());
        assertEquals(0, p.cpda());
        assertArrayEquals(golden, bytes(b, 128));
    }

    @Test
    void connectCapsuleHeader() {
        // nvmeof-protocol.md §5.5: CH 04 00 48 48 48 04 00 00 (HLEN 72, PDO 72, PLEN 1096) for 1024 bytes of Connect
        // data.
        ByteBuf b = Unpooled.buffer(72);
        CapsuleCmdPdu p = new CapsuleCmdPdu().wrap(b, 0).set(false, false, 1024);
        assertEquals(8, p.sqeIndex());
        assertArrayEquals(hex("04 00 48 48 48 04 00 00"), bytes(b, 8));

        ByteBuf none = Unpooled.buffer(72);
        new CapsuleCmdPdu().wrap(none, 0).set(true, true, 0); // no data: PDO 0, PLEN 72 + 4, no DDGSTF
        assertArrayEquals(hex("04 01 48 00 4c 00 00 00"), bytes(none, 8));

        byte[] sqe = Bytes.connectSqe(0, 0, 31, 0);
        assertArrayEquals(hex("7f 40 00 00 01 00 00 00 00 00 00 00 00 00 00 00"), slice(sqe, 0, 16));
        assertArrayEquals(hex("00 04 00 00 00 00 00 01 00 00 00 00 1f 00 00 00"), slice(sqe, 32, 16));
        assertArrayEquals(hex("88 13 00 00"), slice(sqe, 48, 4));
    }

    @Test
    void headerDigestExample() {
        // nvmeof-protocol.md §5.8: CH 04 01 48 4c 4c 04 00 00 + the SQE of nvmeof-protocol.md §5.5 → HDGST b7 d9 34 9f.
        ByteBuf b = Unpooled.buffer(76);
        new CapsuleCmdPdu().wrap(b, 0).set(true, false, 1024);
        b.setBytes(8, Bytes.connectSqe(0, 0, 31, 0));
        assertArrayEquals(hex("04 01 48 4c 4c 04 00 00"), slice(copy(b, 72), 0, 8));
        int digest = Crc32c.compute(new CRC32C(), b, 0, 72);
        b.setIntLE(72, digest);
        assertArrayEquals(hex("b7 d9 34 9f"), slice(bytes(b, 76), 72, 4));
    }

    @Test
    void headerDigestIsTheSameInPlaceAndCopied() {
        // The same golden HDGST (b7 d9 34 9f, nvmeof-protocol.md §5.8) whichever way computeHeader reads the header:
        // a heap array, a direct buffer in place through a View, a direct buffer copied (no view), and a composite
        // buffer (no memory address: copied).
        byte[] header = new byte[72];
        ByteBuf heap = Unpooled.wrappedBuffer(header);
        new CapsuleCmdPdu().wrap(heap, 0).set(true, false, 1024);
        heap.setBytes(8, Bytes.connectSqe(0, 0, 31, 0));
        ByteBuf direct =
                PooledByteBufAllocator.DEFAULT.directBuffer(80).writeZero(8).writeBytes(header);
        ByteBuf composite = Unpooled.compositeBuffer()
                .addComponent(true, Unpooled.wrappedBuffer(header, 0, 30))
                .addComponent(true, Unpooled.directBuffer(42).writeBytes(header, 30, 42));
        CRC32C crc = new CRC32C();
        byte[] scratch = new byte[Crc32c.HEADER_SCRATCH];
        DirectView view = new DirectView();
        try {
            int golden = 0x9f34d9b7;
            assertEquals(golden, Crc32c.computeHeader(crc, view, scratch, heap, 0, 72));
            assertEquals(golden, Crc32c.computeHeader(crc, view, scratch, direct, 8, 72));
            assertEquals(golden, Crc32c.computeHeader(crc, null, scratch, direct, 8, 72));
            assertEquals(golden, Crc32c.computeHeader(crc, scratch, direct, 8, 72));
            assertEquals(golden, Crc32c.computeHeader(crc, view, scratch, composite, 0, 72));
        } finally {
            direct.release();
            composite.release();
        }
    }

    @Test
    void crc32cTestVector() {
        ByteBuf b = Unpooled.wrappedBuffer("123456789".getBytes(StandardCharsets.US_ASCII)); // nvmeof-protocol.md §5.8
        assertEquals(0xE3069283, Crc32c.compute(new CRC32C(), b, 0, 9));
        ByteBuf direct = Unpooled.directBuffer(9).writeBytes("123456789".getBytes(StandardCharsets.US_ASCII));
        assertEquals(0xE3069283, Crc32c.compute(new CRC32C(), direct, 0, 9));
        direct.release();
    }

    @Test
    void r2tAndH2cDataExample() {
        // nvmeof-protocol.md §5.6: R2T for CID 0x1005, TTAG 3, 8 KiB at offset 0, and the matching H2CData header.
        ByteBuf r = Unpooled.buffer(24);
        R2tPdu r2t = new R2tPdu().wrap(r, 0).set(false, 0x1005, 3, 0, 8192);
        assertEquals(0x1005, r2t.cccid());
        assertEquals(3, r2t.ttag());
        assertEquals(8192, r2t.r2tl());
        assertArrayEquals(hex("09 00 18 00 18 00 00 00 05 10 03 00 00 00 00 00 00 20 00 00 00 00 00 00"), bytes(r, 24));

        byte[] h2cGolden = hex("06 04 18 18 18 20 00 00 05 10 03 00 00 00 00 00 00 20 00 00 00 00 00 00");
        ByteBuf h = Unpooled.buffer(24);
        new H2cDataPdu().wrap(h, 0).set(false, false, true, 0x1005, 3, 0, 8192);
        assertArrayEquals(h2cGolden, bytes(h, 24));
        assertArrayEquals(h2cGolden, slice(Bytes.h2cData(0x1005, 3, 0, new byte[8192], true, false, false), 0, 24));
        H2cDataPdu read = new H2cDataPdu().wrap(Unpooled.wrappedBuffer(h2cGolden), 0);
        assertEquals(0x1005, read.cccid());
        assertEquals(3, read.ttag());
        assertEquals(0, read.datao());
        assertEquals(8192, read.datal());
        assertEquals(8216, read.plen());
        assertTrue(read.hasFlag(PduHeader.FLAG_LAST_PDU));
    }

    @Test
    void capsuleRespExample() {
        // nvmeof-protocol.md §5.5: success response to Connect with CNTLID 1 (DW0 = 1), CID 7 here.
        byte[] golden = hex("05 00 18 00 18 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 07 00 00 00");
        ByteBuf b = Unpooled.buffer(24);
        CapsuleRespPdu p = new CapsuleRespPdu().wrap(b, 0).set(false);
        b.setIntLE(p.cqeIndex(), 1); // DW0 = CNTLID
        b.setShortLE(p.cqeIndex() + 8, 1); // SQHD
        b.setShortLE(p.cqeIndex() + 12, 7); // CID
        assertEquals(7, p.cid());
        assertEquals(0, p.status());
        assertArrayEquals(golden, bytes(b, 24));
    }

    @Test
    void c2hDataAndTermReq() {
        ByteBuf c = Unpooled.buffer(24);
        new C2hDataPdu().wrap(c, 0).set(true, true, PduHeader.FLAG_LAST_PDU | PduHeader.FLAG_SUCCESS, 0x22, 0, 512);
        // FLAGS = HDGSTF|DDGSTF|LAST|SUCCESS, PDO 28, PLEN 28 + 512 + 4 = 544 (nvmeof-protocol.md §5.6).
        assertArrayEquals(hex("07 0f 18 1c 20 02 00 00 22 00 00 00 00 00 00 00 00 02 00 00 00 00 00 00"), bytes(c, 24));

        ByteBuf t = Unpooled.buffer(24);
        TermReqPdu term = new TermReqPdu().wrap(t, 0).set(PduHeader.TYPE_C2H_TERM_REQ, 3, 0x9f34d9b7, 72);
        assertEquals(3, term.fes());
        assertEquals(0x9f34d9b7, term.fei());
        // nvmeof-protocol.md §5.7: FES at byte 8, FEI at bytes 10–13, PLEN 24 + 72.
        assertArrayEquals(hex("03 00 18 00 60 00 00 00 03 00 b7 d9 34 9f 00 00 00 00 00 00 00 00 00 00"), bytes(t, 24));
    }

    private static byte[] slice(byte[] b, int off, int len) {
        byte[] out = new byte[len];
        System.arraycopy(b, off, out, 0, len);
        return out;
    }

    private static byte[] copy(ByteBuf b, int len) {
        byte[] out = new byte[len];
        b.getBytes(0, out);
        return out;
    }
}

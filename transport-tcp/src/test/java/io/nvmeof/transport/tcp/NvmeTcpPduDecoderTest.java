package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The decoder on its own, mostly in the HOST role (the CONTROLLER role is covered through the target pipeline tests too). */
class NvmeTcpPduDecoderTest {
    /** Copies what it sees of each PDU, then releases it (the decoder reuses the PDU object). */
    private static class Capture extends ChannelInboundHandlerAdapter {
        final List<byte[]> pdus = new ArrayList<>();
        final List<Boolean> digestOk = new ArrayList<>();
        final List<Integer> dataLengths = new ArrayList<>();
        final List<ByteBuf> slices = new ArrayList<>();
        Throwable error;
        NvmeTcpPduDecoder decoder;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            NvmeTcpPdu pdu = (NvmeTcpPdu) msg;
            byte[] b = new byte[pdu.buffer().readableBytes()];
            pdu.buffer().getBytes(0, b);
            pdus.add(b);
            digestOk.add(pdu.dataDigestValid());
            dataLengths.add(pdu.dataLength());
            slices.add(pdu.buffer());
            if (pdu.type() == PduHeader.TYPE_IC_RESP) {
                int dgst = b[11];
                decoder.digests((dgst & 1) != 0, (dgst & 2) != 0);
            }
            pdu.release();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            error = cause;
        }
    }

    private static void feedByteByByte(EmbeddedChannel ch, byte[] bytes) {
        for (byte b : bytes) {
            if (ch.isOpen()) {
                ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
            }
        }
    }

    private static byte[] icResp(int dgst) {
        ByteBuffer b = Bytes.le(128);
        b.put(0, (byte) 0x01)
                .put(2, (byte) 128)
                .putInt(4, 128)
                .put(11, (byte) dgst)
                .putInt(12, 131072);
        return b.array();
    }

    private static byte[] withHeaderDigest(byte[] pdu24, int plen) {
        ByteBuffer b = Bytes.le(plen);
        b.put(0, pdu24, 0, 24);
        b.putInt(24, Bytes.crc32c(pdu24, 0, 24));
        return b.array();
    }

    @Test
    void hostRoleDecodesControllerPdusByteByByte() {
        Capture capture = new Capture();
        NvmeTcpPduDecoder decoder = new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.HOST, 0, 1 << 20);
        capture.decoder = decoder;
        EmbeddedChannel ch = new EmbeddedChannel(decoder, capture);

        ByteBuffer resp = Bytes.le(24);
        resp.put(0, (byte) 0x05)
                .put(1, (byte) 1)
                .put(2, (byte) 24)
                .putInt(4, 28)
                .putShort(20, (short) 9);
        byte[] capsuleResp = withHeaderDigest(resp.array(), 28);

        ByteBuffer r2t = Bytes.le(24);
        r2t.put(0, (byte) 0x09)
                .put(1, (byte) 1)
                .put(2, (byte) 24)
                .putInt(4, 28)
                .putShort(8, (short) 9)
                .putInt(16, 4096);
        byte[] r2tPdu = withHeaderDigest(r2t.array(), 28);

        byte[] data = Bytes.pattern(512, 4);
        byte[] c2hGood = c2hData(9, data, Bytes.crc32c(data, 0, 512));
        byte[] c2hBad = c2hData(9, data, 0x12345678);

        feedByteByByte(ch, Bytes.concat(icResp(3), capsuleResp, r2tPdu, c2hGood, c2hBad));
        assertEquals(5, capture.pdus.size());
        assertArrayEquals(capsuleResp, capture.pdus.get(1));
        assertArrayEquals(r2tPdu, capture.pdus.get(2));
        assertEquals(512, capture.dataLengths.get(3));
        assertTrue(capture.digestOk.get(3));
        assertFalse(capture.digestOk.get(4), "a bad data digest is reported, not fatal");
        assertTrue(ch.isOpen());
        for (ByteBuf s : capture.slices) {
            assertEquals(0, s.refCnt(), "every PDU slice released");
        }
        assertFalse(ch.finish());
    }

    private static byte[] c2hData(int cid, byte[] data, int ddgst) {
        int plen = 24 + 4 + data.length + 4;
        ByteBuffer b = Bytes.le(plen);
        b.put(0, (byte) 0x07)
                .put(1, (byte) (1 | 2 | 4))
                .put(2, (byte) 24)
                .put(3, (byte) 28)
                .putInt(4, plen);
        b.putShort(8, (short) cid).putInt(16, data.length);
        b.putInt(24, Bytes.crc32c(b.array(), 0, 24));
        b.put(28, data);
        b.putInt(28 + data.length, ddgst);
        return b.array();
    }

    /** Records what a {@link NvmeTcpPduDecoder.C2hDataSink} is given. */
    private static final class Sink implements NvmeTcpPduDecoder.C2hDataSink {
        final java.io.ByteArrayOutputStream data = new java.io.ByteArrayOutputStream();
        final List<String> events = new ArrayList<>();
        int pieces;
        long nextOffset;

        @Override
        public void c2hData(int cid, long offset, ByteBuf src, int index, int length) {
            assertEquals(nextOffset, offset, "pieces in order, each at the offset after the last");
            byte[] b = new byte[length];
            src.getBytes(index, b);
            data.write(b, 0, length);
            nextOffset = offset + length;
            pieces++;
        }

        @Override
        public void c2hDataEnd(int cid, long datao, int datal, int flags, boolean digestOk) {
            nextOffset = 0;
            events.add(
                    "end cid=" + cid + " datao=" + datao + " datal=" + datal + " flags=" + flags + " ok=" + digestOk);
        }
    }

    @Test
    void hostRoleStreamsC2hDataToTheSinkAsItArrivesWithoutBufferingThePdu() {
        Capture capture = new Capture();
        Sink sink = new Sink();
        NvmeTcpPduDecoder decoder = new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.HOST, 0, 1 << 20).c2hDataSink(sink);
        capture.decoder = decoder;
        EmbeddedChannel ch = new EmbeddedChannel(decoder, capture);

        byte[] data = Bytes.pattern(131072, 7);
        byte[] good = c2hData(9, data, Bytes.crc32c(data, 0, data.length));
        byte[] bad = c2hData(9, data, 0x12345678);
        ByteBuffer resp = Bytes.le(24);
        resp.put(0, (byte) 0x05)
                .put(1, (byte) 1)
                .put(2, (byte) 24)
                .putInt(4, 28)
                .putShort(20, (short) 9);
        byte[] capsuleResp = withHeaderDigest(resp.array(), 28);
        byte[] stream = Bytes.concat(icResp(3), good, bad, capsuleResp);
        // As a socket delivers it: reads of odd sizes that cut headers, data and digests anywhere.
        int maxCumulation = 0;
        for (int at = 0, size = 1; at < stream.length; at += size, size = size * 7 % 20011 + 1) {
            int n = Math.min(size, stream.length - at);
            ch.writeInbound(Unpooled.directBuffer(n).writeBytes(stream, at, n));
            maxCumulation = Math.max(maxCumulation, decoder.cumulationCapacity());
        }
        assertEquals(null, capture.error);
        assertEquals(2, capture.pdus.size(), "ICResp and CapsuleResp go down the pipeline; C2HData does not");
        assertArrayEquals(capsuleResp, capture.pdus.get(1));
        assertEquals(
                List.of(
                        "end cid=9 datao=0 datal=131072 flags=7 ok=true",
                        "end cid=9 datao=0 datal=131072 flags=7 ok=false"),
                sink.events);
        byte[] got = sink.data.toByteArray();
        assertEquals(2 * data.length, got.length);
        assertArrayEquals(data, java.util.Arrays.copyOfRange(got, 0, data.length));
        assertTrue(sink.pieces > 4, "handed on in pieces as they arrived, not once the PDU was complete");
        assertTrue(maxCumulation < 32 * 1024, "the cumulation never held a whole PDU: " + maxCumulation);
        assertTrue(ch.isOpen());
        assertFalse(ch.finish());
    }

    @Test
    void hostRoleStreamsByteByByteWithoutDigests() {
        Capture capture = new Capture();
        Sink sink = new Sink();
        NvmeTcpPduDecoder decoder = new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.HOST, 0, 1 << 20).c2hDataSink(sink);
        capture.decoder = decoder;
        EmbeddedChannel ch = new EmbeddedChannel(decoder, capture);
        byte[] data = Bytes.pattern(100, 3);
        ByteBuffer b = Bytes.le(24 + 100);
        b.put(0, (byte) 0x07)
                .put(1, (byte) 4)
                .put(2, (byte) 24)
                .put(3, (byte) 24)
                .putInt(4, 124);
        b.putShort(8, (short) 5).putInt(12, 0).putInt(16, 100);
        b.put(24, data);
        feedByteByByte(ch, Bytes.concat(icResp(0), b.array()));
        assertEquals(100, sink.pieces);
        assertArrayEquals(data, sink.data.toByteArray());
        assertEquals(List.of("end cid=5 datao=0 datal=100 flags=4 ok=true"), sink.events);
        assertFalse(ch.finish());
    }

    @Test
    void hostRoleAnswersAHostPduWithH2cTermReq() {
        Capture capture = new Capture();
        NvmeTcpPduDecoder decoder = new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.HOST, 0, 1 << 20);
        capture.decoder = decoder;
        EmbeddedChannel ch = new EmbeddedChannel(decoder, capture);
        feedByteByByte(ch, icResp(0));
        feedByteByByte(ch, Bytes.capsule(Bytes.sqe(0x18, 1, 0x5A, 0), null, false, false));
        ByteBuf out = ch.readOutbound();
        byte[] term = new byte[out.readableBytes()];
        out.getBytes(0, term);
        out.release();
        assertEquals(PduHeader.TYPE_H2C_TERM_REQ, term[0]);
        assertEquals(1, Bytes.view(term).getShort(8), "FES Invalid PDU Header Field");
        assertEquals(0, Bytes.view(term).getInt(10), "FEI: the TYPE byte");
        assertFalse(ch.isOpen());
        assertTrue(decoder.failed());
        assertInstanceOf(NvmeTcpProtocolException.class, capture.error);
        assertFalse(ch.finish());
    }

    @Test
    void controllerRoleRejectsPlenAboveTheBoundFromTheCommonHeaderAlone() {
        Capture capture = new Capture();
        NvmeTcpPduDecoder decoder = new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.CONTROLLER, 8192, 131072);
        capture.decoder = decoder;
        EmbeddedChannel ch = new EmbeddedChannel(decoder, capture);
        feedByteByByte(ch, Bytes.icReq(0));
        decoder.digests(false, false);
        // An H2CData announcing MAXH2CDATA + 1 data bytes: refused after 8 bytes with FES 5 (nvmeof-protocol.md §5.7).
        ByteBuffer ch8 = Bytes.le(8);
        ch8.put(0, (byte) 0x06)
                .put(1, (byte) 4)
                .put(2, (byte) 24)
                .put(3, (byte) 24)
                .putInt(4, 24 + 131073);
        feedByteByByte(ch, ch8.array());
        ByteBuf out = ch.readOutbound();
        assertEquals(PduHeader.TYPE_C2H_TERM_REQ, out.getByte(0));
        assertEquals(5, out.getShortLE(8));
        assertEquals(24 + 8, out.readableBytes(), "what there was of the header is quoted");
        out.release();
        assertFalse(ch.isOpen());
        assertFalse(ch.finish());
    }
    /** 4 KiB in-capsule writes in reads that end inside a PDU, as the socket delivers them to the target. */
    @Test
    void controllerRoleDecodesTheRestOfAReadInPlaceAfterAPduThatStraddlesTwoReads() {
        List<Long> addresses = new ArrayList<>();
        Capture capture = new Capture() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                NvmeTcpPdu pdu = (NvmeTcpPdu) msg;
                addresses.add(pdu.buffer().hasMemoryAddress() ? pdu.buffer().memoryAddress() : -1L);
                super.channelRead(ctx, msg);
            }
        };
        EmbeddedChannel ch = connectedController(capture);
        addresses.clear();

        int count = 20;
        byte[][] writes = new byte[count][];
        for (int i = 0; i < count; i++) {
            writes[i] = Bytes.capsule(Bytes.sqe(0x01, i, 0x01, 4096), Bytes.pattern(4096, i), false, false);
        }
        byte[] stream = Bytes.concat(writes);
        int pduLength = writes[0].length; // 4168
        int split = 16 * 1024; // inside the 4th PDU
        ByteBuf first = ch.alloc().directBuffer(split).writeBytes(stream, 0, split);
        ByteBuf second =
                ch.alloc().directBuffer(stream.length - split).writeBytes(stream, split, stream.length - split);
        org.junit.jupiter.api.Assumptions.assumeTrue(second.hasMemoryAddress(), "needs direct memory with an address");
        long secondStart = second.memoryAddress();
        long secondEnd = secondStart + second.capacity();
        ch.writeInbound(first);
        ch.writeInbound(second);

        assertEquals(count, capture.pdus.size());
        for (int i = 0; i < count; i++) {
            assertArrayEquals(writes[i], capture.pdus.get(i), "PDU " + i);
        }
        int straddler = split / pduLength;
        for (int i = straddler + 1; i < count; i++) {
            long a = addresses.get(i);
            assertTrue(a >= secondStart && a + pduLength <= secondEnd, "PDU " + i + " is a slice of the read itself");
        }
        long s = addresses.get(straddler);
        assertFalse(s >= secondStart && s < secondEnd, "the straddling PDU was put together in its own buffer");
        assertAllReleased(capture);
        assertEquals(0, first.refCnt());
        assertEquals(0, second.refCnt());
        assertTrue(ch.isOpen());
        assertFalse(ch.finish());
    }

    /** A PDU longer than the read that completes it goes through the ordinary merge, in reads of any size. */
    @Test
    void controllerRoleDecodesPdusLongerThanTheReadsThatCarryThem() {
        Capture capture = new Capture();
        EmbeddedChannel ch = connectedController(capture);

        byte[][] writes = new byte[6][];
        for (int i = 0; i < writes.length; i++) {
            int length = i % 2 == 0 ? 8192 : 512;
            writes[i] = Bytes.capsule(Bytes.sqe(0x01, i, 0x01, length), Bytes.pattern(length, i), false, false);
        }
        byte[] stream = Bytes.concat(writes);
        for (int off = 0; off < stream.length; off += 3000) {
            int n = Math.min(3000, stream.length - off);
            ch.writeInbound(ch.alloc().directBuffer(n).writeBytes(stream, off, n));
        }
        assertEquals(writes.length, capture.pdus.size());
        for (int i = 0; i < writes.length; i++) {
            assertArrayEquals(writes[i], capture.pdus.get(i), "PDU " + i);
        }
        assertAllReleased(capture);
        assertTrue(ch.isOpen());
        assertFalse(ch.finish());
    }

    /** A CONTROLLER-role decoder past ICReq (no digests, 16 KiB in-capsule), with nothing captured yet. */
    private static EmbeddedChannel connectedController(Capture capture) {
        NvmeTcpPduDecoder decoder = new NvmeTcpPduDecoder(NvmeTcpPduDecoder.Role.CONTROLLER, 16384, 131072);
        capture.decoder = decoder;
        EmbeddedChannel ch = new EmbeddedChannel(decoder, capture);
        ch.writeInbound(Unpooled.wrappedBuffer(Bytes.icReq(0)));
        decoder.digests(false, false);
        capture.pdus.clear();
        capture.slices.clear();
        return ch;
    }

    private static void assertAllReleased(Capture capture) {
        for (ByteBuf slice : capture.slices) {
            assertEquals(0, slice.refCnt(), "every PDU slice released");
        }
    }
}

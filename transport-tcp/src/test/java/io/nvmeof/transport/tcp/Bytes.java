package io.nvmeof.transport.tcp;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Host-side PDUs and SQEs built by hand from nvmeof-protocol.md (§1.1, §2.2, §5.4–§5.6), independent of the
 * production flyweights, plus a stream splitter for what the target sends.
 */
final class Bytes {
    private Bytes() {}

    static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replaceAll("[^0-9a-fA-F]", ""));
    }

    static String hex(byte[] b) {
        return HexFormat.ofDelimiter(" ").formatHex(b);
    }

    static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    static int crc32c(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /** ICReq (nvmeof-protocol.md §5.4) with the given DGST, PFV and HPDA. */
    static byte[] icReq(int dgst, int pfv, int hpda) {
        ByteBuffer b = le(128);
        b.put(0, (byte) 0x00).put(2, (byte) 128).putInt(4, 128);
        b.putShort(8, (short) pfv).put(10, (byte) hpda).put(11, (byte) dgst);
        return b.array();
    }

    static byte[] icReq(int dgst) {
        return icReq(dgst, 0, 0);
    }

    /** The admin Connect SQE of nvmeof-protocol.md §5.5: CID as given, SGL 0x01 LENGTH 1024, SQSIZE 31, KATO 5000. */
    static byte[] connectSqe(int cid, int qid, int sqsize, int cattr) {
        ByteBuffer b = le(64);
        b.put(0, (byte) 0x7f).put(1, (byte) 0x40).putShort(2, (short) cid).put(4, (byte) 0x01);
        b.putInt(32, 1024).put(39, (byte) 0x01);
        b.putShort(42, (short) qid).putShort(44, (short) sqsize).put(46, (byte) cattr);
        b.putInt(48, 5000);
        return b.array();
    }

    /** An SQE with the given opcode, CID and SGL (identifier, length). */
    static byte[] sqe(int opcode, int cid, int sglId, int length) {
        ByteBuffer b = le(64);
        b.put(0, (byte) opcode).put(1, (byte) 0x40).putShort(2, (short) cid).putInt(4, 1);
        b.putInt(32, length).put(39, (byte) sglId);
        return b.array();
    }

    /** CapsuleCmd (nvmeof-protocol.md §5.5) around an SQE with optional in-capsule data, digests as flagged. */
    static byte[] capsule(byte[] sqe, byte[] data, boolean hd, boolean dd) {
        int h = hd ? 4 : 0;
        boolean hasData = data != null && data.length > 0;
        int d = hasData && dd ? 4 : 0;
        int plen = 72 + h + (hasData ? data.length : 0) + d;
        ByteBuffer b = le(plen);
        int flags = (hd ? 1 : 0) | (hasData && dd ? 2 : 0);
        b.put(0, (byte) 0x04)
                .put(1, (byte) flags)
                .put(2, (byte) 72)
                .put(3, (byte) (hasData ? 72 + h : 0))
                .putInt(4, plen);
        b.put(8, sqe);
        if (hd) {
            b.putInt(72, crc32c(b.array(), 0, 72));
        }
        if (hasData) {
            b.put(72 + h, data);
            if (dd) {
                b.putInt(72 + h + data.length, crc32c(data, 0, data.length));
            }
        }
        return b.array();
    }

    /** H2CData (nvmeof-protocol.md §5.6). */
    static byte[] h2cData(int cccid, int ttag, int datao, byte[] data, boolean last, boolean hd, boolean dd) {
        int h = hd ? 4 : 0;
        int d = dd ? 4 : 0;
        int plen = 24 + h + data.length + d;
        ByteBuffer b = le(plen);
        int flags = (hd ? 1 : 0) | (dd ? 2 : 0) | (last ? 4 : 0);
        b.put(0, (byte) 0x06)
                .put(1, (byte) flags)
                .put(2, (byte) 24)
                .put(3, (byte) (24 + h))
                .putInt(4, plen);
        b.putShort(8, (short) cccid)
                .putShort(10, (short) ttag)
                .putInt(12, datao)
                .putInt(16, data.length);
        if (hd) {
            b.putInt(24, crc32c(b.array(), 0, 24));
        }
        b.put(24 + h, data);
        if (dd) {
            b.putInt(24 + h + data.length, crc32c(data, 0, data.length));
        }
        return b.array();
    }

    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    /** Splits a controller-to-host byte stream into PDUs by PLEN (nvmeof-protocol.md §5.2). */
    static List<byte[]> split(byte[] stream) {
        List<byte[]> pdus = new ArrayList<>();
        ByteBuffer b = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
        int at = 0;
        while (at < stream.length) {
            if (stream.length - at < 8) {
                throw new AssertionError("truncated PDU header at " + at + ": " + hex(stream));
            }
            int plen = b.getInt(at + 4);
            if (plen < 8 || at + plen > stream.length) {
                throw new AssertionError("bad PLEN " + plen + " at " + at);
            }
            byte[] pdu = new byte[plen];
            System.arraycopy(stream, at, pdu, 0, plen);
            pdus.add(pdu);
            at += plen;
        }
        return pdus;
    }

    static ByteBuffer view(byte[] pdu) {
        return ByteBuffer.wrap(pdu).order(ByteOrder.LITTLE_ENDIAN);
    }
}

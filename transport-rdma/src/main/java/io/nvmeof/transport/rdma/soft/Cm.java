package io.nvmeof.transport.rdma.soft;

import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Connection management messages on the loopback TCP socket (the software RNIC's rdma_cm): REQ (connect), REP
 * (accept), REJ (reject), DREQ (disconnect, sent by each side once). REQ and REP carry the sender's pid, the name of
 * its queue-pair file, its QP attributes, its PD and private data. Limits as rdma_cm's TCP port space: private data
 * up to 56 bytes on connect, 196 on accept, 148 on reject.
 */
final class Cm {
    static final int MAGIC = 0x534f4654; // "SOFT"
    static final int VERSION = 1;
    static final int REQ = 1, REP = 2, REJ = 3, DREQ = 4;
    static final int MAX_REQ_PRIVATE = 56, MAX_REP_PRIVATE = 196, MAX_REJ_PRIVATE = 148;

    private Cm() {}

    /** The hello of REQ and REP. */
    record Hello(long pid, String qpFile, QueuePairAttributes attributes, int pd, byte[] privateData) {}

    static byte[] bytes(ByteBuffer b, int max, String what) {
        if (b == null) {
            return new byte[0];
        }
        ByteBuffer d = b.duplicate();
        if (d.remaining() > max) {
            throw new IllegalArgumentException(what + " private data is " + d.remaining() + " bytes; at most " + max);
        }
        byte[] a = new byte[d.remaining()];
        d.get(a);
        return a;
    }

    static ByteBuffer view(byte[] a) {
        return ByteBuffer.wrap(a)
                .order(ByteOrder.LITTLE_ENDIAN)
                .asReadOnlyBuffer()
                .order(ByteOrder.LITTLE_ENDIAN);
    }

    static void writeHello(DataOutputStream out, int type, Hello h) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(type);
        out.writeLong(h.pid);
        out.writeUTF(h.qpFile);
        QueuePairAttributes a = h.attributes;
        out.writeInt(a.maxSendWr());
        out.writeInt(a.maxRecvWr());
        out.writeInt(a.maxSendSge());
        out.writeInt(a.maxRecvSge());
        out.writeInt(a.cqSize());
        out.writeInt(a.responderResources());
        out.writeInt(a.initiatorDepth());
        out.writeInt(h.pd);
        out.writeInt(h.privateData.length);
        out.write(h.privateData);
        out.flush();
    }

    static void writeReject(DataOutputStream out, byte[] privateData) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(REJ);
        out.writeInt(privateData.length);
        out.write(privateData);
        out.flush();
    }

    static void writeDisconnect(DataOutputStream out) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(DREQ);
        out.flush();
    }

    /** Reads a message header; returns its type. */
    static int readType(DataInputStream in) throws IOException {
        int magic = in.readInt();
        int version = in.readInt();
        if (magic != MAGIC || version != VERSION) {
            throw new IOException(
                    "not a software RNIC peer (magic 0x" + Integer.toHexString(magic) + ", version " + version + ")");
        }
        return in.readInt();
    }

    static Hello readHello(DataInputStream in) throws IOException {
        long pid = in.readLong();
        String file = in.readUTF();
        if (file.contains("/") || file.contains("..")) {
            throw new IOException("bad queue file name " + file);
        }
        QueuePairAttributes a;
        try {
            a = new QueuePairAttributes(
                    in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt());
        } catch (IllegalArgumentException e) {
            throw new IOException("bad QP attributes from peer: " + e.getMessage());
        }
        int pd = in.readInt();
        return new Hello(pid, file, a, pd, readPrivate(in, MAX_REP_PRIVATE));
    }

    static byte[] readPrivate(DataInputStream in, int max) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > max) {
            throw new IOException("bad private data length " + n);
        }
        byte[] a = new byte[n];
        in.readFully(a);
        return a;
    }
}

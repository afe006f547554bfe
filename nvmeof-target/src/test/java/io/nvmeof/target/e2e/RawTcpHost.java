package io.nvmeof.target.e2e;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.ConnectData;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * A deliberately small, blocking NVMe/TCP host for tests: one connection = one queue, one command at a time. It is
 * written from nvmeof-protocol.md (§5), independently of the transport under test, so the two check each other.
 * It is a test tool and not the initiator library: no pipelining, no recovery, every protocol surprise throws.
 *
 * <p>Raw access ({@link #sendRaw}, {@link #sendPdu}, {@link #readPdu}) lets tests send broken input and read back what
 * the target answers.
 */
public final class RawTcpHost implements Closeable {
    // PDU types and flags, nvmeof-protocol.md §5.2/§5.3.
    public static final int ICREQ = 0x00;
    public static final int ICRESP = 0x01;
    public static final int H2C_TERM_REQ = 0x02;
    public static final int C2H_TERM_REQ = 0x03;
    public static final int CAPSULE_CMD = 0x04;
    public static final int CAPSULE_RESP = 0x05;
    public static final int H2C_DATA = 0x06;
    public static final int C2H_DATA = 0x07;
    public static final int R2T = 0x09;
    public static final int FLAG_HDGST = 0x01;
    public static final int FLAG_DDGST = 0x02;
    public static final int FLAG_LAST_PDU = 0x04;
    public static final int FLAG_SUCCESS = 0x08;

    /** The host NQN the peer VM uses too; any value works for allow_any_host subsystems. */
    public static final String DEFAULT_HOST_NQN =
            "nqn.2014-08.org.nvmexpress:uuid:0a0b0c0d-0000-4000-8000-00000000e2e0";

    public static final UUID DEFAULT_HOST_ID = UUID.fromString("0a0b0c0d-0000-4000-8000-00000000e2e0");
    /** Linux sends at most 8 KiB in-capsule on the admin queue (nvmeof-protocol.md §5.10). */
    public static final int ADMIN_IN_CAPSULE_LIMIT = 8192;
    /** Upper bound for a PDU we are willing to read: a misbehaving target must not make a test allocate 4 GiB. */
    private static final int MAX_PDU = 16 << 20;

    /** A received PDU, split into its parts (nvmeof-protocol.md §5.2 wire layout). Digests are already checked. */
    public record Pdu(int type, int flags, int hlen, int pdo, int plen, ByteBuffer header, byte[] data) {
        public int u16(int offset) {
            return header.getShort(offset) & 0xFFFF;
        }

        public int u32(int offset) {
            return header.getInt(offset);
        }

        @Override
        public String toString() {
            return String.format("PDU[type=0x%02x flags=0x%02x hlen=%d pdo=%d plen=%d]", type, flags, hlen, pdo, plen);
        }
    }

    /** ICResp fields, nvmeof-protocol.md §5.4. */
    public record IcResp(int pfv, int cpda, int dgst, int maxH2cData) {}

    /** A completion, copied out of the CQE (nvmeof-protocol.md §1.2). */
    public record Completion(int cid, int dw0, int dw1, int sqhd, int sqid, int status, boolean viaC2hSuccess) {
        public boolean ok() {
            return Status.isSuccess(status);
        }

        public long result64() {
            return (dw0 & 0xFFFFFFFFL) | ((long) dw1 << 32);
        }

        @Override
        public String toString() {
            return String.format(
                    "Completion[cid=0x%04x dw0=0x%08x dw1=0x%08x sqid=%d status=0x%04x %s%s]",
                    cid, dw0, dw1, sqid, status, Status.toString(status), viaC2hSuccess ? " via C2HData SUCCESS" : "");
        }
    }

    /** The target ended the connection with a C2HTermReq (nvmeof-protocol.md §5.7). */
    public static final class TerminatedException extends IOException {
        public final int fes;
        public final int fei;

        TerminatedException(int fes, int fei) {
            super(String.format("C2HTermReq FES=0x%02x FEI=0x%08x", fes, fei));
            this.fes = fes;
            this.fei = fei;
        }
    }

    /** The target answered a PDU that breaks the binding's rules; the message says which. */
    public static final class ProtocolException extends IOException {
        ProtocolException(String message) {
            super(message);
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final String name;
    private boolean headerDigest;
    private boolean dataDigest;
    private int maxH2cData = 4096;
    private int inCapsuleLimit = ADMIN_IN_CAPSULE_LIMIT;
    private int nextCid = 0x1000;
    private int qid = -1;
    private int cntlid = -1;
    /** Counters a test can assert on to prove a path was taken. */
    public int r2tCount;

    public int h2cDataCount;
    public int c2hDataCount;
    public int inCapsuleWrites;

    private RawTcpHost(Socket socket, String name) throws IOException {
        this.socket = socket;
        this.name = name;
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(30_000);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Opens the TCP connection only; nothing is sent. */
    public static RawTcpHost open(InetSocketAddress target) throws IOException {
        Socket s = new Socket();
        s.connect(target, 10_000);
        return new RawTcpHost(s, "raw-host->" + target);
    }

    /** Opens the connection and does ICReq/ICResp, checking the answer the way the Linux host does (nvmeof-protocol.md §5.4). */
    public static RawTcpHost connect(InetSocketAddress target, boolean headerDigest, boolean dataDigest)
            throws IOException {
        RawTcpHost host = open(target);
        try {
            host.icReq(headerDigest, dataDigest);
            return host;
        } catch (IOException | RuntimeException e) {
            host.close();
            throw e;
        }
    }

    /** Makes the next PDU sent carry a wrong header digest (to test the target's check). */
    public boolean corruptNextHeaderDigest;
    /** Makes the next PDU with data carry a wrong data digest. */
    public boolean corruptNextDataDigest;

    /** Half-close: the target sees EOF on its receive side. */
    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /** Closes with an RST instead of a FIN (SO_LINGER 0), as the Linux host may do (nvmeof-protocol.md §5.1). */
    public void abort() {
        try {
            socket.setSoLinger(true, 0);
        } catch (SocketException ignored) {
            // already closed
        }
        close();
    }

    public void soTimeout(int millis) throws SocketException {
        socket.setSoTimeout(millis);
    }

    public boolean headerDigest() {
        return headerDigest;
    }

    public boolean dataDigest() {
        return dataDigest;
    }

    public int cntlid() {
        return cntlid;
    }

    public int qid() {
        return qid;
    }

    /** In-capsule write limit for this queue: 8 KiB on the admin queue, IOCCSZ × 16 − 64 on I/O queues (nvmeof-protocol.md §5.10). */
    public void inCapsuleLimit(int bytes) {
        this.inCapsuleLimit = bytes;
    }

    // ---------------------------------------------------------------- ICReq / ICResp (nvmeof-protocol.md §5.4)

    public IcResp icReq(boolean wantHeaderDigest, boolean wantDataDigest) throws IOException {
        ByteBuffer b = le(128);
        b.put(0, (byte) ICREQ).put(2, (byte) 128).putInt(4, 128);
        b.putShort(8, (short) 0); // PFV 0
        b.put(10, (byte) 0); // HPDA 0
        b.put(11, (byte) ((wantHeaderDigest ? 1 : 0) | (wantDataDigest ? 2 : 0)));
        b.putInt(12, 0); // MAXR2T 0: one R2T at a time
        sendRaw(b.array());
        Pdu p = readPduNoDigest();
        if (p.type != ICRESP || p.plen != 128 || p.hlen != 128) {
            throw new ProtocolException("expected ICResp (type 1, plen 128), got " + p);
        }
        IcResp r = new IcResp(p.u16(8), p.header.get(10) & 0xFF, p.header.get(11) & 0xFF, p.u32(12));
        int wanted = (wantHeaderDigest ? 1 : 0) | (wantDataDigest ? 2 : 0);
        if (r.pfv != 0 || r.cpda != 0 || r.dgst != wanted || r.maxH2cData < 4096 || r.maxH2cData % 4 != 0) {
            throw new ProtocolException(
                    "ICResp that the Linux host would refuse: " + r + " (asked dgst=" + wanted + ")");
        }
        this.headerDigest = wantHeaderDigest;
        this.dataDigest = wantDataDigest;
        this.maxH2cData = r.maxH2cData;
        return r;
    }

    // ---------------------------------------------------------------- fabrics (nvmeof-protocol.md §2)

    /** Admin Connect: QID 0, SQSIZE 31, CNTLID 0xFFFF (dynamic). Returns the completion; on success remembers CNTLID. */
    public Completion connectAdmin(String subNqn, String hostNqn, UUID hostId, int katoMillis) throws IOException {
        Completion c = connect(0, 31, 0, katoMillis, subNqn, hostNqn, hostId, ConnectData.CNTLID_DYNAMIC);
        if (c.ok()) {
            cntlid = c.dw0 & 0xFFFF;
            qid = 0;
        }
        return c;
    }

    public Completion connectAdmin(String subNqn) throws IOException {
        return connectAdmin(subNqn, DEFAULT_HOST_NQN, DEFAULT_HOST_ID, 30_000);
    }

    /** I/O Connect for QID {@code ioQid} of controller {@code adminCntlid}; KATO 0 (nvmeof-protocol.md §2.2). */
    public Completion connectIo(int ioQid, int sqsize, int adminCntlid, String subNqn, String hostNqn, UUID hostId)
            throws IOException {
        return connectIo(ioQid, sqsize, 0, adminCntlid, subNqn, hostNqn, hostId);
    }

    /** I/O Connect with CATTR (bit 2 disables SQ flow control, which lets the target use C2HData SUCCESS, nvmeof-protocol.md §5.10). */
    public Completion connectIo(
            int ioQid, int sqsize, int cattr, int adminCntlid, String subNqn, String hostNqn, UUID hostId)
            throws IOException {
        Completion c = connect(ioQid, sqsize, cattr, 0, subNqn, hostNqn, hostId, adminCntlid);
        if (c.ok()) {
            cntlid = adminCntlid;
            qid = ioQid;
        }
        return c;
    }

    public Completion connectIo(int ioQid, int adminCntlid, String subNqn) throws IOException {
        return connectIo(ioQid, 31, adminCntlid, subNqn, DEFAULT_HOST_NQN, DEFAULT_HOST_ID);
    }

    private Completion connect(
            int connectQid,
            int sqsize,
            int cattr,
            int kato,
            String subNqn,
            String hostNqn,
            UUID hostId,
            int connectCntlid)
            throws IOException {
        ByteBuffer data = le(ConnectData.LENGTH);
        ConnectData cd = new ConnectData();
        cd.wrap(data, 0);
        cd.hostId(hostId).cntlid(connectCntlid).subNqn(subNqn).hostNqn(hostNqn);
        int saved = inCapsuleLimit;
        inCapsuleLimit = Math.max(
                inCapsuleLimit, ADMIN_IN_CAPSULE_LIMIT); // Connect data is always in-capsule (nvmeof-protocol.md §5.10)
        try {
            return execute(
                    sqe -> sqe.opcode(FabricsCommandType.OPCODE)
                            .fctype(FabricsCommandType.CONNECT.code())
                            .connect(0, connectQid, sqsize, cattr, kato),
                    data.array(),
                    null);
        } finally {
            inCapsuleLimit = saved;
        }
    }

    public Completion propertyGet(int offset, boolean eightBytes) throws IOException {
        return execute(
                sqe -> sqe.opcode(FabricsCommandType.OPCODE)
                        .fctype(FabricsCommandType.PROPERTY_GET.code())
                        .property(eightBytes ? Properties.SIZE_8 : Properties.SIZE_4, offset, 0),
                null,
                null);
    }

    public Completion propertySet(int offset, int value) throws IOException {
        return execute(
                sqe -> sqe.opcode(FabricsCommandType.OPCODE)
                        .fctype(FabricsCommandType.PROPERTY_SET.code())
                        .property(Properties.SIZE_4, offset, value & 0xFFFFFFFFL),
                null,
                null);
    }

    /** The Linux enable sequence (nvmeof-protocol.md §2.3): Get CAP, CC = 0x00460000, CC = 0x00460001, poll CSTS.RDY. Returns CAP. */
    public long enable() throws IOException {
        long cap =
                expectOk(propertyGet(Properties.CAP, true), "Property Get CAP").result64();
        expectOk(propertySet(Properties.CC, 0x00460000), "Property Set CC EN=0");
        expectOk(propertySet(Properties.CC, 0x00460001), "Property Set CC EN=1");
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (true) {
            int csts = expectOk(propertyGet(Properties.CSTS, false), "Property Get CSTS").dw0;
            if ((csts & Properties.CSTS_CFS) != 0) {
                throw new ProtocolException("CSTS.CFS set after enable: 0x" + Integer.toHexString(csts));
            }
            if ((csts & Properties.CSTS_RDY) != 0) {
                return cap;
            }
            if (System.nanoTime() > deadline) {
                throw new ProtocolException("CSTS.RDY not set within 15 s");
            }
            sleep(2);
        }
    }

    /** Normal shutdown (nvmeof-protocol.md §7.3): CC.SHN = 01 with EN still 1, poll CSTS.SHST until 10b. */
    public void shutdown() throws IOException {
        expectOk(propertySet(Properties.CC, 0x00464001), "Property Set CC SHN=01");
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            int csts = expectOk(propertyGet(Properties.CSTS, false), "Property Get CSTS").dw0;
            if ((csts & Properties.CSTS_SHST_MASK) == Properties.CSTS_SHST_COMPLETE) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new ProtocolException("CSTS.SHST not 10b within 10 s: 0x" + Integer.toHexString(csts));
            }
            sleep(2);
        }
    }

    // ---------------------------------------------------------------- admin (nvmeof-protocol.md §3)

    /** Identify with CNS {@code cns}; the 4096-byte page is returned in {@code into}. */
    public Completion identify(int cns, int nsid, byte[] into) throws IOException {
        if (into.length != 4096) {
            throw new IllegalArgumentException("Identify data is 4096 bytes");
        }
        return execute(sqe -> sqe.opcode(AdminOpcode.IDENTIFY.code()).nsid(nsid).cdw(10, cns), null, into);
    }

    public byte[] identifyController() throws IOException {
        byte[] page = new byte[4096];
        expectOk(identify(1, 0, page), "Identify Controller");
        return page;
    }

    /** Set Features Number of Queues (FID 7) asking for {@code n} SQs and CQs; returns DW0 (0's based NSQA/NCQA). */
    public Completion setNumberOfQueues(int n) throws IOException {
        int v = ((n - 1) & 0xFFFF) | ((n - 1) << 16);
        return execute(
                sqe -> sqe.opcode(AdminOpcode.SET_FEATURES.code()).cdw(10, 0x07).cdw(11, v), null, null);
    }

    public Completion keepAlive() throws IOException {
        return execute(sqe -> sqe.opcode(AdminOpcode.KEEP_ALIVE.code()), null, null);
    }

    // ---------------------------------------------------------------- NVM I/O (nvmeof-protocol.md §4)

    /** Read {@code into.length} bytes (a whole number of blocks) from SLBA. */
    public Completion read(int nsid, long slba, int blockSize, byte[] into) throws IOException {
        int nlb = into.length / blockSize;
        return execute(
                sqe -> sqe.opcode(NvmOpcode.READ.code()).nsid(nsid).slba(slba).nlb(nlb - 1), null, into);
    }

    /** Write {@code data} (a whole number of blocks) at SLBA: in-capsule if it fits the limit, else R2T/H2CData. */
    public Completion write(int nsid, long slba, int blockSize, byte[] data) throws IOException {
        int nlb = data.length / blockSize;
        return execute(
                sqe -> sqe.opcode(NvmOpcode.WRITE.code()).nsid(nsid).slba(slba).nlb(nlb - 1), data, null);
    }

    public Completion writeZeroes(int nsid, long slba, int blocks) throws IOException {
        return execute(
                sqe -> sqe.opcode(NvmOpcode.WRITE_ZEROES.code())
                        .nsid(nsid)
                        .slba(slba)
                        .nlb(blocks - 1),
                null,
                null);
    }

    public Completion flush(int nsid) throws IOException {
        return execute(sqe -> sqe.opcode(NvmOpcode.FLUSH.code()).nsid(nsid), null, null);
    }

    // ---------------------------------------------------------------- command engine

    /**
     * Runs one command to completion. {@code fill} sets opcode and command fields on a zeroed SQE; CID, FLAGS (0x40)
     * and the SGL are set here: 0x01 in-capsule for writes within the limit, else 0x5A with the data length (nvmeof-protocol.md §5.10).
     */
    public Completion execute(Consumer<SubmissionQueueEntry> fill, byte[] writeData, byte[] readInto)
            throws IOException {
        if (writeData != null && readInto != null) {
            throw new IllegalArgumentException("bidirectional commands are not supported");
        }
        ByteBuffer sqeBuf = le(SubmissionQueueEntry.LENGTH);
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(sqeBuf, 0);
        fill.accept(sqe);
        int cid = nextCid();
        sqe.cid(cid).flags(SubmissionQueueEntry.FLAGS_SGL);
        boolean inCapsule = writeData != null && writeData.length <= inCapsuleLimit;
        int length = writeData != null ? writeData.length : readInto != null ? readInto.length : 0;
        sqe.sgl().set(inCapsule ? SglDescriptor.ID_IN_CAPSULE : SglDescriptor.ID_TCP_TRANSPORT, 0, length);
        sendCapsule(sqeBuf.array(), inCapsule ? writeData : null);
        if (inCapsule) {
            inCapsuleWrites++;
        }
        int received = 0;
        int sent = inCapsule ? length : 0;
        while (true) {
            Pdu p = readPdu();
            switch (p.type) {
                case CAPSULE_RESP -> {
                    CompletionQueueEntry cqe = new CompletionQueueEntry();
                    cqe.wrap(p.header, 8);
                    if (cqe.cid() != cid) {
                        throw new ProtocolException("CapsuleResp for CID 0x" + Integer.toHexString(cqe.cid())
                                + " while waiting for 0x" + Integer.toHexString(cid));
                    }
                    Completion c = new Completion(
                            cqe.cid(), cqe.dw0(), cqe.dw1(), cqe.sqhd(), cqe.sqid(), cqe.status(), false);
                    if (c.ok() && readInto != null && received != readInto.length) {
                        throw new ProtocolException(
                                "success after " + received + " of " + readInto.length + " bytes: " + c);
                    }
                    return c;
                }
                case C2H_DATA -> {
                    c2hDataCount++;
                    int cccid = p.u16(8);
                    int datao = p.u32(12);
                    int datal = p.u32(16);
                    if (readInto == null || cccid != cid) {
                        throw new ProtocolException("unexpected C2HData for CID 0x" + Integer.toHexString(cccid));
                    }
                    if (datao != received || datal != p.data.length || datao + datal > readInto.length) {
                        throw new ProtocolException(
                                "C2HData out of order or too long: DATAO " + datao + " DATAL " + datal + " carried "
                                        + p.data.length + " received " + received + " of " + readInto.length);
                    }
                    System.arraycopy(p.data, 0, readInto, datao, datal);
                    received += datal;
                    if ((p.flags & FLAG_SUCCESS) != 0) {
                        if ((p.flags & FLAG_LAST_PDU) == 0) {
                            throw new ProtocolException("C2HData SUCCESS without LAST_PDU (nvmeof-protocol.md §5.10)");
                        }
                        if (received != readInto.length) {
                            throw new ProtocolException("C2HData SUCCESS after " + received + " of " + readInto.length);
                        }
                        return new Completion(cid, 0, 0, 0, qid, Status.SUCCESS, true);
                    }
                }
                case R2T -> {
                    r2tCount++;
                    int cccid = p.u16(8);
                    int ttag = p.u16(10);
                    int r2to = p.u32(12);
                    int r2tl = p.u32(16);
                    if (writeData == null || cccid != cid) {
                        throw new ProtocolException("unexpected R2T for CID 0x" + Integer.toHexString(cccid));
                    }
                    if (r2tl <= 0 || r2to < sent || (long) r2to + r2tl > writeData.length) {
                        throw new ProtocolException("R2T the Linux host would refuse: R2TO " + r2to + " R2TL " + r2tl
                                + " sent " + sent + " of " + writeData.length);
                    }
                    for (int off = r2to; off < r2to + r2tl; ) {
                        int n = Math.min(maxH2cData, r2to + r2tl - off);
                        boolean last = off + n == r2to + r2tl;
                        sendH2cData(cid, ttag, off, Arrays.copyOfRange(writeData, off, off + n), last);
                        off += n;
                    }
                    sent = r2to + r2tl;
                }
                case C2H_TERM_REQ -> throw terminated(p);
                default -> throw new ProtocolException("unexpected " + p);
            }
        }
    }

    private int nextCid() {
        int cid = nextCid;
        nextCid = nextCid >= 0xFFF0 ? 0x1000 : nextCid + 0x11; // not small consecutive numbers, like Linux
        return cid;
    }

    // ---------------------------------------------------------------- PDU level (nvmeof-protocol.md §5.2)

    public void sendCapsule(byte[] sqe, byte[] inCapsuleData) throws IOException {
        sendPdu(CAPSULE_CMD, 0, sqe, inCapsuleData);
    }

    public void sendH2cData(int cid, int ttag, int datao, byte[] data, boolean last) throws IOException {
        ByteBuffer psh = le(16);
        psh.putShort(0, (short) cid).putShort(2, (short) ttag).putInt(4, datao).putInt(8, data.length);
        h2cDataCount++;
        sendPdu(H2C_DATA, last ? FLAG_LAST_PDU : 0, psh.array(), data);
    }

    /**
     * Sends one PDU with the negotiated digests: CH (8 bytes) + {@code psh} + [HDGST] + [data] + [DDGST], no padding
     * (PDO = HLEN + HDGST, nvmeof-protocol.md §5.9).
     */
    public void sendPdu(int type, int extraFlags, byte[] psh, byte[] data) throws IOException {
        int hlen = 8 + psh.length;
        boolean hd = headerDigest;
        boolean dd = dataDigest && data != null && data.length > 0;
        int hdgst = hd ? 4 : 0;
        int dataLen = data == null ? 0 : data.length;
        int pdo = dataLen > 0 ? hlen + hdgst : 0;
        int plen = hlen + hdgst + dataLen + (dd ? 4 : 0);
        ByteBuffer b = le(plen);
        int flags = extraFlags | (hd ? FLAG_HDGST : 0) | (dd ? FLAG_DDGST : 0);
        b.put(0, (byte) type)
                .put(1, (byte) flags)
                .put(2, (byte) hlen)
                .put(3, (byte) pdo)
                .putInt(4, plen);
        b.put(8, psh);
        if (hd) {
            b.putInt(hlen, crc(b.array(), 0, hlen) ^ (corruptNextHeaderDigest ? 0x00100000 : 0));
            corruptNextHeaderDigest = false;
        }
        if (dataLen > 0) {
            b.put(pdo, data);
            if (dd) {
                b.putInt(pdo + dataLen, crc(data, 0, dataLen) ^ (corruptNextDataDigest ? 0x00000100 : 0));
                corruptNextDataDigest = false;
            }
        }
        sendRaw(b.array());
    }

    public void sendRaw(byte[] bytes) throws IOException {
        if (dribble <= 0) {
            out.write(bytes);
            out.flush();
            return;
        }
        // Small separately flushed pieces with TCP_NODELAY: the target sees a PDU arrive in many reads.
        for (int off = 0; off < bytes.length; off += dribble) {
            out.write(bytes, off, Math.min(dribble, bytes.length - off));
            out.flush();
            if (dribblePauseMillis > 0) {
                sleep(dribblePauseMillis);
            }
        }
    }

    /** Splits every send into pieces of this many bytes (0: one write per PDU). */
    public int dribble;

    public int dribblePauseMillis;

    /** Reads one PDU, checking the common header and the negotiated digests (nvmeof-protocol.md §5.2, §5.8). */
    public Pdu readPdu() throws IOException {
        return readPdu(true);
    }

    private Pdu readPduNoDigest() throws IOException {
        return readPdu(false);
    }

    private Pdu readPdu(boolean digestsApply) throws IOException {
        byte[] ch = new byte[8];
        in.readFully(ch);
        ByteBuffer chb = ByteBuffer.wrap(ch).order(ByteOrder.LITTLE_ENDIAN);
        int type = ch[0] & 0xFF;
        int flags = ch[1] & 0xFF;
        int hlen = ch[2] & 0xFF;
        int pdo = ch[3] & 0xFF;
        int plen = chb.getInt(4);
        if (hlen < 8 || plen < hlen || plen > MAX_PDU) {
            throw new ProtocolException(
                    String.format("bad common header: type 0x%02x hlen %d plen %d", type, hlen, plen));
        }
        byte[] whole = new byte[plen];
        System.arraycopy(ch, 0, whole, 0, 8);
        in.readFully(whole, 8, plen - 8);
        ByteBuffer header = ByteBuffer.wrap(Arrays.copyOf(whole, hlen)).order(ByteOrder.LITTLE_ENDIAN);
        if (type == C2H_TERM_REQ || type == ICRESP || !digestsApply) {
            // No digests on ICResp/TermReq (nvmeof-protocol.md §5.8); TermReq data = the offending header.
            return new Pdu(type, flags, hlen, pdo, plen, header, Arrays.copyOfRange(whole, hlen, plen));
        }
        if (hlen != 24) {
            throw new ProtocolException("the Linux host requires HLEN 24 on every PDU after ICResp: " + hlen);
        }
        int pos = hlen;
        if (headerDigest) {
            if ((flags & FLAG_HDGST) == 0) {
                throw new ProtocolException(
                        "header digest negotiated but HDGSTF clear on type 0x" + Integer.toHexString(type));
            }
            int got = ByteBuffer.wrap(whole, hlen, 4)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .getInt();
            if (got != crc(whole, 0, hlen)) {
                throw new ProtocolException("header digest mismatch on type 0x" + Integer.toHexString(type));
            }
            pos += 4;
        } else if ((flags & FLAG_HDGST) != 0) {
            throw new ProtocolException("HDGSTF set but header digest not negotiated");
        }
        byte[] data = new byte[0];
        if (type == C2H_DATA) {
            boolean dd = (flags & FLAG_DDGST) != 0;
            if (dd != dataDigest) {
                throw new ProtocolException("DDGSTF " + dd + " but data digest negotiated " + dataDigest);
            }
            if (pdo != pos) {
                throw new ProtocolException("C2HData PDO " + pdo + ", expected " + pos + " (HPDA 0, no padding)");
            }
            int end = plen - (dd ? 4 : 0);
            data = Arrays.copyOfRange(whole, pdo, end);
            if (dd) {
                int got = ByteBuffer.wrap(whole, end, 4)
                        .order(ByteOrder.LITTLE_ENDIAN)
                        .getInt();
                if (got != crc(data, 0, data.length)) {
                    throw new ProtocolException("data digest mismatch on C2HData");
                }
            }
        } else if (plen != pos) {
            throw new ProtocolException("PLEN " + plen + " on a PDU without data, expected " + pos + ": type 0x"
                    + Integer.toHexString(type));
        }
        return new Pdu(type, flags, hlen, pdo, plen, header, data);
    }

    private static TerminatedException terminated(Pdu p) {
        return new TerminatedException(p.u16(8), p.u32(10));
    }

    /**
     * After a protocol violation: reads until the target closes the connection, within {@code timeoutMillis}. Returns
     * the C2HTermReq PDUs seen (the target may send one, nvmeof-protocol.md §5.7) and every other PDU type it sent in between.
     *
     * @throws AssertionError if the connection is still open after the timeout
     */
    public List<Pdu> readUntilClosed(int timeoutMillis) throws IOException {
        socket.setSoTimeout(timeoutMillis);
        List<Pdu> seen = new ArrayList<>();
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        try {
            while (System.nanoTime() < deadline) {
                byte[] ch = new byte[8];
                in.readFully(ch);
                int hlen = ch[2] & 0xFF;
                int plen = ByteBuffer.wrap(ch).order(ByteOrder.LITTLE_ENDIAN).getInt(4);
                if (plen < 8 || plen > MAX_PDU || hlen < 8 || hlen > plen) {
                    throw new AssertionError(name + ": target sent a malformed PDU header " + Arrays.toString(ch));
                }
                byte[] rest = new byte[plen - 8];
                in.readFully(rest);
                byte[] whole = new byte[plen];
                System.arraycopy(ch, 0, whole, 0, 8);
                System.arraycopy(rest, 0, whole, 8, rest.length);
                seen.add(new Pdu(
                        ch[0] & 0xFF,
                        ch[1] & 0xFF,
                        hlen,
                        ch[3] & 0xFF,
                        plen,
                        ByteBuffer.wrap(Arrays.copyOf(whole, hlen)).order(ByteOrder.LITTLE_ENDIAN),
                        Arrays.copyOfRange(whole, hlen, plen)));
            }
        } catch (EOFException | SocketException e) {
            return seen; // closed (FIN or RST): what we wanted
        } catch (SocketTimeoutException e) {
            throw new AssertionError(name + ": the target did not close the connection within " + timeoutMillis
                    + " ms; PDUs seen: " + seen);
        }
        throw new AssertionError(name + ": the target kept sending PDUs for " + timeoutMillis + " ms: " + seen);
    }

    /** True once the peer has closed: a read returns EOF or the socket was reset. */
    public boolean isClosedByPeer(int waitMillis) throws IOException {
        socket.setSoTimeout(waitMillis);
        try {
            InputStream raw = socket.getInputStream();
            return raw.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            return true;
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a test socket cannot fail in a way that matters
        }
    }

    @Override
    public String toString() {
        return name + (qid >= 0 ? " qid " + qid + " cntlid " + cntlid : "");
    }

    // ---------------------------------------------------------------- helpers

    public static Completion expectOk(Completion c, String what) throws ProtocolException {
        if (!c.ok()) {
            throw new ProtocolException(what + " failed: " + c);
        }
        return c;
    }

    public static int crc(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static void sleep(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** For logs: the first bytes of an array in hex. */
    static String hexHead(byte[] bytes, int max) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(max, bytes.length); i++) {
            sb.append(String.format("%02x ", bytes[i]));
        }
        return sb.toString().trim();
    }
}

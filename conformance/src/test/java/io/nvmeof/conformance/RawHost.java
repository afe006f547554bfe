package io.nvmeof.conformance;

import io.nvmeof.conformance.Outcome.Fate;
import io.nvmeof.core.command.AdminOpcode;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/**
 * The harness's NVMe/TCP host: one connection = one queue, no digests, at most two commands in flight (a fused pair).
 * It sends whatever SQE bytes and SGL it is given and, unlike a real host, never throws on what the target answers:
 * every answer — a completion, a C2HTermReq, a close, silence, a PDU out of place — becomes an {@link Outcome}.
 * Written from nvmeof-protocol.md §5 (PDU layouts §5.2–§5.7); independent of both targets.
 *
 * <p>Why not nvmeof-target's test {@code RawTcpHost}: that one checks the target the way the Linux host does and
 * throws at the first surprise, which is what its tests want; here surprises are the data. Sharing it would mean
 * moving it out of nvmeof-target's tests while other branches change them.
 */
final class RawHost implements Closeable {
    static final int ICREQ = 0x00;
    static final int ICRESP = 0x01;
    static final int C2H_TERM_REQ = 0x03;
    static final int CAPSULE_CMD = 0x04;
    static final int CAPSULE_RESP = 0x05;
    static final int H2C_DATA = 0x06;
    static final int C2H_DATA = 0x07;
    static final int R2T = 0x09;
    static final int FLAG_LAST_PDU = 0x04;
    static final int FLAG_SUCCESS = 0x08;
    /** The most data the host takes for one command; a target sending more is a PROTOCOL outcome. */
    static final int MAX_DATA = 4 << 20;

    /** {@code -Dconformance.trace=true}: print every PDU received (for re-running a sequence with -Dconformance.only). */
    private static final boolean TRACE = Boolean.getBoolean("conformance.trace");

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int maxH2cData = 4096;
    private int nextCid = 0x0100;
    private boolean dead;
    /** CIDs of Asynchronous Event Requests left outstanding: their completions, if any come, are skipped. */
    private final java.util.Set<Integer> parked = new java.util.HashSet<>();

    private RawHost(Socket socket) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** TCP connect and ICReq/ICResp without digests (nvmeof-protocol.md §5.4). */
    static RawHost connect(InetSocketAddress target) throws IOException {
        Socket s = new Socket();
        s.connect(target, 10_000);
        RawHost h = new RawHost(s);
        try {
            ByteBuffer b = le(128);
            b.put(0, (byte) ICREQ).put(2, (byte) 128).putInt(4, 128);
            h.out.write(b.array());
            h.out.flush();
            s.setSoTimeout(10_000);
            byte[] resp = new byte[128];
            h.in.readFully(resp);
            ByteBuffer r = ByteBuffer.wrap(resp).order(ByteOrder.LITTLE_ENDIAN);
            if (resp[0] != ICRESP || r.getInt(4) != 128) {
                throw new IOException("no ICResp from " + target + ": type " + resp[0]);
            }
            h.maxH2cData = Math.max(4096, r.getInt(12));
            return h;
        } catch (IOException e) {
            h.close();
            throw e;
        }
    }

    /** False once a command's fate was anything but KEPT: later commands are not sent. */
    boolean alive() {
        return !dead;
    }

    /** Sends {@code cmd} and waits for what the target does about it. */
    Outcome execute(Cmd cmd) {
        return execute(List.of(cmd)).get(0);
    }

    /**
     * Sends the commands back to back (a fused pair) and collects one outcome per command. If the connection dies
     * before a command completes, that command's outcome carries the fate.
     */
    List<Outcome> execute(List<Cmd> cmds) {
        Outcome[] results = new Outcome[cmds.size()];
        if (dead) {
            Arrays.fill(results, Outcome.failed(Fate.NOT_SENT, 0));
            return List.of(results);
        }
        int[] cids = new int[cmds.size()];
        ByteArrayOutputStream[] data = new ByteArrayOutputStream[cmds.size()];
        try {
            for (int i = 0; i < cmds.size(); i++) {
                cids[i] = nextCid;
                nextCid = nextCid >= 0xF000 ? 0x0100 : nextCid + 0x13;
                data[i] = new ByteArrayOutputStream();
                send(cmds.get(i), cids[i]);
            }
            int pending = cmds.size();
            int timeout = cmds.stream().mapToInt(Cmd::timeoutMillis).max().orElse(Cmd.DEFAULT_TIMEOUT_MILLIS);
            socket.setSoTimeout(timeout);
            while (pending > 0) {
                Pdu p = readPdu();
                if (TRACE) {
                    System.out.printf("    pdu type %02x flags %02x len %d%n", p.type, p.flags, p.data.length);
                }
                if (p.type == C2H_TERM_REQ) {
                    return fillDead(results, Fate.TERMINATED, p.header.getShort(8) & 0xFFFF);
                }
                int cid = p.type == CAPSULE_RESP ? p.header.getShort(8 + 12) & 0xFFFF : p.header.getShort(8) & 0xFFFF;
                if (p.type == CAPSULE_RESP && parked.remove(cid)) {
                    continue;
                }
                int i = indexOf(cids, cid);
                if (i < 0 || results[i] != null) {
                    return fillDead(results, Fate.PROTOCOL, 0);
                }
                Cmd cmd = cmds.get(i);
                switch (p.type) {
                    case CAPSULE_RESP -> {
                        ByteBuffer h = p.header;
                        results[i] = Outcome.completed(
                                h.getShort(8 + 14) & 0xFFFE, h.getInt(8), h.getInt(12), data[i].toByteArray());
                        pending--;
                    }
                    case C2H_DATA -> {
                        int datao = p.header.getInt(12);
                        if (datao != data[i].size() || datao + p.data.length > Math.max(cmd.readLength(), 0)) {
                            return fillDead(results, Fate.PROTOCOL, 0);
                        }
                        data[i].write(p.data);
                        if ((p.flags & FLAG_SUCCESS) != 0) {
                            results[i] = Outcome.completed(0, 0, 0, data[i].toByteArray());
                            pending--;
                        }
                    }
                    case R2T -> {
                        int ttag = p.header.getShort(10) & 0xFFFF;
                        int r2to = p.header.getInt(12);
                        int r2tl = p.header.getInt(16);
                        if (r2to < 0 || r2tl <= 0 || (long) r2to + r2tl > MAX_DATA) {
                            return fillDead(results, Fate.PROTOCOL, 0);
                        }
                        sendH2cData(cid, ttag, r2to, r2tl, cmd.writeData());
                    }
                    default -> {
                        return fillDead(results, Fate.PROTOCOL, 0);
                    }
                }
            }
            return List.of(results);
        } catch (SocketTimeoutException e) {
            if (cmds.size() == 1
                    && !cmds.get(0).isFabrics()
                    && cmds.get(0).queue() == Cmd.Queue.ADMIN
                    && cmds.get(0).opcode() == AdminOpcode.ASYNC_EVENT_REQUEST.code()) {
                parked.add(cids[0]);
                return List.of(Outcome.failed(Fate.OUTSTANDING, 0));
            }
            return fillDead(results, Fate.NO_RESPONSE, 0);
        } catch (EOFException | SocketException e) {
            return fillDead(results, Fate.CLOSED, 0);
        } catch (IOException e) {
            return fillDead(results, Fate.PROTOCOL, 0);
        }
    }

    private List<Outcome> fillDead(Outcome[] results, Fate fate, int fes) {
        dead = true;
        for (int i = 0; i < results.length; i++) {
            if (results[i] == null) {
                results[i] = Outcome.failed(fate, fes);
            }
        }
        close();
        return List.of(results);
    }

    private static int indexOf(int[] cids, int cid) {
        for (int i = 0; i < cids.length; i++) {
            if (cids[i] == cid) {
                return i;
            }
        }
        return -1;
    }

    /** CapsuleCmd: CH + the 64-byte SQE (the PSH) + in-capsule data, PDO right after the header (§5.5). */
    private void send(Cmd cmd, int cid) throws IOException {
        byte[] sqe = cmd.sqe().clone();
        sqe[2] = (byte) cid;
        sqe[3] = (byte) (cid >> 8);
        byte[] data = cmd.inCapsule() == null ? new byte[0] : cmd.inCapsule();
        writePdu(CAPSULE_CMD, 0, sqe, data);
    }

    /** H2CData PDUs for an R2T, each at most MAXH2CDATA (§5.6); bytes beyond what the host has are zeros. */
    private void sendH2cData(int cid, int ttag, int offset, int length, byte[] have) throws IOException {
        for (int off = offset; off < offset + length; ) {
            int n = Math.min(maxH2cData, offset + length - off);
            byte[] chunk = new byte[n];
            if (have != null && off < have.length) {
                System.arraycopy(have, off, chunk, 0, Math.min(n, have.length - off));
            }
            ByteBuffer psh = le(16);
            psh.putShort(0, (short) cid)
                    .putShort(2, (short) ttag)
                    .putInt(4, off)
                    .putInt(8, n);
            writePdu(H2C_DATA, off + n == offset + length ? FLAG_LAST_PDU : 0, psh.array(), chunk);
            off += n;
        }
    }

    private void writePdu(int type, int flags, byte[] psh, byte[] data) throws IOException {
        int hlen = 8 + psh.length;
        int plen = hlen + data.length;
        ByteBuffer b = le(plen);
        b.put(0, (byte) type).put(1, (byte) flags).put(2, (byte) hlen);
        b.put(3, (byte) (data.length > 0 ? hlen : 0)).putInt(4, plen);
        b.put(8, psh);
        b.put(hlen, data);
        out.write(b.array());
        out.flush();
    }

    private record Pdu(int type, int flags, ByteBuffer header, byte[] data) {}

    private Pdu readPdu() throws IOException {
        byte[] ch = new byte[8];
        in.readFully(ch);
        int hlen = ch[2] & 0xFF;
        int pdo = ch[3] & 0xFF;
        int plen = ByteBuffer.wrap(ch).order(ByteOrder.LITTLE_ENDIAN).getInt(4);
        if (hlen < 8 || plen < hlen || plen > MAX_DATA + 256) {
            throw new IOException("bad common header");
        }
        byte[] whole = new byte[plen];
        System.arraycopy(ch, 0, whole, 0, 8);
        in.readFully(whole, 8, plen - 8);
        ByteBuffer header =
                ByteBuffer.wrap(Arrays.copyOf(whole, Math.max(hlen, 24))).order(ByteOrder.LITTLE_ENDIAN);
        int dataStart = pdo >= hlen && pdo <= plen ? pdo : hlen;
        return new Pdu(ch[0] & 0xFF, ch[1] & 0xFF, header, Arrays.copyOfRange(whole, dataStart, plen));
    }

    @Override
    public void close() {
        dead = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // a test socket: nothing to do
        }
    }

    static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }
}

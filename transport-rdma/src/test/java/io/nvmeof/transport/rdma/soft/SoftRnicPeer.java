package io.nvmeof.transport.rdma.soft;

import static io.nvmeof.transport.rdma.verbs.ProtectionDomain.ACCESS_LOCAL_WRITE;
import static io.nvmeof.transport.rdma.verbs.ProtectionDomain.ACCESS_REMOTE_READ;
import static io.nvmeof.transport.rdma.verbs.ProtectionDomain.ACCESS_REMOTE_WRITE;
import static java.nio.charset.StandardCharsets.US_ASCII;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32;

/**
 * The other process of the cross-process tests: listens on loopback, prints {@code PORT <n>}, and serves each
 * connection on its own thread. The connect private data picks a mode: "REJ..." (reject with "NO:" + it), "NORECV"
 * (post no receive), "SMALL" (receives of 16 bytes), "HOLD" (post 4 receives and never poll until disconnected),
 * anything else: serve commands. A command is a Send whose first int (little-endian) is: 1 INFO (reply: addresses and
 * rkeys of its rw, read-only and plain-direct regions), 2 ECHO (reply with the same bytes), 3 CRC offset length of
 * the rw region, 4 FILL the rw region with a pattern from seed, 5 DEREG the rw region, 6 STATE (was the command
 * received with invalidate, which key, is rw still valid). Non-success receive completions are printed as
 * {@code RECV <status>}; the end of a connection as {@code GONE flushed=<n>}. Stdin: "exit" exits.
 */
public final class SoftRnicPeer {
    static final int INFO = 1, ECHO = 2, CRC = 3, FILL = 4, DEREG = 5, STATE = 6;

    public static void main(String[] args) throws Exception {
        SoftRdmaProvider provider = new SoftRdmaProvider(Duration.ofMillis(Long.parseLong(args[0])));
        RdmaListener listener = provider.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), req -> {
            String mode = US_ASCII.decode(req.privateData()).toString();
            try {
                if (mode.startsWith("REJ")) {
                    req.reject(ByteBuffer.wrap(("NO:" + mode).getBytes(US_ASCII)));
                    return;
                }
                RdmaConnection c =
                        req.accept(Harness.ATTRS, null, ByteBuffer.wrap(("PEER:" + mode).getBytes(US_ASCII)));
                Thread t = new Thread(() -> serve(c, mode), "serve-" + mode);
                t.start();
            } catch (Exception e) {
                e.printStackTrace();
            }
        });
        System.out.println("PORT " + listener.localAddress().getPort() + " PID "
                + ProcessHandle.current().pid());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, US_ASCII));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("exit")) {
                break;
            }
        }
        listener.close();
        System.exit(0);
    }

    static synchronized void say(String s) {
        System.out.println(s);
        System.out.flush();
    }

    private static void serve(RdmaConnection c, String mode) {
        try {
            AtomicBoolean gone = new AtomicBoolean();
            c.onDisconnect(() -> gone.set(true));
            ProtectionDomain pd = c.protectionDomain();
            QueuePair qp = c.queuePair();
            CompletionQueue cq = c.completionQueue();
            MemoryRegion rw =
                    pd.register(pd.allocate(1 << 16), ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
            MemoryRegion ro = pd.register(pd.allocate(4096), ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
            MemoryRegion plain = pd.register(
                    ByteBuffer.allocateDirect(4096), ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
            MemoryRegion recv = pd.register(pd.allocate(8 * 4096), ACCESS_LOCAL_WRITE);
            MemoryRegion send = pd.register(pd.allocate(4096), 0);
            int recvLen = mode.equals("SMALL") ? 16 : 4096;
            int posted = mode.equals("NORECV") ? 0 : mode.equals("HOLD") ? 4 : 8;
            for (int i = 0; i < posted; i++) {
                qp.postRecv(i, recv, i * 4096, recvLen);
            }
            say("READY " + mode);
            if (mode.equals("HOLD")) {
                while (!gone.get()) {
                    Thread.sleep(5);
                }
            }
            WorkCompletion[] out = new WorkCompletion[8];
            for (int i = 0; i < out.length; i++) {
                out[i] = new WorkCompletion();
            }
            int flushed = 0;
            long goneAt = 0;
            ByteBuffer rb = recv.buffer().order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer sb = send.buffer().order(ByteOrder.LITTLE_ENDIAN);
            for (; ; ) {
                int n = cq.poll(out);
                for (int i = 0; i < n; i++) {
                    WorkCompletion w = out[i];
                    if (w.status == WorkCompletion.Status.WR_FLUSH_ERR) {
                        flushed++;
                        continue;
                    }
                    if (!w.ok()) {
                        say((w.opcode == WorkCompletion.Opcode.RECV ? "RECV " : "SEND ") + w.status);
                        continue;
                    }
                    if (w.opcode != WorkCompletion.Opcode.RECV) {
                        continue;
                    }
                    int slot = (int) w.wrId;
                    int base = slot * 4096;
                    int cmd = rb.getInt(base);
                    int len;
                    switch (cmd) {
                        case INFO -> {
                            sb.putLong(0, rw.address())
                                    .putInt(8, rw.rkey())
                                    .putLong(12, ro.address())
                                    .putInt(20, ro.rkey())
                                    .putLong(24, plain.address())
                                    .putInt(32, plain.rkey());
                            len = 36;
                        }
                        case ECHO -> {
                            sb.put(0, rb, base, w.byteLength);
                            len = w.byteLength;
                        }
                        case CRC -> {
                            CRC32 crc = new CRC32();
                            crc.update(rw.buffer().slice(rb.getInt(base + 4), rb.getInt(base + 8)));
                            sb.putLong(0, crc.getValue());
                            len = 8;
                        }
                        case FILL -> {
                            int seed = rb.getInt(base + 4);
                            ByteBuffer b = rw.buffer();
                            for (int k = 0; k < b.capacity(); k++) {
                                b.put(k, (byte) (seed + k * 7));
                            }
                            len = 0;
                        }
                        case DEREG -> {
                            rw.close();
                            len = 0;
                        }
                        case STATE -> {
                            sb.putInt(0, w.withInvalidate ? 1 : 0)
                                    .putInt(4, w.invalidatedRkey)
                                    .putInt(8, ((SoftMemoryRegion) rw).valid() ? 1 : 0);
                            len = 12;
                        }
                        default -> len = 0;
                    }
                    qp.postRecv(slot, recv, base, recvLen);
                    qp.postSend(1000 + slot, send, 0, len, true);
                }
                if (gone.get()) {
                    if (goneAt == 0) {
                        goneAt = System.nanoTime();
                    } else if (System.nanoTime() - goneAt > 300_000_000L) {
                        break;
                    }
                }
                if (n == 0 && !mode.equals("BUSY")) {
                    cq.await(Duration.ofMillis(1));
                }
            }
            say("GONE flushed=" + flushed + " state=" + qp.state());
            c.close();
        } catch (Exception e) {
            e.printStackTrace();
            say("FAILED " + e);
        }
    }
}

package io.nvmeof.transport.rdma.disni;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.ConnectionRequest;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.RdmaRejectedException;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs inside the peer VM (disni-verbs.sh) over the DiSNI provider on rxe0: one JVM, a listener and connections to it
 * at {@code args[0]} (10.0.2.15). Prints one line per check ("OK ..." / "FAIL ...") and exits 1 if any failed.
 */
public final class DisniVerbsCheck {
    private static final QueuePairAttributes ATTRS = new QueuePairAttributes(16, 16, 1, 1, 64, 4, 4);
    private static int failures;

    private DisniVerbsCheck() {}

    static void check(boolean ok, String what) {
        System.out.println((ok ? "OK   " : "FAIL ") + what);
        if (!ok) {
            failures++;
        }
    }

    static ByteBuffer pdata(int kind, int length) {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < length; i++) {
            b.put(i, (byte) (i * 7 + 1));
        }
        b.put(0, (byte) kind);
        b.rewind();
        return b;
    }

    static boolean startsWith(ByteBuffer got, ByteBuffer want) {
        if (got.remaining() < want.remaining()) {
            return false;
        }
        for (int i = 0; i < want.remaining(); i++) {
            if (got.get(got.position() + i) != want.get(want.position() + i)) {
                return false;
            }
        }
        return true;
    }

    /** Polls (sleeping on the CQ in between) until n completions arrived or 10 s passed. */
    static List<WorkCompletion> completions(RdmaConnection c, int n) throws InterruptedException {
        List<WorkCompletion> got = new ArrayList<>();
        WorkCompletion[] wcs = new WorkCompletion[8];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (got.size() < n && System.nanoTime() < deadline) {
            int k = c.completionQueue().poll(wcs);
            for (int i = 0; i < k; i++) {
                WorkCompletion w = new WorkCompletion();
                w.wrId = wcs[i].wrId;
                w.opcode = wcs[i].opcode;
                w.status = wcs[i].status;
                w.byteLength = wcs[i].byteLength;
                w.invalidatedRkey = wcs[i].invalidatedRkey;
                w.withInvalidate = wcs[i].withInvalidate;
                w.qpNumber = wcs[i].qpNumber;
                got.add(w);
            }
            if (k == 0) {
                c.completionQueue().await(Duration.ofMillis(200));
            }
        }
        return got;
    }

    public static void main(String[] args) throws Exception {
        String host = args.length > 0 ? args[0] : "10.0.2.15";
        DisniProvider provider = new DisniProvider();
        System.out.println("provider: " + provider.description() + " available=" + provider.isAvailable() + " reason="
                + provider.unavailableReason());
        if (!provider.isAvailable()) {
            System.exit(2);
        }
        BlockingQueue<RdmaConnection> accepted = new ArrayBlockingQueue<>(8);
        BlockingQueue<ByteBuffer> requests = new ArrayBlockingQueue<>(8);
        BlockingQueue<Integer> peerResponder = new ArrayBlockingQueue<>(8);
        // the server's receive buffers: 16 x 256 bytes, posted before the accept
        List<MemoryRegion> serverRecv = new ArrayList<>();
        RdmaListener listener = provider.listen(new InetSocketAddress(host, 4420), (ConnectionRequest r) -> {
            ByteBuffer pd = r.privateData();
            requests.add(pd);
            peerResponder.add(r.peerResponderResources());
            try {
                if (pd.get(0) == 2) {
                    r.reject(ByteBuffer.wrap(new byte[] {0, 0, 6, 0})); // NVMe/RDMA: RECFMT 0, STS 6 (no resources)
                    return;
                }
                RdmaConnection c = r.accept(
                        ATTRS,
                        conn -> {
                            try {
                                MemoryRegion mr = conn.protectionDomain()
                                        .register(
                                                conn.protectionDomain().allocate(16 * 256),
                                                ProtectionDomain.ACCESS_LOCAL_WRITE);
                                serverRecv.add(mr);
                                for (int i = 0; i < 16; i++) {
                                    conn.queuePair().postRecv(1000 + i, mr, i * 256, 256);
                                }
                            } catch (Exception e) {
                                throw new RuntimeException(e);
                            }
                        },
                        pdata(0x41, 32));
                accepted.add(c);
            } catch (Exception e) {
                System.out.println("FAIL server handler: " + e);
                failures++;
            }
        });
        System.out.println("listening on " + listener.localAddress());
        InetSocketAddress target = new InetSocketAddress(host, 4420);

        // ---- reject with private data
        try {
            provider.connect(target, ATTRS, pdata(2, 32), null, Duration.ofSeconds(10));
            check(false, "reject: connect should have been rejected");
        } catch (RdmaRejectedException e) {
            ByteBuffer got = e.privateData();
            check(
                    startsWith(got, ByteBuffer.wrap(new byte[] {0, 0, 6, 0})),
                    "reject with private data: client got " + got.remaining() + " bytes, first 4 = " + hex(got, 4)
                            + " (" + e.getMessage() + ")");
        }
        ByteBuffer req = requests.poll(5, TimeUnit.SECONDS);
        check(
                req != null && startsWith(req, pdata(2, 32)),
                "connect private data (rejected request): server got "
                        + (req == null ? "nothing" : req.remaining() + " bytes, first 32 match"));
        peerResponder.clear();

        // ---- connect + accept with private data
        MemoryRegion[] clientRecv = new MemoryRegion[1];
        RdmaConnection client = provider.connect(
                target,
                ATTRS,
                pdata(1, 32),
                conn -> {
                    try {
                        clientRecv[0] = conn.protectionDomain()
                                .register(
                                        conn.protectionDomain().allocate(16 * 256),
                                        ProtectionDomain.ACCESS_LOCAL_WRITE);
                        for (int i = 0; i < 4; i++) {
                            conn.queuePair().postRecv(2000 + i, clientRecv[0], i * 256, 256);
                        }
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                },
                Duration.ofSeconds(10));
        RdmaConnection server = accepted.poll(5, TimeUnit.SECONDS);
        req = requests.poll(5, TimeUnit.SECONDS);
        check(server != null, "accept: server side connection " + server);
        check(
                req != null && req.remaining() >= 32 && startsWith(req, pdata(1, 32)),
                "connect with 32 bytes private data: server got " + (req == null ? 0 : req.remaining())
                        + " bytes (CM pads), first 32 match; peer responder resources " + peerResponder.poll());
        // RdmaConnection.peerPrivateData() (added to the interface alongside; reflection keeps this compiling without
        // it)
        java.lang.reflect.Method ppd = client.getClass().getMethod("peerPrivateData");
        ppd.setAccessible(true);
        ByteBuffer acc = (ByteBuffer) ppd.invoke(client);
        check(
                startsWith(acc, pdata(0x41, 32)),
                "accept with 32 bytes private data: client got " + acc.remaining() + " bytes, first 32 match");
        System.out.println("     client " + client + " initiatorDepth=" + client.initiatorDepth() + "; server " + server
                + " initiatorDepth=" + server.initiatorDepth());
        CountDownLatch serverGone = new CountDownLatch(1);
        CountDownLatch clientGone = new CountDownLatch(1);
        server.onDisconnect(serverGone::countDown);
        client.onDisconnect(clientGone::countDown);

        // ---- Send / Recv both ways
        ProtectionDomain cpd = client.protectionDomain();
        MemoryRegion cbuf = cpd.register(
                cpd.allocate(8192),
                ProtectionDomain.ACCESS_LOCAL_WRITE
                        | ProtectionDomain.ACCESS_REMOTE_READ
                        | ProtectionDomain.ACCESS_REMOTE_WRITE);
        for (int i = 0; i < 64; i++) {
            cbuf.buffer().put(i, (byte) (0xC0 + i));
        }
        check(client.queuePair().postSend(1, cbuf, 0, 64, true), "postSend accepted");
        List<WorkCompletion> cw = completions(client, 1);
        List<WorkCompletion> sw = completions(server, 1);
        boolean dataOk = !sw.isEmpty() && sw.get(0).ok() && sw.get(0).byteLength == 64;
        if (dataOk) {
            int slot = (int) (sw.get(0).wrId - 1000);
            for (int i = 0; i < 64; i++) {
                dataOk &= serverRecv.get(0).buffer().get(slot * 256 + i) == (byte) (0xC0 + i);
            }
        }
        check(
                cw.size() == 1 && cw.get(0).ok() && cw.get(0).opcode == WorkCompletion.Opcode.SEND,
                "client send completion " + cw);
        check(dataOk, "server received the 64 bytes " + sw);
        ProtectionDomain spd = server.protectionDomain();
        MemoryRegion sbuf = spd.register(spd.allocate(8192), ProtectionDomain.ACCESS_LOCAL_WRITE);
        for (int i = 0; i < 16; i++) {
            sbuf.buffer().put(i, (byte) (0x50 + i));
        }
        server.queuePair().postSend(2, sbuf, 0, 16, false); // unsignaled: no completion on success
        cw = completions(client, 1);
        check(
                cw.size() == 1
                        && cw.get(0).ok()
                        && cw.get(0).opcode == WorkCompletion.Opcode.RECV
                        && cw.get(0).byteLength == 16
                        && clientRecv[0].buffer().get((int) (cw.get(0).wrId - 2000) * 256 + 15) == (byte) 0x5F,
                "client received the server's unsignaled 16-byte Send " + cw);

        // ---- RDMA Write and RDMA Read (server against the client's region)
        for (int i = 0; i < 4096; i++) {
            sbuf.buffer().put(i, (byte) (i * 31 + 3));
        }
        server.queuePair().postWrite(3, sbuf, 0, 4096, cbuf.address() + 4096, cbuf.rkey(), true);
        sw = completions(server, 1);
        boolean writeOk = sw.size() == 1 && sw.get(0).ok() && sw.get(0).opcode == WorkCompletion.Opcode.RDMA_WRITE;
        for (int i = 0; i < 4096 && writeOk; i++) {
            writeOk = cbuf.buffer().get(4096 + i) == (byte) (i * 31 + 3);
        }
        check(writeOk, "RDMA Write 4096 bytes into the client's region, data verified " + sw);
        for (int i = 0; i < 2048; i++) {
            cbuf.buffer().put(i, (byte) (i * 13 + 5));
        }
        server.queuePair().postRead(4, sbuf, 4096, 2048, cbuf.address(), cbuf.rkey());
        sw = completions(server, 1);
        boolean readOk = sw.size() == 1 && sw.get(0).ok() && sw.get(0).opcode == WorkCompletion.Opcode.RDMA_READ;
        for (int i = 0; i < 2048 && readOk; i++) {
            readOk = sbuf.buffer().get(4096 + i) == (byte) (i * 13 + 5);
        }
        check(readOk, "RDMA Read 2048 bytes from the client's region, data verified " + sw);

        // ---- Send with Invalidate (of the client's region rkey)
        server.queuePair().postSendWithInvalidate(5, sbuf, 0, 16, cbuf.rkey(), true);
        sw = completions(server, 1);
        cw = completions(client, 1);
        System.out.println("     send-with-invalidate of rkey 0x" + Integer.toHexString(cbuf.rkey()) + ": server " + sw
                + " client " + cw);
        boolean invOk = sw.size() == 1
                && sw.get(0).ok()
                && cw.size() == 1
                && cw.get(0).ok()
                && cw.get(0).withInvalidate
                && cw.get(0).invalidatedRkey == cbuf.rkey();
        // rxe (Linux 6.1) only invalidates fast-registration MRs and memory windows, not ibv_reg_mr regions: the
        // receiver's completion is then REM_INV_REQ_ERR ("rxe_invalidate_mr: mr->type (3) is wrong type" in dmesg)
        boolean rxeRefused = !cw.isEmpty() && cw.get(0).status == WorkCompletion.Status.REM_INV_REQ_ERR;
        check(
                invOk || rxeRefused,
                "Send with Invalidate: "
                        + (invOk
                                ? "client saw the invalidated rkey"
                                : "the receiver refused to invalidate an ibv_reg_mr rkey (rxe: only fast-reg MRs / MWs): "
                                        + cw.get(0)));

        // ---- rkey violation (a fresh connection; the last one may be in the error state now)
        RdmaConnection[] pair = connectPair(provider, target, accepted);
        MemoryRegion c2 = pair[0].protectionDomain()
                .register(
                        pair[0].protectionDomain().allocate(4096),
                        ProtectionDomain.ACCESS_LOCAL_WRITE | ProtectionDomain.ACCESS_REMOTE_WRITE);
        MemoryRegion s2 = pair[1].protectionDomain()
                .register(pair[1].protectionDomain().allocate(4096), ProtectionDomain.ACCESS_LOCAL_WRITE);
        pair[1].queuePair().postWrite(6, s2, 0, 512, c2.address(), c2.rkey() ^ 0x100, true);
        sw = completions(pair[1], 1);
        check(
                !sw.isEmpty() && sw.get(0).wrId == 6 && sw.get(0).status == WorkCompletion.Status.REM_ACCESS_ERR,
                "RDMA Write with a wrong rkey: " + sw.get(0) + ", then " + (sw.size() - 1)
                        + " receives flushed: "
                        + sw.stream().skip(1).allMatch(w -> w.status == WorkCompletion.Status.WR_FLUSH_ERR));
        List<WorkCompletion> after = completions(pair[1], 0);
        System.out.println(
                "     server QP state after the error: " + pair[1].queuePair().state() + " " + after);
        pair[0].close();
        pair[1].close();

        // ---- disconnect with work outstanding: flush errors on both sides' posted receives
        pair = connectPair(provider, target, accepted);
        MemoryRegion c3 = pair[0].protectionDomain()
                .register(pair[0].protectionDomain().allocate(4096), ProtectionDomain.ACCESS_LOCAL_WRITE);
        for (int i = 0; i < 4; i++) {
            pair[0].queuePair().postRecv(3000 + i, c3, i * 512, 512);
        }
        CountDownLatch gone = new CountDownLatch(2);
        pair[0].onDisconnect(gone::countDown);
        pair[1].onDisconnect(gone::countDown);
        pair[1].disconnect();
        boolean told = gone.await(10, TimeUnit.SECONDS);
        cw = completions(pair[0], 4);
        sw = completions(pair[1], 16);
        check(told, "onDisconnect told on both sides");
        check(
                cw.size() == 4 && cw.stream().allMatch(w -> w.status == WorkCompletion.Status.WR_FLUSH_ERR),
                "client's 4 outstanding receives flushed: " + cw);
        check(
                sw.size() == 16 && sw.stream().allMatch(w -> w.status == WorkCompletion.Status.WR_FLUSH_ERR),
                "server's 16 outstanding receives flushed (" + sw.size() + ")");
        check(
                pair[0].queuePair().state() == io.nvmeof.transport.rdma.verbs.QueuePair.State.ERROR,
                "client QP state after disconnect: " + pair[0].queuePair().state());
        check(
                !pair[0].queuePair().postSend(7, c3, 0, 16, true)
                        || !completions(pair[0], 1).get(0).ok(),
                "posting after disconnect fails or flushes");
        pair[0].close();
        pair[1].close();

        client.close();
        check(
                serverGone.await(10, TimeUnit.SECONDS) && clientGone.await(10, TimeUnit.SECONDS),
                "first connection: close told both sides");
        ProtectionDomain devicePd = server.protectionDomain();
        server.close();
        listener.close();

        sharedQueues(provider, devicePd, new InetSocketAddress(host, 4421));
        closeRaces(provider, devicePd, new InetSocketAddress(host, 4422));
        System.out.println(failures == 0 ? "ALL OK" : failures + " FAILED");
        System.exit(failures == 0 ? 0 : 1);
    }

    /**
     * Three accepted QPs on one shared CQ and one SRQ of rxe0 (what a target poll group uses): Sends from their peers
     * land in the SRQ's buffers in posting order, whichever QP they come on, each completion naming its QP; our own
     * Sends complete on the shared CQ too; a QP on the SRQ has no receive queue of its own; a QP that disconnects
     * flushes nothing from the SRQ; an SRQ that runs dry makes the sender retry (receiver not ready) until a buffer is
     * posted.
     */
    private static void sharedQueues(DisniProvider provider, ProtectionDomain pd, InetSocketAddress address)
            throws Exception {
        CompletionQueue huge = pd.createCompletionQueue(1 << 30);
        check(
                huge.capacity() > 0 && huge.capacity() < 1 << 30,
                "a CQ asked for 2^30 entries is made at the device's max_cqe: " + huge.capacity());
        huge.close();
        CompletionQueue cq = pd.createCompletionQueue(256);
        check(cq.capacity() == 256, "a CQ of 256 entries: " + cq.capacity());
        SharedReceiveQueue srq = pd.createSharedReceiveQueue(4);
        check(srq.capacity() == 4, "SRQ created: " + srq + ", capacity " + srq.capacity());
        MemoryRegion bufs = pd.register(pd.allocate(4 * 64), ProtectionDomain.ACCESS_LOCAL_WRITE);
        boolean posted = true;
        for (int i = 0; i < 4; i++) {
            posted &= srq.postRecv(i, bufs, i * 64, 64);
        }
        check(posted, "4 receive buffers posted to the SRQ");
        BlockingQueue<RdmaConnection> accepted = new ArrayBlockingQueue<>(8);
        RdmaListener l = provider.listen(address, r -> {
            try {
                accepted.add(r.accept(ATTRS, cq, srq, null, pdata(0x42, 32)));
            } catch (Exception e) {
                System.out.println("FAIL SRQ accept: " + e);
                failures++;
            }
        });
        List<RdmaConnection[]> pairs = new ArrayList<>();
        List<MemoryRegion> sends = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RdmaConnection[] p = connectPair(provider, address, accepted);
            pairs.add(p);
            ProtectionDomain hpd = p[0].protectionDomain();
            MemoryRegion m = hpd.register(hpd.allocate(64), ProtectionDomain.ACCESS_LOCAL_WRITE);
            m.buffer().put(0, (byte) (0x10 + i));
            sends.add(m);
        }
        boolean shared = true;
        for (RdmaConnection[] p : pairs) {
            shared &= p[1].completionQueue() == cq;
        }
        check(shared, "the accepted connections' CQ is the shared one");
        check(!pairs.get(0)[1].queuePair().postRecv(9, bufs, 0, 64), "a QP on the SRQ refuses receives of its own");

        // QP 2, then 0, then 1 send: the SRQ's buffers 0, 1, 2 take them in that order, each naming its QP.
        int[] order = {2, 0, 1};
        for (int k = 0; k < 3; k++) {
            int from = order[k];
            pairs.get(from)[0].queuePair().postSend(from, sends.get(from), 0, 40, false);
            List<WorkCompletion> got = completions(pairs.get(from)[1], 1);
            WorkCompletion wc = got.isEmpty() ? null : got.get(0);
            int qpn = pairs.get(from)[1].queuePair().qpNumber();
            check(
                    wc != null
                            && wc.ok()
                            && wc.opcode == WorkCompletion.Opcode.RECV
                            && wc.wrId == k
                            && wc.byteLength == 40
                            && wc.qpNumber == qpn
                            && bufs.buffer().get(k * 64) == (byte) (0x10 + from),
                    "Send from peer " + from + " landed in SRQ buffer " + k + " naming QP " + qpn + ": " + got);
        }

        // Our side's signaled Send completes on the shared CQ and names its QP.
        RdmaConnection a1 = pairs.get(1)[1];
        MemoryRegion rsp = pd.register(pd.allocate(16), ProtectionDomain.ACCESS_LOCAL_WRITE);
        ProtectionDomain h1pd = pairs.get(1)[0].protectionDomain();
        pairs.get(1)[0]
                .queuePair()
                .postRecv(77, h1pd.register(h1pd.allocate(16), ProtectionDomain.ACCESS_LOCAL_WRITE), 0, 16);
        a1.queuePair().postSend(55, rsp, 0, 16, true);
        List<WorkCompletion> sent = completions(a1, 1);
        check(
                sent.size() == 1
                        && sent.get(0).ok()
                        && sent.get(0).opcode == WorkCompletion.Opcode.SEND
                        && sent.get(0).qpNumber == a1.queuePair().qpNumber(),
                "our Send on a QP of the SRQ completes on the shared CQ naming its QP: " + sent);
        completions(pairs.get(1)[0], 1);

        // QP 0 disconnects: nothing is flushed from the SRQ, whose last buffer stays for the others.
        CountDownLatch gone = new CountDownLatch(1);
        pairs.get(0)[0].onDisconnect(gone::countDown);
        pairs.get(0)[1].disconnect();
        gone.await(10, TimeUnit.SECONDS);
        List<WorkCompletion> flushed = quiet(cq, 300);
        check(flushed.isEmpty(), "a QP of the SRQ disconnected: no receive flushed from the SRQ " + flushed);
        pairs.get(2)[0].queuePair().postSend(2, sends.get(2), 0, 8, false);
        List<WorkCompletion> last = completions(pairs.get(2)[1], 1);
        check(
                last.size() == 1 && last.get(0).ok() && last.get(0).wrId == 3,
                "the SRQ's fourth buffer took the next Send after QP 0 left: " + last);

        // Dry: the next Send waits (receiver not ready, retried forever) until a buffer is posted.
        pairs.get(1)[0].queuePair().postSend(1, sends.get(1), 0, 8, false);
        List<WorkCompletion> early = quiet(cq, 300);
        check(srq.postRecv(0, bufs, 0, 64), "buffer 0 posted again");
        List<WorkCompletion> late = completions(a1, 1);
        check(
                early.isEmpty()
                        && late.size() == 1
                        && late.get(0).ok()
                        && late.get(0).wrId == 0
                        && late.get(0).qpNumber == a1.queuePair().qpNumber(),
                "a Send into the dry SRQ waited (" + early + ") and landed once a buffer was posted: " + late);

        for (RdmaConnection[] p : pairs) {
            p[0].close();
            p[1].close();
        }
        l.close();
        srq.close();
        cq.close();
    }

    /**
     * A connection closed on our side while the CM event thread handles its peer's disconnect (what a target does when
     * the host goes away and the queue is torn down at once): the event thread's rdma_disconnect and the close's
     * destroy of the QP and id must not overlap. {@code ROUNDS} pairs, half of them on a shared CQ and an SRQ; each
     * round closes the client, then the server within a few milliseconds, or both from two threads.
     */
    private static void closeRaces(DisniProvider provider, ProtectionDomain pd, InetSocketAddress address)
            throws Exception {
        final int rounds = 40;
        CompletionQueue cq = pd.createCompletionQueue(1024);
        SharedReceiveQueue srq = pd.createSharedReceiveQueue(16);
        BlockingQueue<RdmaConnection> accepted = new ArrayBlockingQueue<>(8);
        RdmaListener l = provider.listen(address, r -> {
            try {
                boolean shared = r.privateData().get(1) == 1;
                accepted.add(shared ? r.accept(ATTRS, cq, srq, null, pdata(0x43, 32)) : r.accept(ATTRS, c -> {}, null));
            } catch (Exception e) {
                System.out.println("FAIL close-race accept: " + e);
                failures++;
            }
        });
        int closed = 0;
        for (int i = 0; i < rounds; i++) {
            ByteBuffer p = pdata(1, 32);
            p.put(1, (byte) (i % 2));
            RdmaConnection c = provider.connect(address, ATTRS, p, null, Duration.ofSeconds(10));
            RdmaConnection s = accepted.poll(5, TimeUnit.SECONDS);
            if (s == null) {
                break;
            }
            if (i % 4 < 2) {
                c.close();
                Thread.sleep(i % 7); // the peer's DISCONNECTED arrives some time after: vary where the close meets it
                s.close();
            } else {
                Thread t = new Thread(s::close);
                t.start();
                c.close();
                t.join(10_000);
            }
            closed++;
        }
        check(closed == rounds, "close while the peer's disconnect is handled: " + closed + " of " + rounds + " pairs");
        l.close();
        srq.close();
        cq.close();
    }

    /** What the CQ delivers within {@code ms} milliseconds (expected: nothing). */
    private static List<WorkCompletion> quiet(CompletionQueue cq, long ms) throws InterruptedException {
        List<WorkCompletion> got = new ArrayList<>();
        WorkCompletion[] wcs = {new WorkCompletion()};
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (System.nanoTime() < deadline) {
            if (cq.poll(wcs) == 1) {
                WorkCompletion w = new WorkCompletion();
                w.wrId = wcs[0].wrId;
                w.status = wcs[0].status;
                w.opcode = wcs[0].opcode;
                w.qpNumber = wcs[0].qpNumber;
                got.add(w);
            } else {
                Thread.sleep(5);
            }
        }
        return got;
    }

    private static RdmaConnection[] connectPair(
            DisniProvider provider, InetSocketAddress target, BlockingQueue<RdmaConnection> accepted) throws Exception {
        RdmaConnection c = provider.connect(target, ATTRS, pdata(1, 32), null, Duration.ofSeconds(10));
        RdmaConnection s = accepted.poll(5, TimeUnit.SECONDS);
        if (s == null) {
            throw new IllegalStateException("no server side connection");
        }
        return new RdmaConnection[] {c, s};
    }

    private static String hex(ByteBuffer b, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(n, b.remaining()); i++) {
            sb.append(String.format("%02x ", b.get(b.position() + i)));
        }
        return sb.toString().trim();
    }
}

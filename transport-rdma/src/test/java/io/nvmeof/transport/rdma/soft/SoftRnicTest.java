package io.nvmeof.transport.rdma.soft;

import static io.nvmeof.transport.rdma.soft.Harness.ATTRS;
import static io.nvmeof.transport.rdma.soft.Harness.take;
import static io.nvmeof.transport.rdma.soft.Harness.take1;
import static io.nvmeof.transport.rdma.verbs.ProtectionDomain.ACCESS_LOCAL_WRITE;
import static io.nvmeof.transport.rdma.verbs.ProtectionDomain.ACCESS_REMOTE_READ;
import static io.nvmeof.transport.rdma.verbs.ProtectionDomain.ACCESS_REMOTE_WRITE;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import io.nvmeof.transport.rdma.verbs.RdmaProviders;
import io.nvmeof.transport.rdma.verbs.RdmaRejectedException;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import io.nvmeof.transport.rdma.verbs.WorkCompletion.Opcode;
import io.nvmeof.transport.rdma.verbs.WorkCompletion.Status;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The software RNIC's semantics with both ends in this JVM (the same shared-memory paths as across processes). */
class SoftRnicTest {
    static final Duration RNR = Duration.ofMillis(150);
    final SoftRdmaProvider provider = new SoftRdmaProvider(RNR);
    RdmaListener listener;
    final BlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
    final AtomicReference<ByteBuffer> requestData = new AtomicReference<>();
    RdmaConnection host;
    RdmaConnection target;

    @BeforeEach
    void listen() throws IOException {
        listener = provider.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), req -> {
            try {
                requestData.set(req.privateData());
                String s = US_ASCII.decode(req.privateData()).toString();
                if (s.startsWith("REJ")) {
                    req.reject(ascii("NO:" + s));
                } else {
                    assertEquals(4, req.peerResponderResources());
                    accepted.add(req.accept(ATTRS, null, ascii("ACCEPTED")));
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
    }

    @AfterEach
    void close() {
        if (host != null) {
            host.close();
        }
        if (target != null) {
            target.close();
        }
        listener.close();
    }

    static ByteBuffer ascii(String s) {
        return ByteBuffer.wrap(s.getBytes(US_ASCII));
    }

    void connect() throws Exception {
        host = provider.connect(listener.localAddress(), ATTRS, ascii("HELLO"), null, Duration.ofSeconds(5));
        target = accepted.poll(5, TimeUnit.SECONDS);
        assertNotNull(target);
    }

    MemoryRegion region(RdmaConnection c, int size, int access) throws IOException {
        ProtectionDomain pd = c.protectionDomain();
        return pd.register(pd.allocate(size), access);
    }

    static void fill(MemoryRegion mr, int off, int len, int seed) {
        ByteBuffer b = mr.buffer();
        for (int i = 0; i < len; i++) {
            b.put(off + i, (byte) (seed + i * 31));
        }
    }

    static byte[] bytes(MemoryRegion mr, int off, int len) {
        byte[] a = new byte[len];
        mr.buffer().get(off, a);
        return a;
    }

    @Test
    void providerIsFoundAndLabelled() {
        RdmaProvider p = RdmaProviders.find("soft");
        assertTrue(p.isAvailable(), p.unavailableReason());
        assertTrue(p.isEmulated());
        assertEquals("software RNIC (emulated)", p.description());
        assertTrue(RdmaProviders.available().stream().anyMatch(x -> x.name().equals("soft")));
    }

    @Test
    void connectAcceptWithPrivateData() throws Exception {
        connect();
        assertEquals("HELLO", US_ASCII.decode(requestData.get()).toString());
        assertEquals("HELLO", US_ASCII.decode(target.peerPrivateData()).toString());
        assertEquals("ACCEPTED", US_ASCII.decode(host.peerPrivateData()).toString());
        assertEquals(QueuePair.State.RTS, host.queuePair().state());
        assertEquals(QueuePair.State.RTS, target.queuePair().state());
        assertEquals(4, host.initiatorDepth());
        assertEquals(host.localAddress(), target.remoteAddress());
        assertThrows(
                IllegalArgumentException.class,
                () -> provider.connect(
                        listener.localAddress(), ATTRS, ByteBuffer.allocate(57), null, Duration.ofSeconds(1)),
                "rdma_cm: at most 56 bytes on connect");
    }

    @Test
    void rejectWithPrivateData() {
        RdmaRejectedException e = assertThrows(
                RdmaRejectedException.class,
                () -> provider.connect(
                        listener.localAddress(), ATTRS, ascii("REJECT ME"), null, Duration.ofSeconds(5)));
        assertEquals("NO:REJECT ME", US_ASCII.decode(e.privateData()).toString());
    }

    @Test
    void connectToNothingFails() throws Exception {
        // A port that is bound but not listening: refused at once, and no other listener (of a test running alongside,
        // or a child process) can take it meanwhile, as it could a just-closed listener's port; nor can the connect's
        // own ephemeral port be it (a TCP self-connect).
        try (java.net.Socket reserved = new java.net.Socket()) {
            reserved.setReuseAddress(false);
            reserved.bind(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
            InetSocketAddress a = (InetSocketAddress) reserved.getLocalSocketAddress();
            assertThrows(IOException.class, () -> provider.connect(a, ATTRS, null, null, Duration.ofSeconds(2)));
        }
    }

    @Test
    void sendRecvReceivesPostedBeforeConnect() throws Exception {
        AtomicReference<MemoryRegion> hostRecv = new AtomicReference<>();
        host = provider.connect(
                listener.localAddress(),
                ATTRS,
                ascii("HELLO"),
                c -> {
                    try {
                        MemoryRegion mr = region(c, 8192, ACCESS_LOCAL_WRITE);
                        hostRecv.set(mr);
                        assertTrue(c.queuePair().postRecv(7, mr, 4096, 4096));
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                },
                Duration.ofSeconds(5));
        target = accepted.poll(5, TimeUnit.SECONDS);
        MemoryRegion src = region(target, 4096, 0);
        fill(src, 0, 4096, 5);
        assertTrue(target.queuePair().postSend(99, src, 100, 3000, true));
        WorkCompletion s = take1(target.completionQueue());
        assertEquals(Status.SUCCESS, s.status);
        assertEquals(Opcode.SEND, s.opcode);
        assertEquals(99, s.wrId);
        WorkCompletion r = take1(host.completionQueue());
        assertEquals(Status.SUCCESS, r.status, r::toString);
        assertEquals(Opcode.RECV, r.opcode);
        assertEquals(7, r.wrId);
        assertEquals(3000, r.byteLength);
        assertFalse(r.withInvalidate);
        assertArrayEquals(bytes(src, 100, 3000), bytes(hostRecv.get(), 4096, 3000));
    }

    @Test
    void unsignaledSendsNeedASignaledOneToFreeTheSendQueue() throws Exception {
        connect();
        MemoryRegion rq = region(host, 64, ACCESS_LOCAL_WRITE);
        MemoryRegion src = region(target, 64, 0);
        QueuePair tq = target.queuePair();
        int sent = 0;
        for (; ; ) {
            host.queuePair().postRecv(sent, rq, 0, 64);
            if (!tq.postSend(sent, src, 0, 0, false)) { // zero-length, unsignaled
                break;
            }
            take1(host.completionQueue());
            sent++;
        }
        assertEquals(ATTRS.maxSendWr(), sent, "the send queue fills with unsignaled work requests");
        assertFalse(tq.postSend(1, src, 0, 0, true));
        assertEquals(0, target.completionQueue().poll(new WorkCompletion[1]), "successful unsignaled: no completion");
    }

    @Test
    void sendWithInvalidate() throws Exception {
        connect();
        MemoryRegion rq = region(host, 256, ACCESS_LOCAL_WRITE);
        MemoryRegion data = region(host, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
        MemoryRegion src = region(target, 256, 0);
        host.queuePair().postRecv(1, rq, 0, 256);
        host.queuePair().postRecv(2, rq, 0, 256);
        target.queuePair().postSendWithInvalidate(5, src, 0, 16, data.rkey(), true);
        assertEquals(Status.SUCCESS, take1(target.completionQueue()).status);
        WorkCompletion r = take1(host.completionQueue());
        assertEquals(Status.SUCCESS, r.status);
        assertTrue(r.withInvalidate);
        assertEquals(data.rkey(), r.invalidatedRkey);
        // The key is dead now, for the peer (REM_ACCESS_ERR) ...
        target.queuePair().postWrite(6, src, 0, 16, data.address(), data.rkey(), true);
        assertEquals(Status.REM_ACCESS_ERR, take1(target.completionQueue()).status);
    }

    @Test
    void invalidatedKeyIsDeadLocallyToo() throws Exception {
        connect();
        MemoryRegion rq = region(host, 256, ACCESS_LOCAL_WRITE);
        MemoryRegion src = region(target, 256, 0);
        MemoryRegion data = region(host, 4096, ACCESS_LOCAL_WRITE);
        host.queuePair().postRecv(1, rq, 0, 256);
        target.queuePair().postSendWithInvalidate(5, src, 0, 16, data.rkey(), false);
        assertTrue(take1(host.completionQueue()).withInvalidate);
        MemoryRegion tr = region(target, 256, ACCESS_LOCAL_WRITE);
        target.queuePair().postRecv(9, tr, 0, 256);
        host.queuePair().postSend(3, data, 0, 16, true);
        assertEquals(Status.LOC_PROT_ERR, take1(host.completionQueue()).status, "invalidated lkey");
    }

    @Test
    void rdmaWriteAndRead() throws Exception {
        connect();
        MemoryRegion remote = region(host, 1 << 16, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
        MemoryRegion local = region(target, 1 << 16, ACCESS_LOCAL_WRITE);
        fill(local, 0, 8192, 3);
        QueuePair q = target.queuePair();
        assertTrue(q.postWrite(1, local, 0, 8192, remote.address() + 4096, remote.rkey(), true));
        WorkCompletion w = take1(target.completionQueue());
        assertEquals(Status.SUCCESS, w.status);
        assertEquals(Opcode.RDMA_WRITE, w.opcode);
        assertArrayEquals(bytes(local, 0, 8192), bytes(remote, 4096, 8192));
        fill(remote, 30000, 5000, 77);
        assertTrue(q.postRead(2, local, 10000, 5000, remote.address() + 30000, remote.rkey()));
        WorkCompletion r = take1(target.completionQueue());
        assertEquals(Status.SUCCESS, r.status);
        assertEquals(Opcode.RDMA_READ, r.opcode);
        assertEquals(5000, r.byteLength);
        assertArrayEquals(bytes(remote, 30000, 5000), bytes(local, 10000, 5000));
        // A slice of allocated memory registers as its own region.
        ByteBuffer big = host.protectionDomain().allocate(1 << 16);
        MemoryRegion slice =
                host.protectionDomain().register(big.slice(8192, 4096), ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
        assertTrue(q.postWrite(3, local, 0, 4096, slice.address(), slice.rkey(), true));
        assertEquals(Status.SUCCESS, take1(target.completionQueue()).status);
        byte[] seen = new byte[4096];
        big.get(8192, seen);
        assertArrayEquals(bytes(local, 0, 4096), seen);
    }

    /** A remote access violation: REM_ACCESS_ERR on the poster, both QPs in ERROR, later work flushed. */
    void remoteViolation(MemoryRegion local, boolean read, long address, int rkey, int len) throws Exception {
        QueuePair q = target.queuePair();
        MemoryRegion rq = region(host, 64, ACCESS_LOCAL_WRITE);
        host.queuePair().postRecv(50, rq, 0, 64);
        if (read) {
            assertTrue(q.postRead(1, local, 0, len, address, rkey));
        } else {
            assertTrue(q.postWrite(1, local, 0, len, address, rkey, true));
        }
        WorkCompletion e = take1(target.completionQueue());
        assertEquals(Status.REM_ACCESS_ERR, e.status, e::toString);
        assertEquals(1, e.wrId);
        assertEquals(QueuePair.State.ERROR, q.state());
        assertTrue(q.postSend(2, local, 0, 1, true), "posting to a QP in ERROR succeeds ...");
        assertEquals(Status.WR_FLUSH_ERR, take1(target.completionQueue()).status, "... and is flushed");
        assertEquals(QueuePair.State.ERROR, host.queuePair().state(), "the responder's QP errors too");
        WorkCompletion f = take1(host.completionQueue());
        assertEquals(Status.WR_FLUSH_ERR, f.status);
        assertEquals(50, f.wrId);
    }

    @Test
    void wrongRkey() throws Exception {
        connect();
        MemoryRegion remote = region(host, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
        remoteViolation(region(target, 4096, ACCESS_LOCAL_WRITE), false, remote.address(), remote.rkey() ^ 1, 16);
    }

    @Test
    void deregisteredRkey() throws Exception {
        connect();
        MemoryRegion remote = region(host, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
        MemoryRegion local = region(target, 4096, ACCESS_LOCAL_WRITE);
        assertTrue(target.queuePair().postRead(1, local, 0, 16, remote.address(), remote.rkey()));
        assertEquals(Status.SUCCESS, take1(target.completionQueue()).status, "valid before");
        remote.close();
        remoteViolation(local, true, remote.address(), remote.rkey(), 16);
    }

    @Test
    void outOfBounds() throws Exception {
        connect();
        MemoryRegion remote = region(host, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
        remoteViolation(region(target, 8192, ACCESS_LOCAL_WRITE), false, remote.address() + 4000, remote.rkey(), 97);
    }

    @Test
    void addressBelowRegion() throws Exception {
        connect();
        MemoryRegion remote = region(host, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
        remoteViolation(region(target, 8192, ACCESS_LOCAL_WRITE), true, remote.address() - 1, remote.rkey(), 16);
    }

    @Test
    void missingRemoteWriteAccess() throws Exception {
        connect();
        MemoryRegion remote = region(host, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
        remoteViolation(region(target, 4096, ACCESS_LOCAL_WRITE), false, remote.address(), remote.rkey(), 16);
    }

    @Test
    void missingRemoteReadAccess() throws Exception {
        connect();
        MemoryRegion remote = region(host, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
        remoteViolation(region(target, 4096, ACCESS_LOCAL_WRITE), true, remote.address(), remote.rkey(), 16);
    }

    @Test
    void localProtectionErrors() throws Exception {
        connect();
        MemoryRegion remote = region(host, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
        MemoryRegion noWrite = region(target, 4096, 0);
        assertTrue(target.queuePair().postRead(1, noWrite, 0, 16, remote.address(), remote.rkey()));
        WorkCompletion e = take1(target.completionQueue());
        assertEquals(Status.LOC_PROT_ERR, e.status, "RDMA Read into memory without local write");
        assertEquals(QueuePair.State.ERROR, target.queuePair().state());
        assertEquals(QueuePair.State.RTS, host.queuePair().state(), "a local error stays local");
    }

    @Test
    void localSegmentOutsideRegion() throws Exception {
        connect();
        MemoryRegion rq = region(host, 8192, ACCESS_LOCAL_WRITE);
        host.queuePair().postRecv(1, rq, 0, 8192);
        MemoryRegion src = region(target, 4096, 0);
        assertTrue(target.queuePair().postSend(1, src, 4000, 200, true));
        assertEquals(Status.LOC_PROT_ERR, take1(target.completionQueue()).status);
    }

    @Test
    void receiverNotReady() throws Exception {
        connect();
        MemoryRegion src = region(target, 64, 0);
        long t0 = System.nanoTime();
        assertTrue(target.queuePair().postSend(1, src, 0, 8, true));
        assertTrue(target.queuePair().postSend(2, src, 0, 8, true), "queued behind the first");
        WorkCompletion e = take1(target.completionQueue());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(Status.RNR_RETRY_EXC_ERR, e.status);
        assertEquals(1, e.wrId);
        assertTrue(ms >= RNR.toMillis(), "after the retry time, not " + ms + " ms");
        assertEquals(Status.WR_FLUSH_ERR, take1(target.completionQueue()).status);
        assertEquals(QueuePair.State.ERROR, target.queuePair().state());
    }

    @Test
    void receivePostedWithinRetryTimeIsUsed() throws Exception {
        connect();
        MemoryRegion src = region(target, 64, 0);
        MemoryRegion rq = region(host, 64, ACCESS_LOCAL_WRITE);
        fill(src, 0, 64, 1);
        assertTrue(target.queuePair().postSend(1, src, 0, 8, true));
        Thread.sleep(RNR.toMillis() / 3);
        host.queuePair().postRecv(4, rq, 0, 64);
        assertEquals(Status.SUCCESS, take1(target.completionQueue()).status);
        assertEquals(8, take1(host.completionQueue()).byteLength);
    }

    @Test
    void receiveBufferTooSmall() throws Exception {
        connect();
        MemoryRegion rq = region(host, 4096, ACCESS_LOCAL_WRITE);
        host.queuePair().postRecv(1, rq, 0, 100);
        host.queuePair().postRecv(2, rq, 100, 100);
        MemoryRegion src = region(target, 4096, 0);
        target.queuePair().postSend(3, src, 0, 101, true);
        WorkCompletion r = take1(host.completionQueue());
        assertEquals(Status.LOC_LEN_ERR, r.status);
        assertEquals(1, r.wrId);
        assertEquals(Status.WR_FLUSH_ERR, take1(host.completionQueue()).status, "the next receive is flushed");
        assertEquals(QueuePair.State.ERROR, host.queuePair().state());
        assertEquals(Status.REM_INV_REQ_ERR, take1(target.completionQueue()).status);
        assertEquals(QueuePair.State.ERROR, target.queuePair().state());
    }

    @Test
    void receiveWithoutLocalWriteIsAProtectionError() throws Exception {
        connect();
        MemoryRegion rq = region(host, 4096, 0);
        host.queuePair().postRecv(1, rq, 0, 100);
        target.queuePair().postSend(3, region(target, 64, 0), 0, 10, true);
        assertEquals(Status.LOC_PROT_ERR, take1(host.completionQueue()).status);
        assertEquals(Status.REM_INV_REQ_ERR, take1(target.completionQueue()).status);
    }

    @Test
    void disconnectWithWorkOutstandingFlushesBothSides() throws Exception {
        connect();
        CountDownLatch gone = new CountDownLatch(2);
        host.onDisconnect(gone::countDown);
        target.onDisconnect(gone::countDown);
        MemoryRegion hr = region(host, 4096, ACCESS_LOCAL_WRITE);
        MemoryRegion tr = region(target, 4096, ACCESS_LOCAL_WRITE);
        for (int i = 0; i < 3; i++) {
            host.queuePair().postRecv(10 + i, hr, i * 64, 64);
        }
        // The target has no receive posted: the host's Send waits (receiver not ready), with a Write behind it.
        MemoryRegion remote = region(target, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
        assertTrue(host.queuePair().postSend(20, hr, 0, 8, true));
        assertTrue(host.queuePair().postWrite(21, hr, 0, 8, remote.address(), remote.rkey(), false));
        target.queuePair().postRecv(30, tr, 0, 64);
        target.queuePair().postRecv(31, tr, 64, 64);
        // ... the first posted receive of the target takes the Send; make the Send wait instead:
        // (re-post order) nothing to do: the receive arrived before progress, so the Send completes now.
        target.disconnect();
        assertTrue(gone.await(5, TimeUnit.SECONDS), "both sides told");
        assertEquals(QueuePair.State.ERROR, host.queuePair().state());
        List<WorkCompletion> h = take(host.completionQueue(), 5, Duration.ofSeconds(5));
        List<WorkCompletion> t = take(target.completionQueue(), 2, Duration.ofSeconds(5));
        long hostFlushed =
                h.stream().filter(w -> w.status == Status.WR_FLUSH_ERR).count();
        assertTrue(hostFlushed >= 3, h::toString);
        assertTrue(t.stream().allMatch(w -> w.opcode == Opcode.RECV), t::toString);
        Harness.assertQuiet(host.completionQueue(), Duration.ofMillis(30));
    }

    @Test
    void disconnectFlushesAWaitingSendAndAllReceives() throws Exception {
        connect();
        CountDownLatch gone = new CountDownLatch(2);
        host.onDisconnect(gone::countDown);
        target.onDisconnect(gone::countDown);
        MemoryRegion hr = region(host, 4096, ACCESS_LOCAL_WRITE);
        MemoryRegion tr = region(target, 4096, ACCESS_LOCAL_WRITE);
        host.queuePair().postRecv(10, hr, 0, 64);
        host.queuePair().postRecv(11, hr, 64, 64);
        assertTrue(host.queuePair().postSend(20, hr, 0, 8, true)); // target has nothing posted: RNR wait
        assertTrue(host.queuePair().postSend(21, hr, 0, 8, false));
        assertEquals(0, host.completionQueue().poll(new WorkCompletion[1]));
        host.disconnect();
        assertTrue(gone.await(5, TimeUnit.SECONDS));
        List<WorkCompletion> h = take(host.completionQueue(), 4, Duration.ofMillis(RNR.toMillis() / 2));
        assertTrue(h.stream().allMatch(w -> w.status == Status.WR_FLUSH_ERR), h::toString);
        assertEquals(List.of(20L, 21L, 10L, 11L), h.stream().map(w -> w.wrId).toList());
        target.queuePair().postRecv(30, tr, 0, 64);
        WorkCompletion t = take1(target.completionQueue());
        assertEquals(Status.WR_FLUSH_ERR, t.status, "posting a receive after the disconnect flushes it");
        Harness.assertQuiet(host.completionQueue(), Duration.ofMillis(30));
    }

    @Test
    void onDisconnectAfterTheFactRunsAtOnce() throws Exception {
        connect();
        CountDownLatch gone = new CountDownLatch(1);
        target.onDisconnect(gone::countDown);
        host.close();
        host = null;
        assertTrue(gone.await(5, TimeUnit.SECONDS), "close tells the peer");
        CountDownLatch late = new CountDownLatch(1);
        target.onDisconnect(late::countDown);
        assertEquals(0, late.getCount());
    }

    @Test
    void dataPathDoesNotAllocate() throws Exception {
        connect();
        var mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        MemoryRegion hr = region(host, 1 << 16, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
        MemoryRegion tr = region(target, 1 << 16, ACCESS_LOCAL_WRITE);
        QueuePair hq = host.queuePair();
        QueuePair tq = target.queuePair();
        WorkCompletion[] out = {new WorkCompletion(), new WorkCompletion()};
        long before = 0;
        int rounds = 20000;
        for (int i = 0; i < 2 * rounds; i++) {
            if (i == rounds) { // the first half warms up (JIT), the second is measured
                before = mx.getCurrentThreadAllocatedBytes();
            }
            hq.postRecv(i, hr, 0, 4096);
            tq.postSend(i, tr, 0, 4096, true);
            tq.postWrite(i, tr, 0, 4096, hr.address() + 8192, hr.rkey(), false);
            tq.postRead(i, tr, 8192, 4096, hr.address(), hr.rkey());
            int got = 0;
            while (got < 2) {
                got += target.completionQueue().poll(out);
            }
            while (host.completionQueue().poll(out) == 0) {
                Thread.onSpinWait();
            }
        }
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertTrue(
                allocated < 4096, allocated + " bytes allocated by " + rounds + " x (recv, send, write, read, polls)");
    }

    @Test
    void plainDirectBufferWorksInThisJvm() throws Exception {
        connect();
        MemoryRegion remote = host.protectionDomain()
                .register(ByteBuffer.allocateDirect(4096), ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
        MemoryRegion local = target.protectionDomain().register(ByteBuffer.allocateDirect(4096), 0);
        fill(local, 0, 4096, 9);
        target.queuePair().postWrite(1, local, 0, 4096, remote.address(), remote.rkey(), true);
        assertEquals(Status.SUCCESS, take1(target.completionQueue()).status);
        assertArrayEquals(bytes(local, 0, 4096), bytes(remote, 0, 4096));
    }

    @Test
    void queueFilesAreRemoved() throws Exception {
        connect();
        SoftDevice d = SoftDevice.get();
        Path hostFile = ((SoftConnection) host).qp.path();
        Path targetFile = ((SoftConnection) target).qp.path();
        assertFalse(Files.exists(hostFile), "the peer mapped it and removed the name");
        assertFalse(Files.exists(targetFile));
        assertTrue(Files.exists(d.file(d.pid + "-reg")));
        host.close();
        target.close();
        host = null;
        target = null;
        try (Stream<Path> s = Files.list(d.dir)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().startsWith(d.pid + "-q")));
        }
    }

    @Test
    void rejectedConnectLeavesNoQueueFile() throws Exception {
        SoftDevice d = SoftDevice.get();
        assertThrows(
                RdmaRejectedException.class,
                () -> provider.connect(listener.localAddress(), ATTRS, ascii("REJ"), null, Duration.ofSeconds(5)));
        try (Stream<Path> s = Files.list(d.dir)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().startsWith(d.pid + "-q")));
        }
    }

    @Test
    void staleFilesOfDeadProcessesAreRemoved() throws Exception {
        SoftDevice d = SoftDevice.get();
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        Path stale = d.file(p.pid() + "-m1");
        Files.write(stale, new byte[16]);
        // A device starting in another process removes it; the check is the same function.
        java.lang.reflect.Method m = SoftDevice.class.getDeclaredMethod("removeStaleFiles");
        m.setAccessible(true);
        // A live process's files stay, unless they are older than it (its pid was reused after a crash).
        Process live = new ProcessBuilder("sleep", "30").start();
        try {
            Thread.sleep(50);
            Path current = d.file(live.pid() + "-m1");
            Path reused = d.file(live.pid() + "-m2");
            Files.write(current, new byte[16]);
            Files.write(reused, new byte[16]);
            Files.setLastModifiedTime(reused, java.nio.file.attribute.FileTime.fromMillis(0));
            m.invoke(d);
            assertFalse(Files.exists(stale));
            assertTrue(Files.exists(current));
            assertFalse(Files.exists(reused));
            Files.delete(current);
        } finally {
            live.destroyForcibly();
        }
    }
}

package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.rdma.soft.SoftRdmaProvider;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The target side driven by a hand-made host on the raw verbs (software RNIC): SGL checks with their statuses,
 * Send with Invalidate answering a 0x4F descriptor, and a protocol fault (a capsule shorter than 64 bytes).
 */
class RawHostTargetTest {
    private final SoftRdmaProvider provider = new SoftRdmaProvider();
    private final FakeCore core = new FakeCore();
    private RdmaTargetListener listener;
    private RdmaConnection conn;
    private MemoryRegion recv;
    private MemoryRegion send;
    private final WorkCompletion[] wcs = {
        new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()
    };

    @BeforeEach
    void listen() throws Exception {
        listener = (RdmaTargetListener) new RdmaTransport(provider)
                .listen(
                        new ListenerOptions(
                                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, 64, 4096, 0, false),
                        core);
        core.attach(listener.memoryObserver());
    }

    @AfterEach
    void close() {
        if (conn != null) {
            conn.close();
        }
        listener.close();
        core.detach();
    }

    private void open(int qid) throws Exception {
        ByteBuffer priv = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        RdmaCmRequest r = new RdmaCmRequest();
        r.wrap(priv, 0);
        r.set(qid, 8, 7, qid == 0 ? 0 : 1);
        conn = provider.connect(
                listener.localAddress(),
                new QueuePairAttributes(16, 8, 1, 1, 24, 4, 0),
                priv,
                c -> {
                    try {
                        ProtectionDomain pd = c.protectionDomain();
                        recv = pd.register(pd.allocate(8 * 16), ProtectionDomain.ACCESS_LOCAL_WRITE);
                        send = pd.register(pd.allocate(64 + 8192), ProtectionDomain.ACCESS_LOCAL_WRITE);
                        for (int i = 0; i < 8; i++) {
                            c.queuePair().postRecv(i, recv, i * 16, 16);
                        }
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                },
                Duration.ofSeconds(5));
        ByteBuffer acc = conn.peerPrivateData();
        if (acc.remaining() >= 4) {
            assertEquals(8, acc.getShort(acc.position() + 2), "CRQSIZE = HSQSIZE + 1");
        }
    }

    private SubmissionQueueEntry sqe() {
        SubmissionQueueEntry s = new SubmissionQueueEntry();
        s.wrap(send.buffer().order(ByteOrder.LITTLE_ENDIAN), 0);
        s.clear();
        s.flags(SubmissionQueueEntry.FLAGS_SGL);
        return s;
    }

    /** Sends the capsule (64 + extra bytes) and returns the RECV completion; the CQE is in recv at its index. */
    private WorkCompletion exchange(int extra) throws Exception {
        assertTrue(conn.queuePair().postSend(100, send, 0, 64 + extra, true));
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < deadline) {
            int n = conn.completionQueue().poll(wcs);
            for (int i = 0; i < n; i++) {
                assertTrue(wcs[i].ok(), wcs[i].toString());
                if (wcs[i].opcode == WorkCompletion.Opcode.RECV) {
                    return wcs[i];
                }
            }
            conn.completionQueue().await(Duration.ofMillis(10));
        }
        throw new AssertionError("no response");
    }

    private int status(WorkCompletion wc) {
        assertEquals(16, wc.byteLength);
        CompletionQueueEntry c = new CompletionQueueEntry();
        c.wrap(recv.buffer().order(ByteOrder.LITTLE_ENDIAN), (int) wc.wrId * 16);
        int s = c.status();
        conn.queuePair().postRecv(wc.wrId, recv, (int) wc.wrId * 16, 16);
        return s;
    }

    @Test
    void sglChecksOnAnIoQueue() throws Exception {
        open(1);
        SubmissionQueueEntry s = sqe();
        s.opcode(0x02).cid(1).nlb(0).sgl().set(0x5A, 0, 4096);
        assertEquals(Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID), status(exchange(0)), "TCP's 0x5A on RDMA");
        s = sqe();
        s.opcode(0x02).cid(2).nlb(0).sgl().setKeyed(0x43, 0x1000, 4096, 7);
        assertEquals(Status.dnr(Status.INVALID_FIELD), status(exchange(0)), "keyed, unknown subtype");
        s = sqe();
        s.opcode(0x02).cid(3).nlb(0).sgl().set(0x01, 0, 4096);
        assertEquals(Status.dnr(Status.INVALID_FIELD), status(exchange(4096)), "in-capsule data on a read");
        s = sqe();
        s.opcode(0x01).cid(4).nlb(1).sgl().set(0x01, 0, 8192);
        assertEquals(Status.dnr(Status.SGL_OFFSET_INVALID), status(exchange(0)), "more than the 4 KiB in-capsule size");
        s = sqe();
        s.opcode(0x01).cid(5).nlb(0).sgl().set(0x01, 0, 4096);
        assertEquals(Status.dnr(Status.DATA_SGL_LENGTH_INVALID), status(exchange(1000)), "SGL beyond the bytes sent");
        s = sqe();
        s.opcode(0x01).cid(6).nlb(0).sgl().set(0x00, 0, 4096);
        assertEquals(Status.dnr(Status.INVALID_FIELD), status(exchange(0)), "data block, address subtype");
        assertEquals(6, core.transportStatuses.size());
        // and a good in-capsule write still works on the same queue
        s = sqe();
        s.opcode(0x01).cid(7).nlb(0).slba(3).sgl().set(0x01, 0, 4096);
        send.buffer().put(64, (byte) 0x5C);
        assertEquals(0, status(exchange(4096)));
        assertEquals(0x5C, core.ns.get(3 * 4096));
    }

    @Test
    void zeroLengthSglOfEveryTypeIsNoData() throws Exception {
        // A descriptor of LENGTH 0 means no data whatever its type (third-party hosts send an all-zero SGL1 with
        // Keep Alive, Flush and Property Get/Set), as on TCP.
        open(0);
        int cid = 1;
        for (int type = 0; type < 16; type++) {
            for (int subtype : new int[] {0x0, 0x1, 0xA, 0xF}) {
                SubmissionQueueEntry s = sqe();
                s.opcode(0x18).cid(cid++);
                if (type == SglDescriptor.TYPE_KEYED_DATA_BLOCK) {
                    s.sgl().setKeyed((type << 4) | subtype, 0x1000, 0, 0x77);
                } else {
                    s.sgl().set((type << 4) | subtype, 0, 0);
                }
                assertEquals(0, status(exchange(0)), "SGL identifier 0x" + Integer.toHexString((type << 4) | subtype));
            }
        }
        assertEquals(0, core.transportStatuses.size());
    }

    @Test
    void noInCapsuleDataOnTheAdminQueue() throws Exception {
        open(0);
        SubmissionQueueEntry s = sqe();
        s.opcode(0x09).cid(1).sgl().set(0x01, 0, 16);
        assertEquals(Status.dnr(Status.SGL_OFFSET_INVALID), status(exchange(0)));
    }

    @Test
    void invalidateDescriptorIsAnsweredWithSendWithInvalidate() throws Exception {
        open(1);
        core.ns.put(5 * 4096, (byte) 0x77);
        ProtectionDomain pd = conn.protectionDomain();
        MemoryRegion data = pd.register(
                pd.allocate(4096),
                ProtectionDomain.ACCESS_LOCAL_WRITE
                        | ProtectionDomain.ACCESS_REMOTE_WRITE
                        | ProtectionDomain.ACCESS_REMOTE_READ);
        SubmissionQueueEntry s = sqe();
        s.opcode(0x02).cid(9).slba(5).nlb(0).sgl().setKeyed(0x4F, data.address(), 4096, data.rkey());
        WorkCompletion wc = exchange(0);
        assertTrue(wc.withInvalidate, "Send with Invalidate");
        assertEquals(data.rkey(), wc.invalidatedRkey);
        assertEquals(0, status(wc));
        assertEquals(0x77, data.buffer().get(0), "the data was RDMA-Written before the response");
        // a plain 0x40 gets a plain Send
        MemoryRegion data2 = pd.register(
                pd.allocate(4096), ProtectionDomain.ACCESS_LOCAL_WRITE | ProtectionDomain.ACCESS_REMOTE_WRITE);
        s = sqe();
        s.opcode(0x02).cid(10).slba(5).nlb(0).sgl().setKeyed(0x40, data2.address(), 4096, data2.rkey());
        wc = exchange(0);
        assertTrue(!wc.withInvalidate);
        assertEquals(0, status(wc));
        assertEquals(0x77, data2.buffer().get(0));
    }

    @Test
    void aShortCapsuleClosesThatQueueOnly() throws Exception {
        open(1);
        assertTrue(conn.queuePair().postSend(1, send, 0, 32, true));
        RdmaLoopbackTest.waitFor(() -> !core.closes.isEmpty(), "the target closed the queue");
        assertInstanceOf(NvmeRdmaProtocolException.class, core.closes.get(0));
        RdmaLoopbackTest.waitFor(() -> listener.openQueues() == 0, "queue gone");
    }
}

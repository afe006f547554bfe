package io.nvmeof.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The software RNIC's shared CQ and shared receive queue: three accepted QPs on one CQ and one SRQ; Sends from their
 * peers land in the SRQ's buffers in posting order, whichever QP they arrive on; each completion names its QP; a QP
 * that fails does not flush the SRQ; an SRQ that runs dry makes the sender wait (receiver not ready) until a buffer
 * is posted.
 */
class SoftSharedQueuesTest {
    private final SoftRdmaProvider provider = new SoftRdmaProvider();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    @Test
    void threeQpsShareOneCqAndOneSrq() throws Exception {
        ProtectionDomain pd = SoftDevice.get().pd;
        CompletionQueue cq = pd.createCompletionQueue(64);
        SharedReceiveQueue srq = pd.createSharedReceiveQueue(4);
        assertEquals(64, cq.capacity());
        assertEquals(4, srq.capacity());
        closing.add(cq);
        closing.add(srq);
        MemoryRegion bufs = pd.register(pd.allocate(4 * 64), ProtectionDomain.ACCESS_LOCAL_WRITE);
        for (int i = 0; i < 4; i++) {
            assertTrue(srq.postRecv(i, bufs, i * 64, 64));
        }
        assertFalse(srq.postRecv(9, bufs, 0, 64), "the SRQ holds 4");

        List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
        RdmaListener l = provider.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), r -> {
            try {
                accepted.add(r.accept(Harness.ATTRS, cq, srq, null, ByteBuffer.allocate(0)));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        closing.add(l);
        List<RdmaConnection> hosts = new ArrayList<>();
        List<MemoryRegion> sends = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RdmaConnection h = provider.connect(
                    l.localAddress(), Harness.ATTRS, ByteBuffer.allocate(0), null, Duration.ofSeconds(5));
            closing.add(h);
            hosts.add(h);
            MemoryRegion m = h.protectionDomain().register(h.protectionDomain().allocate(64), 0);
            m.buffer().put(0, (byte) (0x10 + i));
            sends.add(m);
        }
        Harness.waitFor(hosts.get(0), () -> accepted.size() == 3, "3 accepted");
        for (RdmaConnection a : accepted) {
            assertTrue(a.completionQueue() == cq, "the connection's CQ is the shared one");
        }
        assertNotEquals(
                accepted.get(0).queuePair().qpNumber(),
                accepted.get(1).queuePair().qpNumber());

        // QP 2, then 0, then 1 send: the SRQ's buffers 0, 1, 2 take them in that order.
        int[] order = {2, 0, 1};
        for (int i : order) {
            assertTrue(hosts.get(i).queuePair().postSend(i, sends.get(i), 0, 40, false));
        }
        List<WorkCompletion> got = Harness.take(cq, 3, Duration.ofSeconds(5));
        for (int k = 0; k < 3; k++) {
            WorkCompletion wc = got.get(k);
            int from = order[k];
            assertEquals(WorkCompletion.Opcode.RECV, wc.opcode);
            assertTrue(wc.ok(), wc.toString());
            assertEquals(k, wc.wrId, "the SRQ hands out its buffers in posting order");
            assertEquals(40, wc.byteLength);
            assertEquals(qpnOf(accepted, hosts.get(from)), wc.qpNumber, "the completion names the QP it came on");
            assertEquals((byte) (0x10 + from), bufs.buffer().get(k * 64));
        }

        // Our side's own completions (a signaled Send) name the QP too.
        RdmaConnection a1 = acceptedOf(accepted, hosts.get(1));
        MemoryRegion rsp = pd.register(pd.allocate(16), ProtectionDomain.ACCESS_LOCAL_WRITE);
        for (RdmaConnection h : hosts) {
            MemoryRegion r = h.protectionDomain()
                    .register(h.protectionDomain().allocate(16), ProtectionDomain.ACCESS_LOCAL_WRITE);
            h.queuePair().postRecv(77, r, 0, 16);
        }
        assertTrue(a1.queuePair().postSend(55, rsp, 0, 16, true));
        WorkCompletion s = Harness.take1(cq);
        assertEquals(WorkCompletion.Opcode.SEND, s.opcode);
        assertEquals(a1.queuePair().qpNumber(), s.qpNumber);

        // One QP disconnects: the SRQ keeps its last buffer for the others (no flush of the shared buffers).
        acceptedOf(accepted, hosts.get(0)).disconnect();
        Harness.waitFor(
                hosts.get(0), () -> hosts.get(0).queuePair().state().name().equals("ERROR"), "error");
        Harness.assertQuiet(cq, Duration.ofMillis(50)); // no RECV flush from the SRQ
        assertTrue(hosts.get(2).queuePair().postSend(2, sends.get(2), 0, 8, false));
        WorkCompletion last = Harness.take1(cq);
        assertTrue(last.ok());
        assertEquals(3, last.wrId, "the SRQ's fourth buffer, still posted after QP 0 failed");

        // Dry: the next Send waits (receiver not ready) until we post a buffer.
        assertTrue(hosts.get(1).queuePair().postSend(1, sends.get(1), 0, 8, false));
        Harness.assertQuiet(cq, Duration.ofMillis(50));
        assertTrue(srq.postRecv(0, bufs, 0, 64));
        long deadline = System.nanoTime() + 5_000_000_000L;
        WorkCompletion[] out = {new WorkCompletion()};
        WorkCompletion[] hostOut = {new WorkCompletion()};
        int n = 0;
        while (n == 0 && System.nanoTime() < deadline) {
            hosts.get(1).completionQueue().poll(hostOut); // the host's poll retries its waiting Send
            n = cq.poll(out);
            Thread.sleep(1);
        }
        assertEquals(1, n);
        assertEquals(0, out[0].wrId);
        assertEquals(qpnOf(accepted, hosts.get(1)), out[0].qpNumber);
    }

    /** The qpNumber of the accepted QP whose peer is {@code host}. */
    private static int qpnOf(List<RdmaConnection> accepted, RdmaConnection host) {
        return acceptedOf(accepted, host).queuePair().qpNumber();
    }

    /** The accepted connection whose peer is {@code host} (matched by the CM socket's addresses; accepts may race). */
    private static RdmaConnection acceptedOf(List<RdmaConnection> accepted, RdmaConnection host) {
        for (RdmaConnection a : accepted) {
            if (a.remoteAddress().equals(host.localAddress())) {
                return a;
            }
        }
        throw new AssertionError("no accepted QP for " + host);
    }
}

package io.nvmeof.transport.rdma.disni.impl;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCmId;
import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePair;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One RC connection: its QP (created by DiSNI's {@code RdmaCm.createQP} on the CM id), one CQ with a completion
 * channel, and the PD of its device. Work requests go through DiSNI's stateful verb calls, which it owns and frees at
 * close: one prepared {@link DisniSendCall} per opcode (Send, RDMA Write, RDMA Read) rewritten in place before each
 * post, prepared receives cached by wr_id ({@link DisniRecvCalls}). Completions go to a
 * {@link DisniCompletionQueue}: the connection's own (then this object is also its completion queue) or one shared
 * with other connections of the device (a target poll group's).
 */
final class DisniConnection implements RdmaConnection, QueuePair, CompletionQueue, DisniVerbs.Endpoint {
    private final DisniVerbs provider;
    private final RdmaCmId id;
    private final DisniProtectionDomain pd;
    private final IbvContext context;
    /** Our own CQ, or the shared one we were created with ({@link #sharedCq}). */
    private final DisniCompletionQueue cq;

    private final boolean sharedCq;
    /** Whether the QP takes its receives from a shared receive queue (then it has none of its own). */
    private final boolean onSrq;

    private final IbvQP qp;
    private final int qpNumber;
    private final DisniSendCall send;
    private final DisniSendCall write;
    private final DisniSendCall read;
    /** Prepared receives; null on an SRQ. */
    private final DisniRecvCalls recvs;

    private final CopyOnWriteArrayList<Runnable> disconnectListeners = new CopyOnWriteArrayList<>();
    private volatile BlockingQueue<Integer> cmEventSink;
    private volatile State state = State.INIT;
    private volatile int initiatorDepth;
    private volatile byte[] peerPrivateData = new byte[0];
    private volatile InetSocketAddress remote;
    private volatile InetSocketAddress local;
    private boolean disconnectTold;
    private boolean closed;

    DisniConnection(DisniVerbs provider, RdmaCmId id, QueuePairAttributes attrs) throws IOException {
        this(provider, id, attrs, null, null);
    }

    /**
     * With {@code shared}: the QP's send and receive completions go to that CQ (null: a CQ of its own). With
     * {@code srq} (only together with {@code shared}): its receives come from that SRQ, and it has no receive queue of
     * its own ({@link #postRecv} refuses).
     */
    DisniConnection(
            DisniVerbs provider,
            RdmaCmId id,
            QueuePairAttributes attrs,
            DisniCompletionQueue shared,
            DisniSharedReceiveQueue srq)
            throws IOException {
        this.provider = provider;
        this.id = id;
        this.context = id.getVerbs();
        if (context == null) {
            throw new IOException("the CM id has no RDMA device");
        }
        this.pd = provider.protectionDomain(context);
        if (srq != null && (shared == null || srq.protectionDomain() != pd)) {
            throw new IllegalArgumentException("an SRQ needs a shared CQ, and both from the connection's device");
        }
        DisniCompletionQueue c = shared;
        IbvQP q = null;
        try {
            if (c == null) {
                c = new DisniCompletionQueue(provider.verbs, context, attrs.cqSize(), this);
            }
            if (srq != null) {
                q = new DisniSrqQueuePair(NativeCm.createQpOnSrq(
                        DisniVerbs.objId(id), pd.objId(), DisniVerbs.objId(c.cq), srq.srq, attrs.maxSendWr()));
            } else {
                q = createQueuePair(provider, id, pd, c, attrs);
            }
        } catch (IOException | RuntimeException e) {
            if (q != null) {
                destroyQueuePair(provider, id, srq != null);
            }
            if (c != null && c != shared) {
                c.close();
            }
            throw e;
        }
        this.cq = c;
        this.sharedCq = shared != null;
        this.onSrq = srq != null;
        this.qp = q;
        this.qpNumber = q.getQp_num();
        this.send = new DisniSendCall(provider.verbs, q, DisniSendCall.IBV_WR_SEND, 0);
        this.write = new DisniSendCall(provider.verbs, q, DisniSendCall.IBV_WR_RDMA_WRITE, 0);
        this.read = new DisniSendCall(provider.verbs, q, DisniSendCall.IBV_WR_RDMA_READ, 0);
        this.recvs = onSrq ? null : new DisniRecvCalls(provider.verbs, q, attrs.maxRecvWr());
    }

    /** A QP with a receive queue of its own, through DiSNI's createQP. */
    private static IbvQP createQueuePair(
            DisniVerbs provider,
            RdmaCmId id,
            DisniProtectionDomain pd,
            DisniCompletionQueue c,
            QueuePairAttributes attrs)
            throws IOException {
        IbvQPInitAttr init = new IbvQPInitAttr();
        init.cap().setMax_send_wr(attrs.maxSendWr());
        init.cap().setMax_recv_wr(attrs.maxRecvWr());
        init.cap().setMax_send_sge(attrs.maxSendSge());
        init.cap().setMax_recv_sge(attrs.maxRecvSge());
        init.cap().setMax_inline_data(0);
        init.setQp_type(IbvQP.IBV_QPT_RC);
        init.setSend_cq(c.cq);
        init.setRecv_cq(c.cq);
        IbvQP q = provider.cm.createQP(id, pd.pd, init);
        if (q == null) {
            throw new IOException("rdma_create_qp failed");
        }
        return q;
    }

    /** rdma_destroy_qp, through whoever made the QP (DiSNI's destroyQP only knows its own). */
    private static void destroyQueuePair(DisniVerbs provider, RdmaCmId id, boolean onSrq) throws IOException {
        if (onSrq) {
            NativeCm.destroyQp(DisniVerbs.objId(id));
        } else {
            provider.cm.destroyQP(id);
        }
    }

    long contextId() {
        return DisniVerbs.objId(context);
    }

    void forwardCmEventsTo(BlockingQueue<Integer> sink) {
        this.cmEventSink = sink;
    }

    void accepted(int negotiatedInitiatorDepth, byte[] peerPrivateData) {
        this.initiatorDepth = negotiatedInitiatorDepth;
        this.peerPrivateData = peerPrivateData == null ? new byte[0] : peerPrivateData;
        if (state == State.INIT) {
            state = State.RTS;
        }
    }

    // ------------------------------------------------------------------------------------------------ CM events

    @Override
    public void onCmEvent(int event, RdmaCmId eventId) {
        BlockingQueue<Integer> sink = cmEventSink;
        if (sink != null) {
            sink.add(event);
        }
        if (event == DisniVerbs.DISCONNECTED || event == DisniVerbs.DEVICE_REMOVAL) {
            disconnect(); // our side too: the QP goes to the error state, work is flushed
            tellDisconnect();
        }
    }

    private void tellDisconnect() {
        synchronized (this) {
            if (disconnectTold) {
                return;
            }
            disconnectTold = true;
        }
        for (Runnable r : disconnectListeners) {
            try {
                r.run();
            } catch (RuntimeException e) {
                System.err.println("disni: disconnect listener failed: " + e);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ connection

    @Override
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    @Override
    public QueuePair queuePair() {
        return this;
    }

    @Override
    public CompletionQueue completionQueue() {
        return sharedCq ? cq : this;
    }

    @Override
    public synchronized InetSocketAddress remoteAddress() {
        if (remote == null && !closed) {
            try {
                remote = (InetSocketAddress) provider.cm.getDstAddr(id);
            } catch (IOException e) {
                return null;
            }
        }
        return remote;
    }

    @Override
    public synchronized InetSocketAddress localAddress() {
        if (local == null && !closed) {
            try {
                local = (InetSocketAddress) provider.cm.getSrcAddr(id);
            } catch (IOException e) {
                return null;
            }
        }
        return local;
    }

    /**
     * The peer's private data from connection set-up: the accept's (ESTABLISHED event) when we connected, the
     * request's when we accepted; as the CM delivered it (IB CM pads to the message size: 196 / 56 bytes).
     */
    public java.nio.ByteBuffer peerPrivateData() {
        return java.nio.ByteBuffer.wrap(peerPrivateData).asReadOnlyBuffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public int initiatorDepth() {
        return initiatorDepth;
    }

    @Override
    public void onDisconnect(Runnable listener) {
        disconnectListeners.add(listener);
        boolean told;
        synchronized (this) {
            told = disconnectTold;
        }
        if (told && disconnectListeners.remove(listener)) {
            listener.run();
        }
    }

    /**
     * rdma_disconnect, under this connection's lock: the CM event thread calls it on a DISCONNECTED event while another
     * thread may be closing, and a disconnect must never run on a QP or an id that {@link #close} destroyed.
     */
    @Override
    public synchronized void disconnect() {
        if (closed) {
            return;
        }
        state = State.ERROR;
        try {
            provider.cm.disconnect(id);
        } catch (IOException | RuntimeException e) {
            // already disconnected
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            disconnect();
            closed = true; // from here on nothing calls into the id but the destroy below
        }
        tellDisconnect();
        provider.unregister(id);
        try {
            destroyQueuePair(provider, id, onSrq);
            send.free();
            write.free();
            read.free();
            if (recvs != null) {
                recvs.clear();
            }
            if (!sharedCq) {
                cq.close();
            }
            provider.cm.destroyCmId(id);
        } catch (IOException | RuntimeException e) {
            System.err.println("disni: closing a connection: " + e);
        }
    }

    // ------------------------------------------------------------------------------------------------ queue pair

    @Override
    public State state() {
        return state;
    }

    @Override
    public int qpNumber() {
        return qpNumber;
    }

    @Override
    public boolean postRecv(long wrId, MemoryRegion region, int offset, int length) {
        if (recvs == null) {
            return false; // on an SRQ: receives are posted to it
        }
        try {
            recvs.get(wrId, region, offset, length).execute();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public boolean postSend(long wrId, MemoryRegion region, int offset, int length, boolean signaled) {
        return post(send, wrId, region, offset, length, 0, 0, signaled);
    }

    @Override
    public boolean postSendWithInvalidate(
            long wrId, MemoryRegion region, int offset, int length, int rkeyToInvalidate, boolean signaled) {
        // DiSNI 2.1 cannot rewrite imm_data/invalidate_rkey in a prepared call: one call per post
        DisniSendCall p;
        try {
            p = new DisniSendCall(provider.verbs, qp, DisniSendCall.IBV_WR_SEND_WITH_INV, rkeyToInvalidate);
        } catch (IOException e) {
            return false;
        }
        try {
            return post(p, wrId, region, offset, length, 0, 0, signaled);
        } finally {
            p.free();
        }
    }

    @Override
    public boolean postWrite(
            long wrId, MemoryRegion region, int offset, int length, long remoteAddress, int rkey, boolean signaled) {
        return post(write, wrId, region, offset, length, remoteAddress, rkey, signaled);
    }

    @Override
    public boolean postRead(long wrId, MemoryRegion region, int offset, int length, long remoteAddress, int rkey) {
        return post(read, wrId, region, offset, length, remoteAddress, rkey, true);
    }

    /** Posts through a prepared call, unless the connection is closed. */
    private boolean post(
            DisniSendCall call,
            long wrId,
            MemoryRegion region,
            int offset,
            int length,
            long remoteAddress,
            int rkey,
            boolean signaled) {
        return !closed && call.post(wrId, region, offset, length, remoteAddress, rkey, signaled);
    }

    // ------------------------------------------------------------------------------------------------ completions

    @Override
    public int poll(WorkCompletion[] out) {
        return cq.poll(out);
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        return cq.await(timeout);
    }

    @Override
    public int capacity() {
        return cq.capacity();
    }

    /** Our own CQ saw an error completion: the QP is in the error state. */
    void errorCompletion() {
        state = State.ERROR;
    }

    @Override
    public String toString() {
        return "DisniConnection[" + localAddress() + " -> " + remoteAddress() + " " + state + "]";
    }
}

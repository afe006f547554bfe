package io.nvmeof.transport.rdma.disni.impl;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.impl.NatObject;
import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.ConnectionRequest;
import io.nvmeof.transport.rdma.verbs.ConnectionRequestHandler;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import io.nvmeof.transport.rdma.verbs.RdmaRejectedException;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The DiSNI provider proper, loaded by {@code DisniProvider}'s isolating class loader together with DiSNI. Connection
 * management runs over DiSNI's {@link RdmaCm} (event channel, ids, bind/listen, address and route resolution, CM
 * events, QP creation, disconnect, destroy) plus {@link NativeCm} for connect/accept/reject with private data and
 * conn params; one thread per provider reads the event channel and dispatches by id.
 */
public final class DisniVerbs implements RdmaProvider {
    static final int ADDR_RESOLVED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED.ordinal();
    static final int ROUTE_RESOLVED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED.ordinal();
    static final int CONNECT_REQUEST = RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal();
    static final int REJECTED = RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal();
    static final int ESTABLISHED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED.ordinal();
    static final int DISCONNECTED = RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal();
    static final int DEVICE_REMOVAL = RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL.ordinal();
    /** NVMe/RDMA (nvmeof-protocol.md §6.1): rnr_retry_count 7 = retry forever; retry_count 7. */
    static final int RETRY = 7;

    static final int RNR_RETRY = 7;
    private static final int RESOLVE_TIMEOUT_MS = 3000;

    /** Receives the CM events of one id (on the event thread). */
    interface Endpoint {
        void onCmEvent(int event, RdmaCmId id);
    }

    /** An endpoint and the serial of the id it is registered for ({@link NativeCm#idSerial}). */
    private record Registration(long serial, Endpoint endpoint) {}

    final RdmaCm cm;
    final RdmaVerbs verbs;
    private final RdmaEventChannel channel;
    private final String devices;
    /** By the id's address; the serial tells a destroyed id's late event from one for a new id at that address. */
    private final Map<Long, Registration> endpoints = new ConcurrentHashMap<>();

    private final Map<Long, DisniProtectionDomain> pds = new ConcurrentHashMap<>();
    private final Thread eventThread;
    private volatile boolean closed;

    /** @throws IOException with a user-facing reason when this host cannot run the provider */
    public DisniVerbs(String libraryPath) throws IOException {
        NativeCm.load(libraryPath);
        int n = NativeCm.deviceCount();
        if (n == -38) { // ENOSYS: no /sys/class/infiniband_verbs, i.e. no RDMA kernel support loaded
            throw new IOException("no RDMA device (ibv_get_device_list returned none: no RDMA support in this kernel, "
                    + "ENOSYS; on Soft-RoCE: modprobe rdma_rxe rdma_ucm && rdma link add rxe0 type rxe netdev eth0)");
        }
        if (n < 0) {
            throw new IOException("no RDMA device (ibv_get_device_list failed: errno " + -n + ")");
        }
        if (n == 0) {
            throw new IOException("no RDMA device (ibv_get_device_list returned none)");
        }
        devices = NativeCm.deviceNames();
        this.cm = RdmaCm.open();
        this.verbs = RdmaVerbs.open();
        try {
            this.channel = cm.createEventChannel();
        } catch (IOException e) {
            throw new IOException(
                    "RDMA device " + devices + " present but the RDMA CM is not usable (is rdma_ucm loaded? "
                            + "/dev/infiniband/rdma_cm): " + e.getMessage(),
                    e);
        }
        eventThread = new Thread(this::eventLoop, "disni-cm-events");
        eventThread.setDaemon(true);
        eventThread.start();
    }

    /** The native pointer of a DiSNI object (id, context, PD, CQ, ...): what DiSNI calls its objId. */
    static long objId(Object disniObject) {
        return ((NatObject) disniObject).getObjId();
    }

    @Override
    public String name() {
        return "disni";
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public String unavailableReason() {
        return null;
    }

    @Override
    public boolean isEmulated() {
        return false;
    }

    @Override
    public String description() {
        return "DiSNI on " + devices;
    }

    // ------------------------------------------------------------------------------------------------- CM events

    private void eventLoop() {
        while (!closed) {
            RdmaCmEvent ev;
            try {
                ev = cm.getCmEvent(channel, 200);
            } catch (IOException | RuntimeException e) {
                if (!closed) {
                    System.err.println("disni: getCmEvent: " + e);
                }
                continue;
            }
            if (ev == null) {
                continue;
            }
            int type = ev.getEvent();
            long serial = NativeCm.eventSerial();
            RdmaCmId id = ev.getConnIdPriv();
            try {
                if (type == CONNECT_REQUEST) {
                    Endpoint listener = endpointOf(ev.getListenIdPriv(), serial);
                    if (listener == null) {
                        NativeCm.reject(objId(id), null);
                        cm.destroyCmId(id);
                    } else {
                        listener.onCmEvent(type, id);
                    }
                } else {
                    Endpoint e = endpointOf(id, serial);
                    if (e != null) {
                        e.onCmEvent(type, id);
                    }
                }
            } catch (IOException | RuntimeException e) {
                System.err.println("disni: CM event " + type + ": " + e);
            }
        }
    }

    /** From the thread that owns {@code id} (it is alive). */
    void register(RdmaCmId id, Endpoint e) {
        long key = objId(id);
        endpoints.put(key, new Registration(NativeCm.idSerial(key), e));
    }

    /**
     * The endpoint of the id an event came on: none if it is not registered, or if the registration is for a newer id
     * at the same address (the event's id was destroyed after the library acked the event).
     */
    private Endpoint endpointOf(RdmaCmId id, long eventSerial) {
        Registration r = id == null ? null : endpoints.get(objId(id));
        return r != null && r.serial() == eventSerial ? r.endpoint() : null;
    }

    void unregister(RdmaCmId id) {
        endpoints.remove(objId(id));
    }

    DisniProtectionDomain protectionDomain(IbvContext context) throws IOException {
        long key = objId(context);
        DisniProtectionDomain pd = pds.get(key);
        if (pd == null) {
            synchronized (pds) {
                pd = pds.get(key);
                if (pd == null) {
                    pd = new DisniProtectionDomain(verbs, verbs.allocPd(context));
                    pds.put(key, pd);
                }
            }
        }
        return pd;
    }

    // ------------------------------------------------------------------------------------------------- listen

    @Override
    public RdmaListener listen(InetSocketAddress address, ConnectionRequestHandler handler) throws IOException {
        RdmaCmId id = cm.createId(channel, RdmaCm.RDMA_PS_TCP);
        try {
            cm.bindAddr(id, address);
            cm.listen(id, 128);
        } catch (IOException e) {
            cm.destroyCmId(id);
            throw new IOException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
        InetSocketAddress local = (InetSocketAddress) cm.getSrcAddr(id);
        Listener l = new Listener(id, local, handler);
        register(id, l);
        return l;
    }

    private final class Listener implements RdmaListener, Endpoint {
        private final RdmaCmId id;
        private final InetSocketAddress local;
        private final ConnectionRequestHandler handler;
        private boolean closed;

        Listener(RdmaCmId id, InetSocketAddress local, ConnectionRequestHandler handler) {
            this.id = id;
            this.local = local;
            this.handler = handler;
        }

        @Override
        public void onCmEvent(int event, RdmaCmId newId) {
            if (event != CONNECT_REQUEST) {
                return;
            }
            long key = objId(newId);
            int[] info = NativeCm.eventInfo(key);
            Request r = new Request(newId, NativeCm.eventPrivateData(key), info[2], info[3], local);
            try {
                handler.onConnectionRequest(r);
            } catch (RuntimeException e) {
                System.err.println("disni: connection request handler failed: " + e);
                r.rejectQuietly();
            }
        }

        @Override
        public InetSocketAddress localAddress() {
            return local;
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            unregister(id);
            try {
                cm.destroyCmId(id);
            } catch (IOException e) {
                // already gone
            }
        }
    }

    private final class Request implements ConnectionRequest {
        private final RdmaCmId id;
        private final byte[] privateData;
        /** What the peer wants to read from us (its initiator depth) and may let us read (its responder resources). */
        private final int peerInitiatorDepth;

        private final int peerResponderResources;
        private final InetSocketAddress local;
        private boolean decided;

        Request(
                RdmaCmId id,
                byte[] privateData,
                int peerInitiatorDepth,
                int peerResponderResources,
                InetSocketAddress local) {
            this.id = id;
            this.privateData = privateData;
            this.peerInitiatorDepth = peerInitiatorDepth;
            this.peerResponderResources = peerResponderResources;
            this.local = local;
        }

        @Override
        public ByteBuffer privateData() {
            return ByteBuffer.wrap(privateData).asReadOnlyBuffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
        }

        @Override
        public InetSocketAddress remoteAddress() {
            try {
                return (InetSocketAddress) cm.getDstAddr(id);
            } catch (IOException e) {
                return null;
            }
        }

        @Override
        public InetSocketAddress localAddress() {
            return local;
        }

        @Override
        public int peerResponderResources() {
            return peerResponderResources;
        }

        @Override
        public ProtectionDomain protectionDomain() throws IOException {
            return DisniVerbs.this.protectionDomain(id.getVerbs());
        }

        @Override
        public synchronized RdmaConnection accept(
                QueuePairAttributes attributes,
                CompletionQueue sharedCq,
                SharedReceiveQueue srq,
                Consumer<RdmaConnection> receivesToPost,
                ByteBuffer privateData)
                throws IOException {
            if (decided) {
                throw new IllegalStateException("connection request already accepted or rejected");
            }
            if (sharedCq != null && !(sharedCq instanceof DisniCompletionQueue)) {
                throw new IllegalArgumentException("the shared CQ must come from this provider");
            }
            if (srq != null && !(srq instanceof DisniSharedReceiveQueue)) {
                throw new IllegalArgumentException("the SRQ must come from this provider");
            }
            decided = true;
            DisniConnection c = new DisniConnection(
                    DisniVerbs.this, id, attributes, (DisniCompletionQueue) sharedCq, (DisniSharedReceiveQueue) srq);
            try {
                register(id, c);
                if (receivesToPost != null) {
                    receivesToPost.accept(c);
                }
                int[] lim = NativeCm.deviceLimits(c.contextId());
                int rr = Math.min(
                        Math.min(attributes.responderResources(), lim[NativeCm.MAX_QP_RD_ATOM]), peerInitiatorDepth);
                int ird = Math.min(
                        Math.min(attributes.initiatorDepth(), lim[NativeCm.MAX_QP_INIT_RD_ATOM]),
                        peerResponderResources);
                NativeCm.accept(objId(id), bytes(privateData), rr, ird, RNR_RETRY);
                c.accepted(ird, this.privateData);
                return c;
            } catch (IOException | RuntimeException e) {
                c.close();
                throw e instanceof IOException io ? io : new IOException("accept failed: " + e, e);
            }
        }

        @Override
        public synchronized void reject(ByteBuffer privateData) throws IOException {
            if (decided) {
                throw new IllegalStateException("connection request already accepted or rejected");
            }
            decided = true;
            try {
                NativeCm.reject(objId(id), bytes(privateData));
            } finally {
                cm.destroyCmId(id);
            }
        }

        void rejectQuietly() {
            try {
                if (!decided) {
                    reject(null);
                }
            } catch (IOException e) {
                // nothing more to do
            }
        }
    }

    static byte[] bytes(ByteBuffer b) {
        if (b == null) {
            return null;
        }
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    // ------------------------------------------------------------------------------------------------- connect

    @Override
    public RdmaConnection connect(
            InetSocketAddress address,
            QueuePairAttributes attributes,
            ByteBuffer privateData,
            Consumer<RdmaConnection> receivesToPost,
            Duration timeout)
            throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        RdmaCmId id = cm.createId(channel, RdmaCm.RDMA_PS_TCP);
        LinkedBlockingQueue<Integer> events = new LinkedBlockingQueue<>();
        register(id, (event, eventId) -> events.add(event));
        DisniConnection c = null;
        try {
            cm.resolveAddr(id, null, address, resolveTimeout(deadline));
            expect(events, ADDR_RESOLVED, id, address, deadline, "address resolution");
            cm.resolveRoute(id, resolveTimeout(deadline));
            expect(events, ROUTE_RESOLVED, id, address, deadline, "route resolution");
            c = new DisniConnection(this, id, attributes);
            c.forwardCmEventsTo(events);
            register(id, c);
            if (receivesToPost != null) {
                receivesToPost.accept(c);
            }
            int[] lim = NativeCm.deviceLimits(c.contextId());
            NativeCm.connect(
                    objId(id),
                    bytes(privateData),
                    Math.min(attributes.responderResources(), lim[NativeCm.MAX_QP_RD_ATOM]),
                    Math.min(attributes.initiatorDepth(), lim[NativeCm.MAX_QP_INIT_RD_ATOM]),
                    RETRY,
                    RNR_RETRY);
            expect(events, ESTABLISHED, id, address, deadline, "connect");
            c.forwardCmEventsTo(null);
            c.accepted(NativeCm.eventInfo(objId(id))[3], NativeCm.eventPrivateData(objId(id)));
            return c;
        } catch (IOException | RuntimeException e) {
            if (c != null) {
                c.close();
            } else {
                unregister(id);
                cm.destroyCmId(id);
            }
            throw e;
        }
    }

    private static int resolveTimeout(long deadline) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        return (int) Math.max(1, Math.min(RESOLVE_TIMEOUT_MS, left));
    }

    private void expect(
            LinkedBlockingQueue<Integer> events,
            int wanted,
            RdmaCmId id,
            InetSocketAddress address,
            long deadline,
            String step)
            throws IOException {
        Integer ev;
        try {
            ev = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(step + " to " + address + " interrupted", e);
        }
        if (ev == null) {
            throw new IOException(step + " to " + address + " timed out");
        }
        if (ev == wanted) {
            return;
        }
        long key = objId(id);
        int[] info = NativeCm.eventInfo(key);
        String what = ev >= 0 && ev < RdmaCmEvent.EventType.values().length
                ? RdmaCmEvent.EventType.values()[ev].name()
                : "event " + ev;
        if (ev == REJECTED) {
            throw new RdmaRejectedException(
                    address + " rejected the connection (" + what + ", reason " + info[1] + ")",
                    NativeCm.eventPrivateData(key));
        }
        throw new IOException(step + " to " + address + " failed: " + what + " (status " + info[1] + ")");
    }

    /** Stops the event thread (tests; the provider lives as long as the JVM otherwise). */
    public void shutdown() {
        closed = true;
        try {
            eventThread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

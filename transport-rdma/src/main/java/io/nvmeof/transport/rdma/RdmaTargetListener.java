package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.MemoryObserver;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.rdma.verbs.ConnectionRequest;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One NVMe/RDMA listening port (nvmeof-protocol.md §6.1): takes CM connect requests, checks their private data, and accepts each with a
 * new {@link RdmaTargetQueue} (receive buffers posted first), or rejects it with the NVMe/RDMA status:
 *
 * <table>
 *   <caption>reject statuses</caption>
 *   <tr><td>private data shorter than 32 bytes</td><td>STS 1 invalid length</td></tr>
 *   <tr><td>RECFMT ≠ 0</td><td>STS 2 invalid RECFMT</td></tr>
 *   <tr><td>QID 0xFFFF</td><td>STS 3 invalid QID</td></tr>
 *   <tr><td>HSQSIZE 0, admin HSQSIZE+1 &gt; 32, I/O HSQSIZE+1 &gt; the port's queue size</td><td>STS 4 invalid HSQSIZE</td></tr>
 *   <tr><td>HRQSIZE &lt; HSQSIZE+1 (the host could not take every response)</td><td>STS 5 invalid HRQSIZE</td></tr>
 *   <tr><td>no RDMA Read resources offered by the host</td><td>STS 7 invalid IRD</td></tr>
 *   <tr><td>memory or QP creation failed</td><td>STS 6 no resources</td></tr>
 * </table>
 *
 * It is also the {@link MemoryObserver} that registers the target's namespace memory ({@link TargetMemoryRegistrations}).
 *
 * <p>Its queues are served by a fixed set of {@link RdmaPollGroup}s (threads {@code nvme-rdma-pg<N>-<port>}): as many
 * as {@code ListenerOptions.ioThreads}, else {@value #POLL_GROUPS_PROPERTY}, else the available processors (SPDK's
 * nvmf_tgt has one poll group per reactor core). A new queue goes to the group with the fewest queues whose shared CQ
 * can take its completions (ties: the lowest index).
 */
final class RdmaTargetListener implements TargetListener {
    private static final Logger LOG = System.getLogger(RdmaTargetListener.class.getName());
    static final int ADMIN_QUEUE_SIZE = 32;
    /** System property: poll groups per listener when ListenerOptions.ioThreads is 0 (default: the processors). */
    static final String POLL_GROUPS_PROPERTY = "nvmeof.rdma.pollGroups";
    /**
     * System property: {@code false} gives each queue receive buffers of its own instead of its poll group's shared
     * receive queue (as SPDK's {@code no_srq} and the kernel nvmet-rdma's {@code use_srq=0}); default {@code true}.
     */
    static final String SRQ_PROPERTY = "nvmeof.rdma.srq";
    /** System property: receive buffers in each poll group's shared receive queue (default 1024, at most 65536). */
    static final String SRQ_DEPTH_PROPERTY = "nvmeof.rdma.srqDepth";
    /** System property: entries of each poll group's completion queue (default 32768). */
    static final String CQ_ENTRIES_PROPERTY = "nvmeof.rdma.cqEntries";

    static final int DEFAULT_SRQ_DEPTH = 1024;
    static final int DEFAULT_CQ_ENTRIES = 32768;

    private final RdmaProvider provider;
    private final ListenerOptions options;
    private final QueueAcceptor acceptor;
    private final boolean zeroCopy;
    private final TargetMemoryRegistrations memory = new TargetMemoryRegistrations();
    private final Set<RdmaTargetQueue> queues = ConcurrentHashMap.newKeySet();
    private final AtomicInteger queueCounter = new AtomicInteger();
    private final LongAdder copiedBytes = new LongAdder();
    private final LongAdder placedBytes = new LongAdder();
    private final RdmaListener cm;
    private final PortInfo portInfo;
    private final RdmaPollGroup[] groups;
    private volatile boolean closed;

    RdmaTargetListener(RdmaProvider provider, ListenerOptions options, QueueAcceptor acceptor, boolean zeroCopy)
            throws IOException {
        this.provider = provider;
        this.options = options;
        this.acceptor = acceptor;
        this.zeroCopy = zeroCopy;
        int srqDepth =
                useSrq() ? Math.max(1, Math.min(65536, Integer.getInteger(SRQ_DEPTH_PROPERTY, DEFAULT_SRQ_DEPTH))) : 0;
        this.cm = provider.listen(options.address(), this::onConnectionRequest);
        InetSocketAddress bound = cm.localAddress();
        int maxQueueSize = Math.min(options.maxQueueSize(), RdmaTransport.MAX_QUEUE_SIZE);
        int inCapsule = Math.min(options.inCapsuleDataSize(), RdmaTransport.IN_CAPSULE_DATA_SIZE);
        String addr = bound.getAddress() != null ? bound.getAddress().getHostAddress() : bound.getHostString();
        this.portInfo = new PortInfo(
                PortInfo.TRTYPE_RDMA,
                bound.getAddress() instanceof Inet6Address ? PortInfo.ADRFAM_IPV6 : PortInfo.ADRFAM_IPV4,
                addr,
                Integer.toString(bound.getPort()),
                options.portId(),
                maxQueueSize,
                inCapsule,
                RdmaTransport.SGLS,
                RdmaTransport.MDTS,
                PortInfo.TREQ_SQFLOW_DISABLE_SUPPORTED,
                new byte[] {1, 1, 1
                }); // TSAS: QPTYPE RC, PRTYPE not specified, CMS RDMA_CM (nvmeof-protocol.md §3.3, §6.6)
        int n = options.ioThreads() > 0
                ? options.ioThreads()
                : Integer.getInteger(POLL_GROUPS_PROPERTY, Runtime.getRuntime().availableProcessors());
        int cqEntries = Math.max(1024, Integer.getInteger(CQ_ENTRIES_PROPERTY, DEFAULT_CQ_ENTRIES));
        this.groups = new RdmaPollGroup[Math.max(1, n)];
        for (int i = 0; i < groups.length; i++) {
            groups[i] = new RdmaPollGroup(
                    "nvme-rdma-pg" + i + "-" + bound.getPort(),
                    options.ioMode().busyPoll(),
                    cqEntries,
                    srqDepth,
                    SubmissionQueueEntry.LENGTH + inCapsule);
        }
    }

    /** {@link #SRQ_PROPERTY}: true, false, or an error naming the property. */
    private static boolean useSrq() {
        String v = System.getProperty(SRQ_PROPERTY, "true").trim();
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException("-D" + SRQ_PROPERTY + " must be true or false, not '" + v + "'");
    }

    /** A queue's poll group and the CQ entries it reserved there. */
    private record Placement(RdmaPollGroup group, int cqEntries) {}

    /**
     * The group with the fewest queues whose CQ can take a queue of {@code slots} commands and {@code readDepth} RDMA
     * Reads, reserved ({@link RdmaPollGroup#reserve}); or null.
     */
    private Placement choose(int slots, int readDepth) {
        synchronized (groups) {
            RdmaPollGroup[] byLoad = groups.clone();
            java.util.Arrays.sort(byLoad, java.util.Comparator.comparingInt(RdmaPollGroup::load));
            for (RdmaPollGroup g : byLoad) {
                int entries = g.reserve(slots, readDepth);
                if (entries > 0) {
                    return new Placement(g, entries);
                }
            }
            return null;
        }
    }

    private void onConnectionRequest(ConnectionRequest request) {
        if (closed) {
            reject(request, RdmaCmReject.STS_NO_RSC, "the listener is closing");
            return;
        }
        ByteBuffer pd = request.privateData();
        if (pd.remaining() < RdmaCmRequest.LENGTH) {
            reject(request, RdmaCmReject.STS_INVALID_LEN, pd.remaining() + " bytes of private data");
            return;
        }
        ByteBuffer copy = ByteBuffer.allocate(RdmaCmRequest.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(0, pd, pd.position(), RdmaCmRequest.LENGTH);
        RdmaCmRequest req = new RdmaCmRequest();
        req.wrap(copy, 0);
        int qid = req.qid();
        int hsqsize = req.hsqsize();
        int hrqsize = req.hrqsize();
        if (req.recfmt() != 0) {
            reject(request, RdmaCmReject.STS_INVALID_RECFMT, "RECFMT " + req.recfmt());
            return;
        }
        if (qid == 0xFFFF) {
            reject(request, RdmaCmReject.STS_INVALID_QID, "QID " + qid);
            return;
        }
        int limit = qid == 0 ? ADMIN_QUEUE_SIZE : portInfo.maxQueueSize();
        if (hsqsize < 1 || hsqsize + 1 > limit) {
            reject(
                    request,
                    RdmaCmReject.STS_INVALID_HSQSIZE,
                    "HSQSIZE " + hsqsize + " for QID " + qid + " (at most " + (limit - 1) + ")");
            return;
        }
        if (hrqsize < hsqsize + 1) {
            reject(request, RdmaCmReject.STS_INVALID_HRQSIZE, "HRQSIZE " + hrqsize + " < HSQSIZE+1 " + (hsqsize + 1));
            return;
        }
        if (request.peerResponderResources() < 1) {
            reject(request, RdmaCmReject.STS_INVALID_IRD, "the host offers no RDMA Read resources");
            return;
        }
        int slots = hsqsize + 1;
        int readDepth = Math.min(request.peerResponderResources(), RdmaTransport.MAX_READ_DEPTH);
        Placement placed = choose(slots, readDepth);
        if (placed == null) {
            reject(request, RdmaCmReject.STS_NO_RSC, "every poll group's completion queue is full");
            return;
        }
        RdmaPollGroup group = placed.group();
        RdmaTargetQueue queue = new RdmaTargetQueue(this, group, qid, hsqsize, placed.cqEntries());
        int maxSendWr = slots * (RdmaTargetQueue.MAX_WRITE_SEGMENTS + 1) + readDepth;
        QueuePairAttributes attrs = new QueuePairAttributes(maxSendWr, slots, 1, 1, maxSendWr + slots, 0, readDepth);
        ByteBuffer accept = ByteBuffer.allocate(RdmaCmAccept.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        RdmaCmAccept acc = new RdmaCmAccept();
        acc.wrap(accept, 0);
        acc.set(slots); // CRQSIZE = HSQSIZE + 1, as nvmet (nvmeof-protocol.md §6.1)
        RdmaConnection conn;
        try {
            group.prepare(request.protectionDomain());
            conn = request.accept(attrs, group.cq(), group.srq(), queue::setup, accept);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "cannot set up RDMA queue " + qid + " for " + request.remoteAddress() + ": " + e);
            queue.abandon();
            reject(request, RdmaCmReject.STS_NO_RSC, "no resources: " + e.getMessage());
            return;
        }
        queues.add(queue);
        queueCounter.incrementAndGet();
        queue.start();
        if (closed) {
            queue.close();
        }
        LOG.log(
                Level.DEBUG,
                () -> "accepted RDMA queue " + qid + " (HSQSIZE " + hsqsize + ", HRQSIZE " + hrqsize + ", CNTLID "
                        + req.cntlid() + ") from " + conn.remoteAddress());
    }

    private static void reject(ConnectionRequest request, int sts, String why) {
        LOG.log(
                Level.WARNING,
                "rejecting NVMe/RDMA connect from " + request.remoteAddress() + ": " + why + " -> STS " + sts + " ("
                        + RdmaCmReject.stsName(sts) + ")");
        ByteBuffer rej = ByteBuffer.allocate(RdmaCmReject.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        RdmaCmReject r = new RdmaCmReject();
        r.wrap(rej, 0);
        r.set(sts);
        try {
            request.reject(rej);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.DEBUG, "reject failed: " + e);
        }
    }

    // ---- for the queues ----

    ListenerOptions options() {
        return options;
    }

    QueueAcceptor acceptor() {
        return acceptor;
    }

    TargetMemoryRegistrations memory() {
        return memory;
    }

    boolean zeroCopy() {
        return zeroCopy;
    }

    void copied(int bytes) {
        copiedBytes.add(bytes);
    }

    void placed(int bytes) {
        placedBytes.add(bytes);
    }

    void queueClosed(RdmaTargetQueue q) {
        queues.remove(q);
    }

    /** Data bytes that went through a bounce buffer (a copy on the target). */
    long copiedBytes() {
        return copiedBytes.sum();
    }

    /** Data bytes RDMA-Written from or RDMA-Read into the core's own registered memory (no copy). */
    long placedBytes() {
        return placedBytes.sum();
    }

    int openQueues() {
        return queues.size();
    }

    RdmaProvider provider() {
        return provider;
    }

    /** The poll groups (tests and measurements read their threads and SRQ buffers). */
    RdmaPollGroup[] pollGroups() {
        return groups.clone();
    }

    // ---- TargetListener ----

    @Override
    public InetSocketAddress localAddress() {
        return cm.localAddress();
    }

    @Override
    public PortInfo portInfo() {
        return portInfo;
    }

    @Override
    public MemoryObserver memoryObserver() {
        return zeroCopy ? memory : null;
    }

    /** Stops accepting, closes every queue and stops the poll groups (waiting up to 5 s), then deregisters the memory. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            cm.close();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "closing the CM listener failed: " + e);
        }
        for (RdmaPollGroup g : groups) {
            g.stop(); // closes its queues, then frees its CQ, SRQ and buffers
        }
        long deadline = System.nanoTime() + 5_000_000_000L;
        for (RdmaPollGroup g : groups) {
            Thread t = g.thread();
            if (t != null && t != Thread.currentThread()) {
                try {
                    t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        memory.close();
    }

    @Override
    public String toString() {
        return "RdmaTargetListener[" + cm.localAddress() + " over " + provider.description() + "]";
    }
}

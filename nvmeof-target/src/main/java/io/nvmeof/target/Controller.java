package io.nvmeof.target;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FeatureId;
import io.nvmeof.core.command.IdentifyCns;
import io.nvmeof.core.command.LogPageId;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.namespace.RamNamespace;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One controller of the dynamic controller model (nvmeof-protocol.md §2.2): created by an admin Connect, owner of the admin queue and of
 * the I/O queues that later Connect to its CNTLID, and gone when its admin queue closes or its keep-alive timer
 * expires. It holds the properties (nvmeof-protocol.md §2.3), the features (nvmeof-protocol.md §3.4), the keep-alive timer (nvmeof-protocol.md §3.5) and the asynchronous
 * events (nvmeof-protocol.md §3.6), and runs the admin commands (nvmeof-protocol.md §3).
 *
 * <p>Threads: admin commands, property writes and event delivery run on the admin queue's thread (events raised
 * elsewhere hop there with {@code QueueChannel.execute}). I/O queue threads only read {@link #ready()} (a volatile)
 * and the I/O queue table (an atomic array). The keep-alive check runs on the target's scheduler thread.
 */
public final class Controller {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");

    /** AER completion DW0 (nvmeof-protocol.md §3.6): notice (type 2), namespace attribute changed (info 0x00), log 0x04. */
    static final int EVENT_NAMESPACE_CHANGED = 0x00040002;
    /** AER completion DW0 (nvmeof-protocol.md §3.6): notice, discovery log page change (info 0xF0), log 0x70. */
    static final int EVENT_DISCOVERY_CHANGED = 0x0070F002;
    /** Asynchronous Event Configuration bits that enable those notices (nvmeof-protocol.md §3.4). */
    private static final int AEC_NAMESPACE_NOTICE = 1 << 8;

    private static final int AEC_DISCOVERY_NOTICE = 1 << 31;
    /** AEC bits 7:0: SMART critical-warning events; accepted (never raised: RAM does not wear). */
    private static final int AEC_SMART_MASK = 0xFF;

    private final NvmeTarget target;
    private final Subsystem subsystem;
    private final int cntlid;
    private final String hostNqn;
    private final UUID hostId;
    private final QueueSession admin;
    private final PortInfo port;
    private final long createdNanos = System.nanoTime();
    private final AtomicReferenceArray<QueueSession> ioQueues =
            new AtomicReferenceArray<>(ControllerProfile.MAX_IO_QUEUES + 1);
    private final AtomicBoolean closed = new AtomicBoolean();

    // Properties (nvmeof-protocol.md §2.3), written on the admin thread, read by every queue.
    private volatile int cc;
    private volatile int csts;

    // Keep alive (nvmeof-protocol.md §3.5).
    private volatile int katoMillis;
    private volatile long lastKeepAliveNanos = System.nanoTime();
    private ScheduledFuture<?> keepAliveCheck; // guarded by this
    private final Runnable keepAliveTask = this::checkKeepAlive;

    // Features (nvmeof-protocol.md §3.4), admin thread.
    private int asyncEventConfig;
    private int queuesGranted = (ControllerProfile.MAX_IO_QUEUES - 1) | ((ControllerProfile.MAX_IO_QUEUES - 1) << 16);
    private int writeCacheEnabled = 1;

    // Asynchronous events (nvmeof-protocol.md §3.6), admin thread.
    private final ArrayDeque<TargetRequest> heldAers = new ArrayDeque<>();
    private static final int PENDING_NAMESPACE = 1;
    private static final int PENDING_DISCOVERY = 2;
    private int pendingEvents;
    private int maskedEvents;
    private final TreeSet<Integer> changedNamespaces = new TreeSet<>();

    // Error log (nvmeof-protocol.md §3.3), written from any queue thread on the (cold) error path.
    private final AtomicLong errorCount = new AtomicLong();
    private final AtomicReferenceArray<long[]> errorEntries =
            new AtomicReferenceArray<>(ControllerProfile.ERROR_LOG_ENTRIES);

    Controller(
            NvmeTarget target,
            Subsystem subsystem,
            int cntlid,
            String hostNqn,
            UUID hostId,
            QueueSession admin,
            int connectKatoMillis) {
        this.target = target;
        this.subsystem = subsystem;
        this.cntlid = cntlid;
        this.hostNqn = hostNqn;
        this.hostId = hostId;
        this.admin = admin;
        this.port = admin.channel().portInfo();
        int kato = connectKatoMillis;
        if (kato == 0 && subsystem.isDiscovery()) {
            // nvmet keeps a discovery controller that asked for no keep alive on a 120 s timer (nvmeof-protocol.md
            // §3.5, §8).
            kato = target.config().discoveryKatoMillis();
        }
        this.katoMillis = roundKato(kato);
    }

    /** KATO rounded up to the KAS granularity (nvmeof-protocol.md §3.5: nvmet uses whole seconds). */
    private static int roundKato(int millis) {
        if (millis <= 0) {
            return 0;
        }
        long g = ControllerProfile.KATO_GRANULARITY_MILLIS;
        return (int) Math.min(Integer.MAX_VALUE, (millis + g - 1) / g * g);
    }

    // ---- facts (any thread) ----

    public int cntlid() {
        return cntlid;
    }

    public Subsystem subsystem() {
        return subsystem;
    }

    public String hostNqn() {
        return hostNqn;
    }

    public UUID hostId() {
        return hostId;
    }

    public SocketAddress remoteAddress() {
        return admin.channel().remoteAddress();
    }

    public PortInfo port() {
        return port;
    }

    public boolean isDiscovery() {
        return subsystem.isDiscovery();
    }

    /** The keep-alive timeout in effect, in ms (0: none). */
    public int katoMillis() {
        return katoMillis;
    }

    /** Connected I/O queues. */
    public int ioQueueCount() {
        int n = 0;
        for (int i = 1; i < ioQueues.length(); i++) {
            if (ioQueues.get(i) != null) {
                n++;
            }
        }
        return n;
    }

    public boolean isClosed() {
        return closed.get();
    }

    /** CC.EN = 1 and CSTS.RDY = 1: non-fabrics commands may run (nvmeof-protocol.md §2.3). */
    boolean ready() {
        return (csts & Properties.CSTS_RDY) != 0;
    }

    int csts() {
        return csts;
    }

    int cc() {
        return cc;
    }

    QueueSession adminQueue() {
        return admin;
    }

    /** CAP (nvmeof-protocol.md §2.3): MQES from the port, CQR, TO 15, CSS bit 37 only, MPSMIN = MPSMAX = 0 (nvmeof-protocol.md §7.7). */
    long cap() {
        return Properties.cap(port.maxQueueSize() - 1, ControllerProfile.CAP_TIMEOUT);
    }

    // ---- I/O queues ----

    /** Attaches an I/O queue; false if the QID is taken. */
    boolean attach(int qid, QueueSession queue) {
        return !closed.get() && ioQueues.compareAndSet(qid, null, queue);
    }

    void detach(int qid, QueueSession queue) {
        ioQueues.compareAndSet(qid, queue, null);
    }

    // ---- lifecycle ----

    /** Starts the keep-alive timer (at Connect) or restarts it (CC.EN 0→1, Set Features KATO), nvmeof-protocol.md §3.5. */
    void armKeepAlive() {
        lastKeepAliveNanos = System.nanoTime();
        synchronized (this) {
            if (keepAliveCheck != null) {
                keepAliveCheck.cancel(false);
                keepAliveCheck = null;
            }
            int kato = katoMillis;
            if (kato > 0 && !closed.get()) {
                keepAliveCheck = target.scheduler().schedule(keepAliveTask, kato, TimeUnit.MILLISECONDS);
            }
        }
    }

    private void checkKeepAlive() {
        if (closed.get()) {
            return;
        }
        long kato = TimeUnit.MILLISECONDS.toNanos(katoMillis);
        if (kato == 0) {
            return;
        }
        long left = lastKeepAliveNanos + kato - System.nanoTime();
        if (left <= 0) {
            LOG.log(
                    Level.WARNING,
                    "keep-alive timeout: no Keep Alive for " + katoMillis + " ms on controller " + cntlid + " of "
                            + subsystem.nqn() + " (host " + hostNqn + ", " + remoteAddress() + "); tearing it down");
            teardown("keep-alive timeout", true);
            return;
        }
        synchronized (this) {
            if (!closed.get()) {
                keepAliveCheck = target.scheduler().schedule(keepAliveTask, left, TimeUnit.NANOSECONDS);
            }
        }
    }

    /**
     * Ends the controller once: removes it from its subsystem, stops its timer and closes all its I/O queues (and the
     * admin queue if {@code closeAdmin}). Requests it still holds (AERs) are dropped; the transport releases them.
     */
    void teardown(String why, boolean closeAdmin) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        synchronized (this) {
            if (keepAliveCheck != null) {
                keepAliveCheck.cancel(false);
                keepAliveCheck = null;
            }
        }
        subsystem.remove(this);
        int closedQueues = 0;
        for (int i = 1; i < ioQueues.length(); i++) {
            QueueSession q = ioQueues.getAndSet(i, null);
            if (q != null) {
                q.channel().close();
                closedQueues++;
            }
        }
        if (closeAdmin) {
            admin.channel().close();
        }
        LOG.log(
                Level.INFO,
                "controller " + cntlid + " of " + subsystem.nqn() + " (host " + hostNqn + ", " + remoteAddress()
                        + ") torn down: " + why + "; closed " + closedQueues + " I/O queue(s)");
    }

    /** Runs on the admin thread when the admin queue is gone: the held AERs die with it. */
    void adminClosed(Throwable cause) {
        heldAers.clear();
        teardown(cause == null ? "admin queue closed" : "admin queue failed: " + cause, false);
    }

    // ---- properties (nvmeof-protocol.md §2.3) ----

    int propertyGet(TargetRequest request, SubmissionQueueEntry c) {
        int size = c.propertySize();
        int offset = c.propertyOffset();
        switch (offset) {
            case Properties.CAP:
                if (size != Properties.SIZE_8) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                request.response().result64(cap());
                return Status.SUCCESS;
            case Properties.VS:
            case Properties.CC:
            case Properties.CSTS:
                if (size != Properties.SIZE_4) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                int v = offset == Properties.VS ? ControllerProfile.VERSION : offset == Properties.CC ? cc : csts;
                request.response().dw0(v);
                return Status.SUCCESS;
            default:
                // nvmet answers every other offset (NSSR, CRTO, PCIe-only registers) with Invalid Field
                // (nvmeof-protocol.md §2.3).
                return Status.dnr(Status.INVALID_FIELD);
        }
    }

    int propertySet(SubmissionQueueEntry c) {
        if (c.propertyOffset() != Properties.CC || c.propertySize() != Properties.SIZE_4) {
            return Status.dnr(Status.INVALID_FIELD); // only CC is writable, as 4 bytes (nvmeof-protocol.md §2.3, §7.6)
        }
        updateCc((int) c.propertyValue());
        return Status.SUCCESS;
    }

    /** The CC state machine of nvmeof-protocol.md §2.3: enable, reset and shutdown handshakes, CFS on a bad CC. */
    private void updateCc(int next) {
        int old = cc;
        cc = next;
        boolean enNew = (next & Properties.CC_EN) != 0;
        boolean enOld = (old & Properties.CC_EN) != 0;
        if (enNew && !enOld) {
            if (ccValid(next)) {
                csts = Properties.CSTS_RDY;
                armKeepAlive(); // nvmet re-arms the timer when the controller is enabled (nvmeof-protocol.md §3.5)
            } else {
                csts |= Properties.CSTS_CFS;
                LOG.log(
                        Level.WARNING,
                        "controller " + cntlid + " of " + subsystem.nqn() + ": host " + hostNqn
                                + " enabled it with an unsupported CC 0x" + Integer.toHexString(next)
                                + "; CSTS.CFS set");
            }
        }
        if (!enNew && enOld) {
            csts = 0; // reset: RDY (and CFS) clear
        }
        if (Properties.ccShn(next) != 0 && Properties.ccShn(old) == 0) {
            // Shutdown completes at once: nothing in RAM needs flushing (nvmeof-protocol.md §2.3).
            csts = (csts & ~Properties.CSTS_RDY & ~Properties.CSTS_SHST_MASK) | Properties.CSTS_SHST_COMPLETE;
            LOG.log(Level.DEBUG, "controller " + cntlid + " of " + subsystem.nqn() + " shut down by host " + hostNqn);
        }
        if (Properties.ccShn(next) == 0 && Properties.ccShn(old) != 0) {
            csts &= ~Properties.CSTS_SHST_MASK;
        }
    }

    /** nvmet's checks on CC at enable (nvmeof-protocol.md §2.3, §7.6): MPS 0, AMS 0, CSS NVM (CAP advertises bit 37 only), IOSQES 6 / IOCQES 4 on I/O controllers. */
    private boolean ccValid(int value) {
        if (Properties.ccMps(value) != 0 || Properties.ccAms(value) != 0 || Properties.ccCss(value) != 0) {
            return false;
        }
        return subsystem.isDiscovery() || (Properties.ccIosqes(value) == 6 && Properties.ccIocqes(value) == 4);
    }

    // ---- admin commands (nvmeof-protocol.md §3) ----

    /** Runs one admin command; returns its status, or {@link QueueSession#PENDING} if the controller keeps it (AER). */
    int executeAdmin(TargetRequest request, SubmissionQueueEntry c) {
        AdminOpcode opcode = AdminOpcode.of(c.opcode());
        if (opcode == null) {
            return Status.dnr(Status.INVALID_OPCODE);
        }
        boolean discovery = subsystem.isDiscovery();
        switch (opcode) {
            case IDENTIFY:
                return identify(request, c);
            case GET_LOG_PAGE:
                return getLogPage(request, c);
            case SET_FEATURES:
                return setFeatures(request, c);
            case GET_FEATURES:
                return getFeatures(request, c);
            case KEEP_ALIVE:
                return keepAlive();
            case ASYNC_EVENT_REQUEST:
                return asyncEventRequest(request);
            case ABORT:
                if (discovery) {
                    return Status.dnr(Status.INVALID_OPCODE);
                }
                // Abort: nothing here runs long enough to be aborted; DW0 bit 0 = 1 says "not aborted"
                // (nvmeof-protocol.md §3.1).
                request.response().dw0(1);
                return Status.SUCCESS;
            default:
                return Status.dnr(Status.INVALID_OPCODE);
        }
    }

    private int keepAlive() {
        if (katoMillis == 0) {
            return Status.KEEP_ALIVE_INVALID; // nvmet: Keep Alive while KATO = 0 (nvmeof-protocol.md §3.5)
        }
        lastKeepAliveNanos = System.nanoTime();
        return Status.SUCCESS;
    }

    // Identify (nvmeof-protocol.md §3.2)

    private int identify(TargetRequest request, SubmissionQueueEntry c) {
        if (request.dataLength() != IdentifyPages.SIZE) {
            return Status.dnr(
                    Status.DATA_SGL_LENGTH_INVALID); // nvmet requires exactly 4096 bytes (nvmeof-protocol.md §3.2)
        }
        IdentifyCns cns = IdentifyCns.of(c.cdw10());
        int nsid = c.nsid();
        ByteBuffer page;
        if (subsystem.isDiscovery() && cns != IdentifyCns.CONTROLLER) {
            return Status.dnr(
                    Status.INVALID_FIELD); // a discovery controller answers only CNS 0x01 (nvmeof-protocol.md §3.2)
        }
        if (cns == null) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        switch (cns) {
            case NAMESPACE: {
                if (nsid == 0xFFFFFFFF) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                RamNamespace ns = subsystem.namespace(nsid);
                // An inactive NSID gets an all-zero page with success; NCAP = 0 tells the host it is absent
                // (nvmeof-protocol.md §3.2).
                page = ns == null ? IdentifyPages.zero() : IdentifyPages.namespace(ns);
                break;
            }
            case CONTROLLER:
                page = IdentifyPages.controller(this);
                break;
            case ACTIVE_NAMESPACE_LIST:
                if (Integer.compareUnsigned(nsid, 0xFFFFFFFE) >= 0) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                page = IdentifyPages.activeNamespaces(subsystem, nsid);
                break;
            case NAMESPACE_IDENTIFICATION_DESCRIPTORS: {
                RamNamespace ns = subsystem.namespace(nsid);
                if (ns == null) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                page = IdentifyPages.descriptors(ns);
                break;
            }
            case IO_COMMAND_SET_CONTROLLER:
                // NVM command set Identify Controller: all zero (no limits) for CSI 0, like nvmet (nvmeof-protocol.md
                // §3.2.4).
                if ((c.cdw11() >>> 24) != 0) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                page = IdentifyPages.zero();
                break;
            default:
                return Status.dnr(Status.INVALID_FIELD);
        }
        request.addData(page, 0, IdentifyPages.SIZE, DataRelease.NONE);
        return Status.SUCCESS;
    }

    // Get Log Page (nvmeof-protocol.md §3.3)

    private int getLogPage(TargetRequest request, SubmissionQueueEntry c) {
        int cdw10 = c.cdw10();
        LogPageId lid = LogPageId.of(cdw10);
        boolean rae = (cdw10 & 0x8000) != 0;
        long numd = ((((long) c.cdw11() & 0xFFFF) << 16) | (cdw10 >>> 16)) + 1;
        long length = numd * 4;
        if (length != request.dataLength()) {
            return Status.dnr(
                    Status.DATA_SGL_LENGTH_INVALID); // nvmet: (NUMD + 1) × 4 exactly (nvmeof-protocol.md §3.3)
        }
        long lpo = (c.cdw12() & 0xFFFFFFFFL) | ((long) c.cdw13() << 32);
        if ((lpo & 3) != 0) {
            return Status.dnr(Status.INVALID_FIELD); // LPO must be dword aligned (nvmeof-protocol.md §3.3)
        }
        ByteBuffer log;
        if (subsystem.isDiscovery()) {
            if (lid != LogPageId.DISCOVERY) {
                return Status.dnr(Status.INVALID_FIELD);
            }
            log = target.discoveryLog(hostNqn, admin.channel());
            if (!rae) {
                maskedEvents &= ~PENDING_DISCOVERY;
            }
        } else {
            if (lid == null) {
                return Status.dnr(Status.INVALID_FIELD); // nvmet answers unknown LIDs with Invalid Field
            }
            switch (lid) {
                case ERROR_INFORMATION:
                    log = LogPages.errors(errorEntries, errorCount.get());
                    break;
                case SMART_HEALTH_INFORMATION:
                    log = LogPages.health(subsystem, c.nsid(), createdNanos);
                    break;
                case CHANGED_NAMESPACE_LIST:
                    log = LogPages.changedNamespaces(changedNamespaces);
                    if (!rae) {
                        changedNamespaces.clear();
                        maskedEvents &= ~PENDING_NAMESPACE;
                    }
                    break;
                case COMMANDS_SUPPORTED_AND_EFFECTS:
                    log = LogPages.commandEffects();
                    break;
                case VENDOR_PERF_STATS:
                    log = LogPages.perfStats(subsystem); // vendor specific: CPU and work counters for nvmeof-perf
                    break;
                default:
                    return Status.dnr(Status.INVALID_FIELD); // nvmet answers unknown LIDs with Invalid Field
                // (nvmeof-protocol.md §3.3)
            }
        }
        if (Long.compareUnsigned(lpo, log.capacity()) > 0) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        int len = (int) length;
        ByteBuffer out = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
        int available = (int) Math.min(len, log.capacity() - lpo);
        out.put(0, log, (int) lpo, available); // the rest stays zero
        request.addData(out, 0, len, DataRelease.NONE);
        return Status.SUCCESS;
    }

    // Set / Get Features (nvmeof-protocol.md §3.4)

    private int setFeatures(TargetRequest request, SubmissionQueueEntry c) {
        int cdw10 = c.cdw10();
        FeatureId fid = FeatureId.of(cdw10);
        int value = c.cdw11();
        if ((cdw10 & 0x80000000) != 0) {
            return Status.dnr(Status.FEATURE_NOT_SAVEABLE); // SV: nothing here survives a restart
        }
        if (fid == null) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        boolean discovery = subsystem.isDiscovery();
        switch (fid) {
            case NUMBER_OF_QUEUES: {
                if (discovery) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                int nsqr = value & 0xFFFF;
                int ncqr = value >>> 16;
                if (nsqr == 0xFFFF || ncqr == 0xFFFF) {
                    return Status.dnr(
                            Status.INVALID_FIELD); // 0's based; 0xFFFF is not a count (nvmeof-protocol.md §3.4)
                }
                int max = ControllerProfile.MAX_IO_QUEUES - 1;
                queuesGranted = Math.min(nsqr, max) | (Math.min(ncqr, max) << 16);
                request.response().dw0(queuesGranted);
                return Status.SUCCESS;
            }
            case KEEP_ALIVE_TIMER:
                katoMillis = roundKato(value == 0 && discovery ? target.config().discoveryKatoMillis() : value);
                armKeepAlive();
                return Status.SUCCESS;
            case ASYNC_EVENT_CONFIGURATION: {
                int allowed = discovery ? AEC_DISCOVERY_NOTICE : (AEC_NAMESPACE_NOTICE | AEC_SMART_MASK);
                if ((value & ~allowed) != 0) {
                    return Status.dnr(
                            Status.INVALID_FIELD); // nvmet rejects bits it cannot raise (nvmeof-protocol.md §3.4)
                }
                asyncEventConfig = value;
                return Status.SUCCESS;
            }
            case VOLATILE_WRITE_CACHE:
                if (discovery) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                writeCacheEnabled = value & 1;
                return Status.SUCCESS;
            case HOST_IDENTIFIER:
                // Host Identifier comes from Connect on fabrics (nvmeof-protocol.md §3.4)
                return Status.dnr(Status.COMMAND_SEQUENCE_ERROR);
            default:
                return Status.dnr(Status.INVALID_FIELD);
        }
    }

    private int getFeatures(TargetRequest request, SubmissionQueueEntry c) {
        int cdw10 = c.cdw10();
        FeatureId fid = FeatureId.of(cdw10);
        int sel = (cdw10 >>> 8) & 0x7;
        boolean discovery = subsystem.isDiscovery();
        boolean supported = fid == FeatureId.KEEP_ALIVE_TIMER
                || fid == FeatureId.ASYNC_EVENT_CONFIGURATION
                || (!discovery && (fid == FeatureId.NUMBER_OF_QUEUES || fid == FeatureId.VOLATILE_WRITE_CACHE));
        if (!supported) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        if (sel == 3) {
            request.response().dw0(0x4); // supported capabilities: changeable, not saveable, not per namespace
            return Status.SUCCESS;
        }
        if (sel > 3) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        boolean current = sel == 0;
        int v;
        switch (fid) {
            case NUMBER_OF_QUEUES:
                v = current
                        ? queuesGranted
                        : (ControllerProfile.MAX_IO_QUEUES - 1) | ((ControllerProfile.MAX_IO_QUEUES - 1) << 16);
                break;
            case KEEP_ALIVE_TIMER:
                v = current ? katoMillis : 0;
                break;
            case ASYNC_EVENT_CONFIGURATION:
                v = current ? asyncEventConfig : 0;
                break;
            default: // VOLATILE_WRITE_CACHE
                v = current ? writeCacheEnabled : 1;
                break;
        }
        request.response().dw0(v);
        return Status.SUCCESS;
    }

    // Asynchronous events (nvmeof-protocol.md §3.6)

    private int asyncEventRequest(TargetRequest request) {
        if (heldAers.size() > ControllerProfile.AERL) {
            return Status.dnr(Status.ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED);
        }
        heldAers.add(request);
        deliverEvents();
        return QueueSession.PENDING;
    }

    /** A namespace of this controller's subsystem appeared or went away: remember it for log 0x04 and raise the notice. */
    void namespaceChanged(int nsid) {
        admin.channel().execute(() -> {
            if (changedNamespaces.size() < LogPages.CHANGED_NS_MAX) {
                changedNamespaces.add(nsid);
            } else {
                changedNamespaces.add(
                        0xFFFFFFFF); // more than 1024 changed: entry 0 = 0xFFFFFFFF (nvmeof-protocol.md §3.3)
            }
            if ((asyncEventConfig & AEC_NAMESPACE_NOTICE) != 0) {
                raise(PENDING_NAMESPACE);
            }
        });
    }

    /** The discovery log changed: raise the notice on a discovery controller that enabled it. */
    void discoveryChanged() {
        admin.channel().execute(() -> {
            if ((asyncEventConfig & AEC_DISCOVERY_NOTICE) != 0) {
                raise(PENDING_DISCOVERY);
            }
        });
    }

    private void raise(int event) {
        if (closed.get() || (maskedEvents & event) != 0) {
            return; // the host has not read the log of the last one yet: the event stays masked (nvmeof-protocol.md
            // §3.6)
        }
        pendingEvents |= event;
        deliverEvents();
    }

    private void deliverEvents() {
        while (pendingEvents != 0 && !heldAers.isEmpty()) {
            int event = Integer.lowestOneBit(pendingEvents);
            pendingEvents &= ~event;
            maskedEvents |= event;
            TargetRequest aer = heldAers.poll();
            aer.response().dw0(event == PENDING_NAMESPACE ? EVENT_NAMESPACE_CHANGED : EVENT_DISCOVERY_CHANGED);
            admin.complete(aer, Status.SUCCESS);
        }
    }

    int heldAerCount() {
        return heldAers.size();
    }

    // Error log (nvmeof-protocol.md §3.3)

    /** Records a failed command for log 0x01. Cold path: one small array per error, no lock. */
    void recordError(int sqid, int cid, int status, int nsid) {
        long count = errorCount.incrementAndGet();
        errorEntries.set(
                (int) ((count - 1) % ControllerProfile.ERROR_LOG_ENTRIES),
                new long[] {count, sqid, cid, status, nsid & 0xFFFFFFFFL});
    }

    @Override
    public String toString() {
        return "controller " + cntlid + " of " + subsystem.nqn() + " (host " + hostNqn + ")";
    }

    /** A snapshot of the I/O queues for diagnostics. */
    List<Integer> ioQueueIds() {
        List<Integer> out = new ArrayList<>();
        for (int i = 1; i < ioQueues.length(); i++) {
            if (ioQueues.get(i) != null) {
                out.add(i);
            }
        }
        return out;
    }
}

package io.nvmeof.target;

import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One controller of the dynamic controller model (nvmeof-protocol.md §2.2): created by an admin Connect, owner of the admin queue and of
 * the I/O queues that later Connect to its CNTLID, and gone when its admin queue closes or its keep-alive timer
 * expires. It holds the properties (nvmeof-protocol.md §2.3), the keep-alive timer (§3.5) and the error log (§3.3),
 * and owns one class per remaining role: {@link AdminCommands} runs the admin commands (§3), {@link Features} holds
 * the features (§3.4) and {@link AsyncEvents} the asynchronous events (§3.6).
 *
 * <p>Threads: admin commands, property writes and event delivery run on the admin queue's thread (events raised
 * elsewhere hop there with {@code QueueChannel.execute}). I/O queue threads only read {@link #ready()} (a volatile)
 * and the I/O queue table (an atomic array). The keep-alive check runs on the target's scheduler thread.
 */
public final class Controller {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");

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
    /** KATO in ms, an unsigned 32-bit value from the host rounded up to KAS, so it may exceed 2^32 - 1 a little. */
    private volatile long katoMillis;

    private volatile long lastKeepAliveNanos = System.nanoTime();
    private ScheduledFuture<?> keepAliveCheck; // guarded by this
    private final Runnable keepAliveTask = this::checkKeepAlive;

    // The admin commands (nvmeof-protocol.md §3) and the state they own: features (§3.4), asynchronous events (§3.6).
    private final AsyncEvents events;
    private final AdminCommands adminCommands;
    /** The ANA states of this controller's listener (AnaGroups), read by the I/O queues. */
    private final AnaPath anaPath;
    /** Reservation notices for this controller (log page 80h, feature 82h), posted by any namespace's Reservations. */
    private final ReservationNotices reservationNotices;

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
        this.katoMillis = effectiveKato(connectKatoMillis);
        this.events = new AsyncEvents(this, admin);
        this.reservationNotices = new ReservationNotices(events);
        this.adminCommands = new AdminCommands(this, target, new Features(this, events), events);
        this.anaPath = subsystem.ana().path(port.portId());
    }

    /**
     * The KATO a host's request (Connect or Set Features) gives, rounded; 0 on a discovery controller means 120 s.
     * The field is an unsigned 32-bit count of ms: 2^31 ms and more is a long timeout (24.8 days), not a negative
     * one that would turn keep alive off.
     */
    private long effectiveKato(int requestedMillis) {
        long kato = Integer.toUnsignedLong(requestedMillis);
        if (kato == 0 && subsystem.isDiscovery()) {
            // nvmet keeps a discovery controller that asked for no keep alive on a 120 s timer (nvmeof-protocol.md
            // §3.5, §8).
            kato = target.config().discoveryKatoMillis();
        }
        return roundKato(kato);
    }

    /** KATO rounded up to the KAS granularity (nvmeof-protocol.md §3.5: nvmet uses whole seconds). */
    private static long roundKato(long millis) {
        long g = ControllerProfile.KATO_GRANULARITY_MILLIS;
        return (millis + g - 1) / g * g; // millis < 2^32: no overflow
    }

    // ---- facts (any thread) ----

    /** An asynchronous event notification went to the host (AsyncEvents): counted for the metrics. */
    void aenSent() {
        target.statsRegistry().aenSent(subsystem);
    }

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

    /** The keep-alive timeout in effect, in ms (0: none); at most 2^32 - 1 rounded up to a whole second. */
    public long katoMillis() {
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

    /** NVM commands the I/O queues now connected accepted for processing: the I/O this path carried. */
    public long ioCommands() {
        long n = 0;
        for (int i = 1; i < ioQueues.length(); i++) {
            QueueSession q = ioQueues.get(i);
            if (q != null) {
                n += q.processedCommands();
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

    /** When the controller was created (System.nanoTime), for the SMART / Health log's power-on hours. */
    long createdNanos() {
        return createdNanos;
    }

    /** CAP (nvmeof-protocol.md §2.3): MQES from the port, CQR, TO 15, CSS bits 37 and 43 like nvmet, MPSMIN = MPSMAX = 0. */
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
            long kato = katoMillis;
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
            target.statsRegistry().keepAliveExpired(subsystem);
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
        events.dropHeld();
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

    /**
     * The CC state machine of nvmeof-protocol.md §2.3: enable, reset and shutdown handshakes, CFS on a bad CC.
     *
     * <p>After a completed shutdown a CC with EN = 1 and SHN = 00b starts the controller again, as if EN had gone from
     * 0 to 1. NVMe Base 2.0c §3.6 (Controller Shutdown) asks for a reset (CC.EN = 0) first and leaves commands after
     * a shutdown undefined; nvmet and SPDK both go on processing them (nvmet zeroes CC at the shutdown, so the next
     * EN = 1 enables it again), so a host that clears SHN and carries on is answered, not refused with Command
     * Sequence Error.
     */
    private void updateCc(int next) {
        int old = cc;
        cc = next;
        boolean enNew = (next & Properties.CC_EN) != 0;
        boolean enOld = (old & Properties.CC_EN) != 0;
        boolean restart = enNew
                && enOld
                && Properties.ccShn(next) == 0
                && (csts & Properties.CSTS_SHST_MASK) == Properties.CSTS_SHST_COMPLETE;
        if (enNew && (!enOld || restart)) {
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

    /**
     * nvmet's checks on CC at enable (nvmeof-protocol.md §2.3, §7.6): MPS 0, AMS 0, IOSQES 6 / IOCQES 4 on I/O
     * controllers, and CSS 000b (NVM) or 110b (the I/O command sets of CAP.CSS bit 43, here only NVM: the two behave
     * alike). 111b (admin only) needs CAP.CSS bit 44, which we do not set, so it fails like nvmet's.
     */
    private boolean ccValid(int value) {
        int css = Properties.ccCss(value);
        if (Properties.ccMps(value) != 0
                || Properties.ccAms(value) != 0
                || (css != Properties.CC_CSS_NVM && css != Properties.CC_CSS_IO_COMMAND_SETS)) {
            return false;
        }
        return subsystem.isDiscovery() || (Properties.ccIosqes(value) == 6 && Properties.ccIocqes(value) == 4);
    }

    // ---- admin commands (nvmeof-protocol.md §3) ----

    /** Runs one admin command; returns its status, or {@link QueueSession#PENDING} if the controller keeps it (an AER). */
    int executeAdmin(TargetRequest request, SubmissionQueueEntry c) {
        return adminCommands.execute(request, c);
    }

    // ---- keep alive (nvmeof-protocol.md §3.5) ----

    /** The Keep Alive command. */
    int keepAlive() {
        if (katoMillis == 0) {
            return Status.KEEP_ALIVE_INVALID; // nvmet: Keep Alive while KATO = 0 (nvmeof-protocol.md §3.5)
        }
        lastKeepAliveNanos = System.nanoTime();
        return Status.SUCCESS;
    }

    /** Set Features Keep Alive Timer: the new timeout (rounded like Connect's) and the timer restarted. */
    void keepAliveTimeout(int requestedMillis) {
        katoMillis = effectiveKato(requestedMillis);
        armKeepAlive();
    }

    // ---- asynchronous events (nvmeof-protocol.md §3.6) ----

    /** A namespace of this controller's subsystem appeared or went away: remember it for log 0x04 and raise the notice. */
    void namespaceChanged(int nsid) {
        events.namespaceChanged(nsid);
    }

    /** The discovery log changed: raise the notice on a discovery controller that enabled it. */
    void discoveryChanged() {
        events.discoveryChanged();
    }

    /** An ANA group state or membership this controller reports changed: raise the ANA change notice. */
    void anaChanged() {
        events.anaChanged();
    }

    /** The ANA states of the listener this controller was connected through. */
    AnaPath anaPath() {
        return anaPath;
    }

    ReservationNotices reservationNotices() {
        return reservationNotices;
    }

    int heldAerCount() {
        return events.heldCount();
    }

    // ---- error log (nvmeof-protocol.md §3.3) ----

    /** Records a failed command for log 0x01. Cold path: one small array per error, no lock. */
    void recordError(int sqid, int cid, int status, int nsid) {
        long count = errorCount.incrementAndGet();
        errorEntries.set(
                (int) ((count - 1) % ControllerProfile.ERROR_LOG_ENTRIES),
                new long[] {count, sqid, cid, status, nsid & 0xFFFFFFFFL});
    }

    /** Log page 0x01 as it is now. */
    ByteBuffer errorLog() {
        return LogPages.errors(errorEntries, errorCount.get());
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

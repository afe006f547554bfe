package io.nvmeof.initiator;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.core.wire.ConnectData;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * A connected NVMe-oF controller: its admin queue, its I/O queues and its namespaces. Made by {@link Nvme#connect};
 * {@link #close()} shuts it down in order (nvmeof-protocol.md §7.3).
 *
 * <p>Bring-up follows the Linux host's sequence and the conservative initiator profile (nvmeof-protocol.md §7.1, §7.8): admin queue and
 * fabrics Connect (SQSIZE 31, KATO, CNTLID 0xFFFF), Property Get CAP, Set CC 0x00460000 then EN, poll CSTS.RDY within
 * CAP.TO, Get VS, Identify Controller with the host checks of nvmeof-protocol.md §7.5, Set Features Number of Queues, one Connect per I/O
 * queue, Asynchronous Event Requests when OAES allows, and the namespace scan. Keep Alive goes out every KATO/2.
 *
 * <p>Failure model: a dead connection, a Keep Alive failure or a command timeout <em>fails</em> the controller, as the
 * Linux host's error recovery tears down every connection (nvmeof-protocol.md §7.3): every outstanding command completes with
 * {@link NvmeTransportException} (or {@link NvmeTimeoutException} for the one that timed out), later commands fail at
 * once, and {@link #failure()} says why. There is no automatic reconnect: connect again.
 *
 * <p>Thread-safe. Namespaces may be used from any number of threads.
 */
public final class Controller implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");
    /** Admin queue entries: 32 (SQSIZE 31), Linux's NVME_AQ_DEPTH (nvmeof-protocol.md §8). */
    static final int ADMIN_QUEUE_SIZE = 32;
    /** CC for the enable handshake: IOSQES 6, IOCQES 4, MPS 0, AMS 0, CSS 0 (nvmeof-protocol.md §2.3, §7.8; no CSI). */
    static final int CC_INITIAL = (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);
    /** OAES bits the host enables: NS attribute (8), FW activation (9), ANA (11), discovery log change (31), nvmeof-protocol.md §3.4. */
    static final int OAES_HOST_MASK = 0x80000B00;
    /** Shutdown wait: 5 s, the Linux default (nvmeof-protocol.md §7.3). */
    static final long SHUTDOWN_TIMEOUT_MILLIS = 5000;

    private static final AtomicInteger IDS = new AtomicInteger();

    /** Test hook: called with the number of Get Log Page commands issued so far while reading the discovery log. */
    static volatile IntConsumer discoveryReadHook;

    private final NvmeUri uri;
    private final ConnectOptions options;
    private final HostIdentity host;
    private final long timeoutNanos;
    private final ScheduledExecutorService timer;
    private final ExecutorService events;
    private final CopyOnWriteArrayList<NamespaceChangeListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final List<ScheduledFuture<?>> tasks = new CopyOnWriteArrayList<>();
    private Transport transport;
    private InetSocketAddress address;
    private volatile CommandQueue admin;
    private volatile CommandQueue[] ioQueues = new CommandQueue[0];
    private volatile boolean closing;
    private volatile NvmeException failure;
    private volatile boolean enabled;
    private volatile Map<Integer, Namespace> namespaces = Collections.emptyMap();
    private int cntlid;
    private long cap;
    private int vs;
    private int cc;
    private ByteBuffer identifyPage;
    private ControllerIdentity identity;
    private int ioQueueSize;
    private int maxInCapsule;

    private Controller(NvmeUri uri, ConnectOptions options) {
        this.uri = uri;
        this.options = options;
        this.host = options.hostIdentity() != null ? options.hostIdentity() : HostIdentity.of(uri.hostNqn());
        this.timeoutNanos = uri.timeout().toNanos();
        int id = IDS.incrementAndGet();
        this.timer = Executors.newSingleThreadScheduledExecutor(daemon("nvmeof-ctrl-" + id + "-timer"));
        this.events = Executors.newSingleThreadExecutor(daemon("nvmeof-ctrl-" + id + "-events"));
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** Connects and brings the controller up; on any failure everything opened so far is closed again. */
    static Controller open(NvmeUri uri, ConnectOptions options) throws NvmeException {
        Controller c = new Controller(uri, options);
        try {
            c.bringUp();
            return c;
        } catch (NvmeException | RuntimeException | Error e) {
            c.abort();
            throw e;
        }
    }

    // ---- bring-up (nvmeof-protocol.md §7.1) ----

    private void bringUp() throws NvmeException {
        transport = resolveTransport();
        try {
            address = new InetSocketAddress(java.net.InetAddress.getByName(uri.host()), uri.port());
        } catch (IOException e) {
            throw new NvmeTransportException("cannot resolve host '" + uri.host() + "': " + e.getMessage(), e);
        }
        long tick = Math.max(5, Math.min(200, uri.timeout().toMillis() / 20));
        tasks.add(timer.scheduleWithFixedDelay(this::checkTimeouts, tick, tick, TimeUnit.MILLISECONDS));

        admin = openQueue(0, ADMIN_QUEUE_SIZE);
        // Admin Connect: QID 0, SQSIZE 31, KATO, CNTLID 0xFFFF for the dynamic controller model (nvmeof-protocol.md
        // §2.2, §7.1 step 3).
        CommandSlot.Completion connect =
                fabricsConnect(admin, ADMIN_QUEUE_SIZE - 1, uri.katoMillis(), ConnectData.CNTLID_DYNAMIC);
        cntlid = connect.dw0() & 0xFFFF;
        int authreq = connect.dw0() >>> 16;
        if ((authreq & 0x6) != 0) {
            // AUTHREQ ATR/ASCR (bits 17/18 of DW0): DH-HMAC-CHAP is not implemented (nvmeof-protocol.md §2.5).
            throw new NvmeException("the controller requires in-band authentication (AUTHREQ 0x"
                    + Integer.toHexString(authreq) + "), which this initiator does not implement");
        }
        cap = propertyGet(Properties.CAP, true);
        if (Properties.capMpsmin(cap) != 0) {
            // The host page size is 4 KiB; a larger minimum is refused like Linux does (nvmeof-protocol.md §2.3, §7.5).
            throw new NvmeException("controller CAP.MPSMIN is " + Properties.capMpsmin(cap) + " (minimum page "
                    + (4096 << Properties.capMpsmin(cap)) + " bytes); only 4 KiB pages are supported");
        }
        // Enable handshake (nvmeof-protocol.md §2.3, §7.8): CC with EN=0, then EN=1, then wait for CSTS.RDY.
        cc = CC_INITIAL;
        propertySet(Properties.CC, cc);
        cc |= Properties.CC_EN;
        propertySet(Properties.CC, cc);
        enabled = true;
        waitReady();
        vs = (int) propertyGet(Properties.VS, false);

        identifyPage = identify(0x01, 0);
        identity = ControllerIdentity.parse(identifyPage);
        checkIdentity();

        if (uri.katoMillis() > 0) {
            // Keep Alive every KATO/2 (nvmeof-protocol.md §3.5, §7.8); Linux checks at KATO/2 too (KATO/4 only with
            // TBKAS).
            long period = Math.max(1, uri.katoMillis() / 2);
            tasks.add(timer.scheduleAtFixedRate(this::sendKeepAlive, period, period, TimeUnit.MILLISECONDS));
        }
        if (!uri.isDiscovery()) {
            createIoQueues();
            enableAsyncEvents();
            namespaces = scanNamespaces(namespaces, null);
            if (uri.nsid() != 0 && !namespaces.containsKey(uri.nsid())) {
                throw new NvmeException("namespace " + Integer.toUnsignedString(uri.nsid()) + " is not active on "
                        + uri.subsystemNqn() + " (active: " + namespaces.keySet() + ")");
            }
        }
        LOG.log(Level.INFO, () -> "connected " + this);
    }

    private Transport resolveTransport() throws NvmeException {
        Transport t = options.transport();
        if (t == null) {
            try {
                t = Transport.find(uri.transport());
            } catch (IllegalArgumentException e) {
                throw new NvmeTransportException(
                        "the " + uri.transport() + " transport is not available: " + e.getMessage());
            }
        }
        if (!t.isAvailable()) {
            throw new NvmeTransportException(
                    "the " + t.name() + " transport is not available: " + t.unavailableReason());
        }
        return t;
    }

    private CommandQueue openQueue(int qid, int size) throws NvmeException {
        HostQueue hq;
        // The admin queue sleeps even with hipri: it carries keep-alives and AERs, not the I/O.
        IoMode mode = ioMode();
        HostQueueOptions o = new HostQueueOptions(
                address,
                qid,
                size,
                qid == 0 ? 0 : cntlid,
                uri.headerDigest(),
                uri.dataDigest(),
                options.connectTimeout(),
                qid == 0 ? new IoMode(mode.engine(), false) : mode);
        try {
            hq = transport.connect(o);
        } catch (IOException e) {
            throw new NvmeTransportException(
                    "cannot connect " + (qid == 0 ? "the admin queue" : "I/O queue " + qid) + " to " + uri.transport()
                            + "://" + hostPort() + ": " + e.getMessage(),
                    e);
        } catch (UnsupportedOperationException e) {
            throw new NvmeTransportException(
                    "the " + transport.name() + " transport cannot connect to controllers yet: " + e.getMessage(), e);
        }
        CommandQueue q = new CommandQueue(this, hq, qid, size);
        hq.onClose(cause -> queueClosed(q, cause));
        return q;
    }

    private void waitReady() throws NvmeException {
        // (CAP.TO + 1) × 500 ms, a little more than Linux's (TO+1)/2 s (nvmeof-protocol.md §2.3, §7.1 step 9).
        long limit = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos((Properties.capTimeout(cap) + 1) * 500L);
        while (true) {
            int csts = (int) propertyGet(Properties.CSTS, false);
            if (csts == 0xFFFFFFFF || (csts & Properties.CSTS_CFS) != 0) {
                throw new NvmeException(
                        "controller fatal status while enabling (CSTS 0x" + Integer.toHexString(csts) + ")");
            }
            if ((csts & Properties.CSTS_RDY) != 0) {
                return;
            }
            if (System.nanoTime() - limit > 0) {
                throw new NvmeTimeoutException("controller not ready within " + (Properties.capTimeout(cap) + 1) * 500L
                        + " ms of CC.EN (CAP.TO " + Properties.capTimeout(cap) + ")");
            }
            sleep(2); // Linux polls every 1–2 ms
        }
    }

    /** The host-side checks of Identify Controller (nvmeof-protocol.md §3.2.1, §7.5). */
    private void checkIdentity() throws NvmeException {
        ControllerIdentity id = identity;
        if (id.cntlid() != cntlid) {
            throw new NvmeException("Identify CNTLID " + id.cntlid() + " differs from the Connect CNTLID " + cntlid
                    + " (\"Mismatching cntlid\", nvmeof-protocol.md §7.5)");
        }
        if (uri.isDiscovery()) {
            if (!id.isDiscovery() && !Nqn.DISCOVERY.equals(id.subnqn())) {
                throw new NvmeException(
                        hostPort() + " is not a discovery controller (CNTRLTYPE " + id.cntrltype() + ")");
            }
            return;
        }
        if (id.kas() == 0) {
            throw new NvmeException(
                    "controller reports KAS 0; keep alive support is mandatory for fabrics (nvmeof-protocol.md §3.2.1)");
        }
        if (id.ioccsz() < 4 || id.iorcsz() < 1) {
            throw new NvmeException("controller reports IOCCSZ " + id.ioccsz() + " / IORCSZ " + id.iorcsz()
                    + " (need ≥ 4 / ≥ 1, nvmeof-protocol.md §3.2.1)");
        }
        if (id.icdoff() != 0) {
            throw new NvmeException(
                    "controller reports ICDOFF " + id.icdoff() + "; only 0 is supported (nvmeof-protocol.md §3.2.1)");
        }
        if ("rdma".equals(transport.name()) ? (id.sgls() & 0x4) == 0 : (id.sgls() & 0x3) == 0) {
            throw new NvmeException("controller does not support the SGLs this transport needs (SGLS 0x"
                    + Long.toHexString(id.sgls()) + ", nvmeof-protocol.md §3.2.1)");
        }
    }

    private void createIoQueues() throws NvmeException {
        int wanted = uri.queues();
        // Set Features Number of Queues, both counts 0's based (nvmeof-protocol.md §3.4, §7.1 step 17).
        CommandSlot.Completion c = adminOk(
                e -> e.opcode(AdminOpcode.SET_FEATURES.code())
                        .cdw(10, 0x07)
                        .cdw(11, (wanted - 1) | ((wanted - 1) << 16)),
                null,
                0);
        int granted = Math.min(wanted, Math.min(c.dw0() & 0xFFFF, c.dw0() >>> 16) + 1);
        // Queue size: min(depth, MQES + 1, MAXCMD) (nvmeof-protocol.md §3.2.1, §7.8).
        int size = Math.min(uri.depth(), Properties.capMqes(cap) + 1);
        if (identity.maxcmd() > 0) {
            size = Math.min(size, identity.maxcmd());
        }
        ioQueueSize = Math.max(2, size);
        maxInCapsule = (int) Math.max(0, Math.min(Integer.MAX_VALUE, identity.ioccsz() * 16 - 64));
        CommandQueue[] qs = new CommandQueue[granted];
        for (int qid = 1; qid <= granted; qid++) {
            CommandQueue q = openQueue(qid, ioQueueSize);
            qs[qid - 1] = q;
            ioQueues = java.util.Arrays.copyOf(qs, qid); // visible to close() if a later queue fails
            fabricsConnect(
                    q,
                    ioQueueSize - 1,
                    0,
                    cntlid); // I/O Connect: KATO 0, the admin CNTLID (nvmeof-protocol.md §2.2, §7.1 step 19)
            q.transport.maxInCapsuleData(maxInCapsule); // IOCCSZ×16−64 (nvmeof-protocol.md §3.2.1)
        }
        ioQueues = qs;
    }

    private void enableAsyncEvents() throws NvmeException {
        int mask = identity.oaes() & OAES_HOST_MASK;
        if (mask == 0) {
            return; // Linux sends no AER unless OAES & 0x80000B00 ≠ 0 (nvmeof-protocol.md §3.6)
        }
        CommandSlot.Completion c = admin(
                e -> e.opcode(AdminOpcode.SET_FEATURES.code()).cdw(10, 0x0B).cdw(11, mask), null, 0);
        if (!c.ok()) {
            LOG.log(
                    Level.WARNING,
                    "Set Features Asynchronous Event Configuration failed: " + Status.toString(c.status()));
            return;
        }
        submitAsyncEventRequest();
    }

    // ---- fabrics and admin commands ----

    private CommandSlot.Completion fabricsConnect(CommandQueue q, int sqsize, int kato, int ctrlId)
            throws NvmeException {
        ByteBuffer data = ByteBuffer.allocateDirect(ConnectData.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        ConnectData cd = new ConnectData();
        cd.wrap(data, 0);
        cd.hostId(host.hostId()).cntlid(ctrlId).subNqn(uri.connectNqn()).hostNqn(host.hostNqn());
        CommandSlot.Completion c = submitAndWait(
                q,
                e -> e.opcode(FabricsCommandType.OPCODE)
                        .fctype(FabricsCommandType.CONNECT.code())
                        .connect(0, q.qid, sqsize, 0, kato),
                data,
                ConnectData.LENGTH);
        if (!c.ok()) {
            String detail = "";
            if (Status.is(c.status(), Status.CONNECT_INVALID_PARAMETERS)) {
                // IPO/IATTR say which field was refused (nvmeof-protocol.md §2.2).
                int ipo = c.dw0() & 0xFFFF;
                boolean inData = ((c.dw0() >>> 16) & 1) != 0;
                detail = " (bad " + (inData ? "Connect data" : "command") + " field at byte " + ipo
                        + (inData && ipo == 256 ? ": unknown subsystem NQN" : inData && ipo == 512 ? ": host NQN" : "")
                        + ")";
            }
            throw new NvmeStatusException(
                    c.status(),
                    FabricsCommandType.OPCODE,
                    "Connect of "
                            + (q.qid == 0 ? "the admin queue" : "I/O queue " + q.qid) + " to " + uri.connectNqn()
                            + " at "
                            + hostPort() + " as " + host.hostNqn() + detail);
        }
        return c;
    }

    private long propertyGet(int offset, boolean eightBytes) throws NvmeException {
        return adminOk(
                                e -> e.opcode(FabricsCommandType.OPCODE)
                                        .fctype(FabricsCommandType.PROPERTY_GET.code())
                                        .property(eightBytes ? Properties.SIZE_8 : Properties.SIZE_4, offset, 0),
                                null,
                                0)
                        .result64()
                & (eightBytes ? -1L : 0xFFFFFFFFL);
    }

    private void propertySet(int offset, int value) throws NvmeException {
        adminOk(
                e -> e.opcode(FabricsCommandType.OPCODE)
                        .fctype(FabricsCommandType.PROPERTY_SET.code())
                        .property(Properties.SIZE_4, offset, value & 0xFFFFFFFFL),
                null,
                0);
    }

    /** Identify (nvmeof-protocol.md §3.2): a 4096-byte page. */
    ByteBuffer identify(int cns, int nsid) throws NvmeException {
        ByteBuffer page = ByteBuffer.allocateDirect(ControllerIdentity.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        adminOk(e -> e.opcode(AdminOpcode.IDENTIFY.code()).nsid(nsid).cdw(10, cns), page, ControllerIdentity.SIZE);
        return page;
    }

    /**
     * Reads {@code length} bytes of log page {@code lid} from byte {@code offset} with Get Log Page (nvmeof-protocol.md §3.3; RAE 0), for
     * the pages this library does not decode itself, e.g. SMART/health (0x02) or a vendor-specific page (0xC0–0xFF).
     *
     * @param nsid   0 for a controller-wide page, 0xFFFFFFFF for all namespaces, else a namespace
     * @param offset a multiple of 4 (LPO)
     * @param length 4..(4 × 65536 × 65536) bytes, a multiple of 4
     * @return a little-endian buffer of {@code length} bytes (position 0)
     * @throws NvmeStatusException if the controller refuses it, e.g. Invalid Field or Invalid Log Page for a LID it
     *                             does not have
     */
    public ByteBuffer getLogPage(int lid, int nsid, long offset, int length) throws NvmeException {
        if (lid < 0 || lid > 0xFF) {
            throw new IllegalArgumentException("log page identifier must be 0..255: " + lid);
        }
        if (length < 4 || (length & 3) != 0) {
            throw new IllegalArgumentException("length must be a positive multiple of 4: " + length);
        }
        if (offset < 0 || (offset & 3) != 0) {
            throw new IllegalArgumentException("offset must be a non-negative multiple of 4: " + offset);
        }
        return getLogPage(lid, nsid, offset, length, false);
    }

    /** Get Log Page (nvmeof-protocol.md §3.3): {@code length} bytes (a multiple of 4) from byte offset {@code lpo}. */
    ByteBuffer getLogPage(int lid, int nsid, long lpo, int length, boolean rae) throws NvmeException {
        ByteBuffer buf = ByteBuffer.allocateDirect(length).order(ByteOrder.LITTLE_ENDIAN);
        int numd = length / 4 - 1; // 0's based dword count, split in NUMDL/NUMDU
        adminOk(
                e -> e.opcode(AdminOpcode.GET_LOG_PAGE.code())
                        .nsid(nsid)
                        .cdw(10, (lid & 0xFF) | (rae ? 0x8000 : 0) | ((numd & 0xFFFF) << 16))
                        .cdw(11, numd >>> 16)
                        .cdw(12, (int) lpo)
                        .cdw(13, (int) (lpo >>> 32)),
                buf,
                length);
        return buf;
    }

    private CommandSlot.Completion adminOk(Consumer<SubmissionQueueEntry> fill, ByteBuffer data, int length)
            throws NvmeException {
        return submitAndWait(admin, fill, data, length, true);
    }

    private CommandSlot.Completion admin(Consumer<SubmissionQueueEntry> fill, ByteBuffer data, int length)
            throws NvmeException {
        return submitAndWait(admin, fill, data, length, false);
    }

    private CommandSlot.Completion submitAndWait(
            CommandQueue q, Consumer<SubmissionQueueEntry> fill, ByteBuffer data, int length) throws NvmeException {
        return submitAndWait(q, fill, data, length, false);
    }

    private CommandSlot.Completion submitAndWait(
            CommandQueue q, Consumer<SubmissionQueueEntry> fill, ByteBuffer data, int length, boolean requireSuccess)
            throws NvmeException {
        NvmeException failed = failure;
        if (failed != null) {
            // Not unusable(): the shutdown handshake runs after close() started.
            throw new NvmeTransportException("controller failed: " + failed.getMessage(), failed);
        }
        CommandSlot s = q.acquire(timeoutNanos);
        SubmissionQueueEntry e = s.prepare();
        fill.accept(e);
        String what = requireSuccess ? s.describe() : null;
        int opcode = e.opcode();
        CompletableFuture<CommandSlot.Completion> f = s.submit(data, 0, length, timeoutNanos);
        CommandSlot.Completion c = await(f, timeoutNanos);
        if (requireSuccess && !c.ok()) {
            throw new NvmeStatusException(c.status(), opcode, what);
        }
        return c;
    }

    /** Waits for a command future; the command's own timeout bounds it, the extra margin only guards bugs. */
    static <T> T await(CompletableFuture<T> f, long timeoutNanos) throws NvmeException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get(timeoutNanos + TimeUnit.SECONDS.toNanos(10), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    // The command owns its buffer until it completes, which the command timeout guarantees.
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof NvmeException ne) {
                        throw rethrown(ne);
                    }
                    throw new NvmeException("command failed: " + cause, cause);
                } catch (TimeoutException e) {
                    throw new NvmeTimeoutException(
                            "no completion within the command timeout (internal error: " + "the timer did not fire)");
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The same exception type with the caller's stack added as the cause's context, so a blocking caller sees where
     * it called from and the original completion stack.
     */
    private static NvmeException rethrown(NvmeException e) {
        NvmeException copy;
        if (e instanceof NvmeStatusException se) {
            copy = new NvmeStatusException(se.status(), se.opcode(), se.command());
        } else if (e instanceof NvmeTimeoutException) {
            copy = new NvmeTimeoutException(e.getMessage());
        } else if (e instanceof NvmeTransportException) {
            copy = new NvmeTransportException(e.getMessage(), e.getCause());
        } else {
            copy = new NvmeException(e.getMessage(), e.getCause());
        }
        copy.addSuppressed(e);
        return copy;
    }

    // ---- keep alive, timeouts, failures ----

    private void sendKeepAlive() {
        if (closing || failure != null) {
            return;
        }
        CommandSlot s = admin.tryAcquire();
        if (s == null) {
            return; // every admin slot busy: the controller sees traffic anyway; try at the next period
        }
        s.prepare().opcode(AdminOpcode.KEEP_ALIVE.code());
        // The Keep Alive itself times out after KATO, which fails the controller like Linux's error recovery
        // (nvmeof-protocol.md §3.5).
        s.submit(null, 0, 0, TimeUnit.MILLISECONDS.toNanos(uri.katoMillis())).whenComplete((c, err) -> {
            if (closing) {
                return;
            }
            if (err != null) {
                fail(
                        err instanceof NvmeException ne
                                ? ne
                                : new NvmeTransportException("Keep Alive failed: " + err, err));
            } else if (!c.ok()) {
                fail(new NvmeTransportException("Keep Alive failed: " + Status.toString(c.status())));
            }
        });
    }

    private void checkTimeouts() {
        long now = System.nanoTime();
        CommandQueue a = admin;
        if (a != null) {
            a.checkTimeouts(now);
        }
        for (CommandQueue q : ioQueues) {
            q.checkTimeouts(now);
        }
    }

    /** A command timed out: fail the controller (its queues close, every other command fails), nvmeof-protocol.md §7.3. */
    void commandTimedOut(NvmeTimeoutException e) {
        fail(new NvmeTimeoutException("controller failed: " + e.getMessage()));
    }

    private void queueClosed(CommandQueue q, Throwable cause) {
        if (closing) {
            return;
        }
        fail(new NvmeTransportException(
                q.name() + " of " + uri.connectNqn() + " at " + hostPort() + " closed"
                        + (cause != null ? ": " + cause.getMessage() : ""),
                cause));
    }

    /** Fails the controller: closes every queue without writing CC (error recovery, nvmeof-protocol.md §7.3). Idempotent. */
    void fail(NvmeException cause) {
        synchronized (this) {
            if (failure != null || closing) {
                return;
            }
            failure = cause;
        }
        LOG.log(
                Level.WARNING,
                "controller " + cntlid + " of " + uri.connectNqn() + " at " + hostPort() + " failed: "
                        + cause.getMessage());
        cancelTasksExceptTimeouts();
        for (CommandQueue q : ioQueues) {
            q.close(cause);
        }
        CommandQueue a = admin;
        if (a != null) {
            a.close(cause);
        }
    }

    private void cancelTasksExceptTimeouts() {
        // Keep the timeout scan running: commands the transport never answers still need their deadline.
        for (int i = 1; i < tasks.size(); i++) {
            tasks.get(i).cancel(false);
        }
    }

    /** The reason the controller failed, or null while it works. */
    public NvmeException failure() {
        return failure;
    }

    NvmeException failureCause() {
        return failure;
    }

    /** Why a new command cannot be sent now, or null if it can. */
    NvmeException unusable() {
        NvmeException f = failure;
        if (f != null) {
            return new NvmeTransportException("controller failed: " + f.getMessage(), f);
        }
        if (closed.get()) {
            return new NvmeTransportException("the controller is closed");
        }
        return null;
    }

    /** Whether the controller is connected and has not failed. */
    public boolean isOpen() {
        return !closed.get() && failure == null;
    }

    // ---- asynchronous events (nvmeof-protocol.md §3.6) ----

    private void submitAsyncEventRequest() {
        if (closing || failure != null) {
            return;
        }
        CommandSlot s = admin.tryAcquire();
        if (s == null) {
            LOG.log(Level.WARNING, "no admin slot for an Asynchronous Event Request; namespace events are off");
            return;
        }
        s.prepare().opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code());
        // No timeout: the controller holds an AER until an event happens (nvmeof-protocol.md §3.6).
        s.submit(null, 0, 0, 0).whenComplete((c, err) -> {
            if (err != null || closing || failure != null) {
                return;
            }
            if (!c.ok()) {
                // Linux does not re-issue after an error status (nvmeof-protocol.md §3.6).
                LOG.log(Level.WARNING, "Asynchronous Event Request failed: " + Status.toString(c.status()));
                return;
            }
            events.execute(() -> onAsyncEvent(c.dw0()));
        });
    }

    private void onAsyncEvent(int dw0) {
        int type = dw0 & 0x7;
        int info = (dw0 >>> 8) & 0xFF;
        int lid = (dw0 >>> 16) & 0xFF;
        submitAsyncEventRequest(); // re-issue first, as Linux does
        try {
            if (type == 2 && info == 0x00) {
                namespacesChanged();
            } else {
                LOG.log(
                        Level.INFO,
                        String.format("asynchronous event type %d info 0x%02x log 0x%02x ignored", type, info, lid));
            }
        } catch (NvmeException e) {
            if (!closing) {
                LOG.log(
                        Level.WARNING,
                        "handling asynchronous event 0x" + Integer.toHexString(dw0) + " failed: " + e.getMessage());
            }
        }
    }

    private void namespacesChanged() throws NvmeException {
        // Changed Namespace List (LID 0x04, NSID 0xFFFFFFFF, RAE 0 clears the event, nvmeof-protocol.md §3.3).
        ByteBuffer log = getLogPage(0x04, 0xFFFFFFFF, 0, 4096, false);
        List<Integer> changed = new ArrayList<>();
        boolean all = log.getInt(0) == 0xFFFFFFFF; // more than 1024 changed (nvmeof-protocol.md §3.3)
        for (int i = 0; !all && i < 1024; i++) {
            int nsid = log.getInt(4 * i);
            if (nsid == 0) {
                break;
            }
            changed.add(nsid);
        }
        Map<Integer, Namespace> before = namespaces;
        Map<Integer, Namespace> after = scanNamespaces(before, all ? null : changed);
        namespaces = after;
        List<Namespace> added = new ArrayList<>();
        List<Integer> removed = new ArrayList<>();
        for (Map.Entry<Integer, Namespace> e : after.entrySet()) {
            if (!before.containsKey(e.getKey())) {
                added.add(e.getValue());
            }
        }
        for (Map.Entry<Integer, Namespace> e : before.entrySet()) {
            if (!after.containsKey(e.getKey())) {
                removed.add(e.getKey());
                e.getValue().deactivate();
            }
        }
        if (all) {
            changed = new ArrayList<>(after.keySet());
            changed.addAll(removed);
        }
        NamespaceChangeEvent event = new NamespaceChangeEvent(this, changed, added, removed);
        for (NamespaceChangeListener l : listeners) {
            try {
                l.namespacesChanged(event);
            } catch (RuntimeException ex) {
                LOG.log(Level.WARNING, "a namespace change listener threw", ex);
            }
        }
    }

    /**
     * Reads the active namespace list (Identify CNS 0x02) and identifies the namespaces that are new or in
     * {@code changed} (null: all). Existing {@link Namespace} objects are kept and updated.
     */
    private Map<Integer, Namespace> scanNamespaces(Map<Integer, Namespace> current, List<Integer> changed)
            throws NvmeException {
        List<Integer> active = new ArrayList<>();
        int after = 0;
        while (true) {
            // NSIDs greater than NSID, ascending, zero-terminated; repeat only while the page is full
            // (nvmeof-protocol.md §3.2).
            ByteBuffer page = identify(0x02, after);
            int n = 0;
            for (; n < 1024; n++) {
                int nsid = page.getInt(4 * n);
                if (nsid == 0) {
                    break;
                }
                active.add(nsid);
                after = nsid;
            }
            if (n < 1024) {
                break;
            }
        }
        Map<Integer, Namespace> out = new TreeMap<>((x, y) -> Integer.compareUnsigned(x, y));
        for (int nsid : active) {
            Namespace existing = current.get(nsid);
            if (existing != null && (changed == null ? false : !changed.contains(nsid))) {
                out.put(nsid, existing);
                continue;
            }
            NamespaceIdentity id = identifyNamespace(nsid);
            if (id == null || !id.present()) {
                continue; // NCAP 0: absent (nvmeof-protocol.md §3.2)
            }
            if (existing != null) {
                existing.update(id);
                out.put(nsid, existing);
            } else {
                out.put(nsid, new Namespace(this, id));
            }
        }
        return Collections.unmodifiableMap(out);
    }

    private NamespaceIdentity identifyNamespace(int nsid) throws NvmeException {
        ByteBuffer page = identify(0x00, nsid);
        ByteBuffer descriptors = null;
        if (vs >= 0x00010300) {
            // CNS 0x03 exists from 1.3 on; Linux skips the namespace if it fails, we only lose the UUID
            // (nvmeof-protocol.md §3.2.4).
            try {
                descriptors = identify(0x03, nsid);
            } catch (NvmeStatusException e) {
                descriptors = null;
            }
        }
        NamespaceIdentity id = NamespaceIdentity.parse(nsid, page, descriptors);
        if (id.present() && (id.ms() != 0 || id.lbads() < 9 || id.lbads() > 16)) {
            // Metadata without PI, or a block size outside 512 B..64 KiB: Linux sets capacity 0 for these
            // (nvmeof-protocol.md §7.5).
            LOG.log(
                    Level.WARNING,
                    "namespace " + nsid + " has an unsupported format (LBADS " + id.lbads() + ", MS " + id.ms()
                            + "); ignored");
            return null;
        }
        return id;
    }

    // ---- discovery (nvmeof-protocol.md §3.3, §7.2) ----

    /**
     * Reads the discovery log the way libnvme does (nvmeof-protocol.md §3.3): the 20-byte header, then the entries from byte 1024 in
     * chunks of at most 4096 bytes, then the header again; if GENCTR changed meanwhile it starts over (up to 10 times).
     *
     * @throws IllegalStateException if this is not a discovery controller
     */
    public DiscoveryLog discoveryLog() throws NvmeException {
        if (!uri.isDiscovery()) {
            throw new IllegalStateException(uri.connectNqn() + " is not a discovery controller");
        }
        int commands = 0;
        for (int attempt = 0; attempt < 10; attempt++) {
            ByteBuffer header = getLogPage(0x70, 0, 0, 20, true);
            long genctr = header.getLong(0);
            long numrec = header.getLong(8);
            if (numrec < 0 || numrec > 1_000_000) {
                throw new NvmeException("discovery log header claims " + numrec + " records");
            }
            IntConsumer hook = discoveryReadHook;
            if (hook != null) {
                hook.accept(++commands);
            }
            long total = numrec * 1024;
            ByteBuffer entries = ByteBuffer.allocate((int) total).order(ByteOrder.LITTLE_ENDIAN);
            for (long off = 0; off < total; off += 4096) {
                int len = (int) Math.min(4096, total - off);
                // RAE = 1 on every chunk but the last, like libnvme (nvmeof-protocol.md §3.3).
                ByteBuffer chunk = getLogPage(0x70, 0, 1024 + off, len, off + len < total);
                entries.put((int) off, chunk, 0, len);
                hook = discoveryReadHook;
                if (hook != null) {
                    hook.accept(++commands);
                }
            }
            ByteBuffer again = getLogPage(0x70, 0, 0, 20, false);
            if (again.getLong(0) != genctr) {
                LOG.log(
                        Level.DEBUG,
                        "discovery log changed while reading (GENCTR " + genctr + " → " + again.getLong(0)
                                + "); reading again");
                continue;
            }
            if (again.getLong(8) != numrec) {
                throw new NvmeException("discovery log NUMREC changed from " + numrec + " to " + again.getLong(8)
                        + " with the same GENCTR " + genctr);
            }
            List<DiscoveryEntry> list = new ArrayList<>();
            for (int i = 0; i < numrec; i++) {
                list.add(parseEntry(entries, i * 1024));
            }
            return new DiscoveryLog(genctr, list);
        }
        throw new NvmeException("the discovery log kept changing while it was read (10 attempts)");
    }

    private static DiscoveryEntry parseEntry(ByteBuffer b, int at) {
        return new DiscoveryEntry(
                b.get(at) & 0xFF,
                b.get(at + 1) & 0xFF,
                b.get(at + 2) & 0xFF,
                b.get(at + 3) & 0xFF,
                b.getShort(at + 4) & 0xFFFF,
                b.getShort(at + 6) & 0xFFFF,
                b.getShort(at + 8) & 0xFFFF,
                b.getShort(at + 10) & 0xFFFF,
                text(b, at + 32, 32),
                text(b, at + 256, 256),
                text(b, at + 512, 256),
                b.getInt(at + 768),
                b.getShort(at + 776) & 0xFFFF);
    }

    /** A discovery text field: NUL-terminated or padded; trailing spaces stripped like libnvme (nvmeof-protocol.md §3.3). */
    private static String text(ByteBuffer b, int at, int width) {
        int len = 0;
        while (len < width && b.get(at + len) != 0) {
            len++;
        }
        byte[] bytes = new byte[len];
        b.get(at, bytes);
        return new String(bytes, StandardCharsets.US_ASCII).stripTrailing();
    }

    /**
     * Connects to a subsystem listed by this discovery controller, with this controller's URI options and host
     * identity.
     */
    public Controller connect(DiscoveryEntry entry) throws NvmeException {
        if (!entry.isNvmSubsystem()) {
            throw new IllegalArgumentException(
                    "entry for " + entry.subnqn() + " is a " + entry.subtypeName() + ", not an NVM subsystem");
        }
        return open(
                uri.forEntry(entry),
                new ConnectOptions(host, options.connectTimeout(), options.transport(), options.ioMode()));
    }

    // ---- public view ----

    /** The URI this controller was connected with. */
    public NvmeUri uri() {
        return uri;
    }

    public HostIdentity host() {
        return host;
    }

    /** The controller ID the Connect returned (nvmeof-protocol.md §2.2). */
    public int cntlid() {
        return cntlid;
    }

    /** Identify Controller, decoded. */
    public ControllerIdentity identity() {
        return identity;
    }

    /** A read-only copy of the raw 4096-byte Identify Controller page. */
    public ByteBuffer identifyControllerPage() {
        ByteBuffer copy = ByteBuffer.allocate(identifyPage.capacity()).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(0, identifyPage, 0, identifyPage.capacity());
        return copy.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    public String serialNumber() {
        return identity.sn();
    }

    public String modelNumber() {
        return identity.mn();
    }

    public String firmwareRevision() {
        return identity.fr();
    }

    /** SUBNQN from Identify Controller. */
    public String subsystemNqn() {
        return identity.subnqn();
    }

    /** VS, e.g. "1.3.0" (nvmeof-protocol.md §2.3). */
    public String version() {
        return ControllerIdentity.versionString(vs);
    }

    /** CAP (nvmeof-protocol.md §2.3). */
    public long capabilities() {
        return cap;
    }

    public boolean isDiscovery() {
        return uri.isDiscovery();
    }

    /** I/O queues granted and connected. */
    public int ioQueueCount() {
        return ioQueues.length;
    }

    /** Entries (command slots) per I/O queue: min(depth, CAP.MQES+1, MAXCMD). */
    public int ioQueueDepth() {
        return ioQueueSize;
    }

    /** In-capsule data bytes allowed on I/O queues: IOCCSZ×16−64 (nvmeof-protocol.md §3.2.1). */
    public int maxInCapsuleData() {
        return maxInCapsule;
    }

    /** The I/O queues' engine and busy polling: {@link ConnectOptions#ioMode()}, else the URI's engine= and hipri=. */
    public IoMode ioMode() {
        return options.ioMode() != null ? options.ioMode() : uri.ioMode();
    }

    /** The per-command timeout. */
    public java.time.Duration commandTimeout() {
        return uri.timeout();
    }

    /** The active namespaces, by ascending NSID (a snapshot). */
    public List<Namespace> namespaces() {
        return List.copyOf(namespaces.values());
    }

    /**
     * The URI's namespace ({@code nsid=}), or else the first active one.
     *
     * @throws NvmeException if the controller has no active namespace
     */
    public Namespace namespace() throws NvmeException {
        if (uri.nsid() != 0) {
            return namespace(uri.nsid());
        }
        Map<Integer, Namespace> m = namespaces;
        if (m.isEmpty()) {
            throw new NvmeException(uri.connectNqn() + " has no active namespace");
        }
        return m.values().iterator().next();
    }

    /**
     * The active namespace {@code nsid}.
     *
     * @throws NvmeException if it is not active
     */
    public Namespace namespace(int nsid) throws NvmeException {
        Namespace ns = namespaces.get(nsid);
        if (ns == null) {
            throw new NvmeException("namespace " + Integer.toUnsignedString(nsid) + " is not active on "
                    + uri.connectNqn() + " (active: " + namespaces.keySet() + ")");
        }
        return ns;
    }

    /** Adds a listener for namespace changes (see {@link NamespaceChangeListener} for the thread it runs on). */
    public void onNamespaceChange(NamespaceChangeListener listener) {
        listeners.add(java.util.Objects.requireNonNull(listener));
    }

    public void removeNamespaceChangeListener(NamespaceChangeListener listener) {
        listeners.remove(listener);
    }

    /**
     * A direct, little-endian buffer of {@code size} bytes for I/O data, from the transport. Over NVMe/RDMA it is
     * memory registered with the RNIC: commands on any of this controller's queues whose buffer is this one, or a
     * slice or duplicate of it, move their data <b>with no copy on the host</b> (the controller reads and writes it
     * by RDMA); any other buffer costs one copy on the host there. Writes small enough to go in the capsule (IOCCSZ)
     * are copied into the capsule either way. Over NVMe/TCP it is a plain direct buffer. Registration is slow:
     * allocate once and reuse. Valid while the controller is open; after {@link #close()} the memory stays usable as
     * an ordinary buffer.
     *
     * @throws NvmeTransportException if the controller is closed or the transport cannot register the memory
     */
    public ByteBuffer allocateBuffer(int size) throws NvmeException {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        CommandQueue a = admin;
        if (closed.get() || a == null) {
            throw new NvmeTransportException("the controller is closed");
        }
        try {
            return a.transport.allocateBuffer(size);
        } catch (IOException e) {
            throw new NvmeTransportException("cannot allocate a " + size + "-byte I/O buffer: " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new NvmeTransportException("cannot allocate an I/O buffer: " + e.getMessage(), e);
        }
    }

    /** The I/O queue for the calling thread: by thread ID, so one thread always uses one queue. */
    CommandQueue ioQueue() {
        CommandQueue[] qs = ioQueues;
        if (qs.length == 0) {
            throw new IllegalStateException("a discovery controller has no I/O queues");
        }
        return qs[(int) (Thread.currentThread().getId() % qs.length)];
    }

    CommandQueue[] ioQueues() {
        return ioQueues;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    private String hostPort() {
        return (uri.host().indexOf(':') >= 0 ? "[" + uri.host() + "]" : uri.host()) + ":" + uri.port();
    }

    // ---- shutdown (nvmeof-protocol.md §7.3) ----

    /**
     * Shuts the controller down: closes the I/O queues (their outstanding commands fail with
     * {@link NvmeTransportException}), sets CC.SHN to normal shutdown and waits up to 5 s for CSTS.SHST = complete,
     * then closes the admin queue. After a failure it only releases what is left. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        NvmeTransportException cause = new NvmeTransportException("the controller was closed");
        boolean orderly;
        synchronized (this) {
            orderly = failure == null;
            closing = true;
        }
        for (ScheduledFuture<?> t : tasks) {
            if (t != tasks.get(0)) {
                t.cancel(false);
            }
        }
        for (CommandQueue q : ioQueues) {
            q.close(cause);
        }
        CommandQueue a = admin;
        if (orderly && enabled && a != null) {
            try {
                shutdown();
            } catch (NvmeException e) {
                LOG.log(Level.WARNING, "orderly shutdown of controller " + cntlid + " failed: " + e.getMessage());
            }
        }
        if (a != null) {
            a.close(cause);
        }
        timer.shutdownNow();
        events.shutdownNow();
        for (Namespace ns : namespaces.values()) {
            ns.deactivate();
        }
        LOG.log(Level.INFO, () -> "closed controller " + cntlid + " of " + uri.connectNqn() + " at " + hostPort());
    }

    private void shutdown() throws NvmeException {
        // CC.SHN = 01 with EN still 1, then poll CSTS.SHST until 10b (nvmeof-protocol.md §2.3, §7.3 step 3).
        propertySet(
                Properties.CC,
                (cc & ~(0x3 << Properties.CC_SHN_SHIFT)) | (Properties.CC_SHN_NORMAL << Properties.CC_SHN_SHIFT));
        long limit = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_TIMEOUT_MILLIS);
        while (true) {
            int csts = (int) propertyGet(Properties.CSTS, false);
            if ((csts & Properties.CSTS_SHST_MASK) == Properties.CSTS_SHST_COMPLETE) {
                return;
            }
            if (System.nanoTime() - limit > 0) {
                throw new NvmeTimeoutException("shutdown not complete within " + SHUTDOWN_TIMEOUT_MILLIS + " ms");
            }
            sleep(2);
        }
    }

    /** Closes whatever a failed bring-up opened, without a shutdown handshake. */
    private void abort() {
        closed.set(true);
        closing = true;
        NvmeTransportException cause = new NvmeTransportException("connect failed");
        for (CommandQueue q : ioQueues) {
            q.close(cause);
        }
        CommandQueue a = admin;
        if (a != null) {
            a.close(cause);
        }
        timer.shutdownNow();
        events.shutdownNow();
    }

    private static void sleep(long millis) throws NvmeException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NvmeException("interrupted");
        }
    }

    @Override
    public String toString() {
        if (identity == null) {
            return "controller " + uri.connectNqn() + " at " + hostPort() + " (connecting)";
        }
        return String.format(
                "controller %d of %s at %s://%s (%s %s, fw %s, NVMe %s, %d I/O queue(s) of %d)",
                cntlid,
                identity.subnqn(),
                uri.transport(),
                hostPort(),
                identity.mn(),
                identity.sn(),
                identity.fr(),
                version(),
                ioQueues.length,
                ioQueueSize);
    }
}

package io.nvmeof.initiator.multipath;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.core.command.LogPageId;
import io.nvmeof.initiator.AsyncEventListener;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.ControllerState;
import io.nvmeof.initiator.ControllerStateEvent;
import io.nvmeof.initiator.ControllerStateListener;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.NamespaceIdentity;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeTransportException;
import io.nvmeof.initiator.NvmeUri;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One path of a {@link MultipathNamespace}: one controller of the subsystem, its {@link Namespace} with the shared
 * NSID, and the ANA state of that namespace's group on this controller (Linux: a {@code struct nvme_ns} under its
 * {@code nvme_ns_head}).
 *
 * <p>Its worker thread does the slow work of the path, so that a path that hangs delays no other: the ANA log read
 * at connect, after an ANA change notice and after an ANA status on I/O (until then the path is "ANA pending" and
 * unused, as Linux's {@code NVME_NS_ANA_PENDING}); and the reconnect after the controller failed, every
 * {@code reconnectDelay}, checking that the namespace is still the same one (NGUID/EUI64/UUID). A health check every
 * 200 ms notices a controller that failed while no I/O ran on it.
 *
 * <p>The I/O path only reads volatile fields ({@link #usable()}) and counts: no lock, no allocation.
 */
final class NamespacePath {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator.multipath");
    private static final VarHandle ACTIVE;
    private static final VarHandle COMMANDS;
    private static final long HEALTH_TICK_MILLIS = 200;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            ACTIVE = l.findVarHandle(NamespacePath.class, "active", int.class);
            COMMANDS = l.findVarHandle(NamespacePath.class, "commands", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** What the owner needs to hear from a path. */
    interface Owner {
        /** The path's usability may have changed (connected, lost, ANA state read): waiting commands may go. */
        void pathChanged(NamespacePath path);

        /** The identity every path's namespace must have; null until the first path connected. */
        NamespaceIdentity reference();
    }

    final int index;
    final NvmeUri uri;
    private final ConnectOptions options;
    private final int nsid;
    private final Owner owner;

    /** A path whose namespace is not the one the other paths reach (different identifiers or format). */
    static final class NotSameNamespaceException extends NvmeException {
        private static final long serialVersionUID = 1L;

        NotSameNamespaceException(String message) {
            super(message);
        }
    }

    private final Duration reconnectDelay;
    private final ScheduledExecutorService worker;
    private final AsyncEventListener anaListener = this::asyncEvent;
    private final ControllerStateListener stateListener = this::stateChanged;
    /** An ANA log read is queued on the worker: path errors of many commands at once ask for one read. */
    private final AtomicBoolean anaReadQueued = new AtomicBoolean();

    private volatile Controller controller;
    private volatile Namespace namespace;
    private volatile AnaState ana;
    private volatile boolean anaPending;
    private volatile boolean closed;
    private volatile long reconnectAt;
    /** New connections of this path after its controller was lost for good. */
    private volatile long reconnects;
    /** Reconnects the controllers this path dropped had done themselves. */
    private volatile long droppedControllerReconnects;

    private volatile String lastFailure;
    /** Commands in flight on this path (counted for the queue-depth policy only, as Linux does). */
    private volatile int active;
    /** Commands sent on this path. */
    private volatile long commands;

    NamespacePath(
            int index,
            NvmeUri uri,
            ConnectOptions options,
            int nsid,
            Owner owner,
            Duration reconnectDelay,
            String threadName) {
        this.index = index;
        this.uri = uri;
        this.options = options;
        this.nsid = nsid;
        this.owner = owner;
        this.reconnectDelay = reconnectDelay;
        ScheduledThreadPoolExecutor w = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        w.setRemoveOnCancelPolicy(true);
        this.worker = w;
    }

    // ---- the I/O path ----

    /**
     * Controller live (Linux: NVME_CTRL_LIVE), namespace active, ANA state read and optimized or non-optimized.
     */
    boolean usable() {
        Controller c = controller;
        Namespace n = namespace;
        AnaState s = ana;
        return c != null
                && n != null
                && !anaPending
                && (s == AnaState.OPTIMIZED || s == AnaState.NON_OPTIMIZED)
                && c.state() == ControllerState.LIVE
                && n.isActive();
    }

    /** {@link #usable()} and optimized. */
    boolean optimized() {
        return ana == AnaState.OPTIMIZED && usable();
    }

    /** {@link #usable()} and non-optimized. */
    boolean nonOptimized() {
        return ana == AnaState.NON_OPTIMIZED && usable();
    }

    /** The namespace to send a command on; null while not connected. */
    Namespace namespace() {
        return namespace;
    }

    int active() {
        return active;
    }

    void started(boolean countActive) {
        COMMANDS.getAndAdd(this, 1L);
        if (countActive) {
            ACTIVE.getAndAdd(this, 1);
        }
    }

    void finished(boolean countActive) {
        if (countActive) {
            ACTIVE.getAndAdd(this, -1);
        }
    }

    // ---- path errors (called on a queue thread; cold path) ----

    /** An I/O failed with an ANA status: stop using the path until its ANA log was read again. */
    void anaError() {
        anaPending = true;
        queueAnaRead();
    }

    private void queueAnaRead() {
        if (anaReadQueued.compareAndSet(false, true)) {
            submitWork(() -> {
                anaReadQueued.set(false);
                readAnaQuietly();
            });
        }
    }

    /** An I/O failed because the path is gone (transport error, timeout): the health check reconnects it. */
    void transportError() {
        submitWork(this::check);
    }

    // ---- connecting ----

    /** Connects the controller and reads the ANA state, on the calling thread; throws if it cannot. */
    void connect() throws NvmeException {
        Controller c = Nvme.connect(uri, options);
        try {
            NamespaceIdentity ref = owner.reference();
            int id = ref != null ? ref.nsid() : nsid;
            Namespace n = id == 0 ? c.namespace() : c.namespace(id);
            checkSame(c, n);
            c.onAsyncEvent(anaListener);
            c.addStateListener(stateListener);
            controller = c;
            namespace = n;
            readAna(c, n);
            if (closed) {
                // close() ran meanwhile and may not have seen this controller: it is closed here (Controller.close
                // is idempotent, so both closing it is fine).
                throw new NvmeTransportException("the multipath namespace was closed");
            }
        } catch (NvmeException | RuntimeException e) {
            controller = null;
            namespace = null;
            c.close();
            throw e;
        }
        lastFailure = null;
        owner.pathChanged(this);
    }

    /** Starts the health check; the path is connected again whenever its controller failed. */
    void start(boolean connectedNow) {
        if (!connectedNow) {
            reconnectAt = System.nanoTime() + reconnectDelay.toNanos();
        }
        worker.scheduleWithFixedDelay(this::check, HEALTH_TICK_MILLIS, HEALTH_TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void checkSame(Controller c, Namespace n) throws NvmeException {
        NamespaceIdentity ref = owner.reference();
        if (ref == null) {
            return;
        }
        NamespaceIdentity id = n.identity();
        if (!ref.sameIdentifiers(id)) {
            throw new NotSameNamespaceException("namespace " + Integer.toUnsignedString(n.nsid()) + " of "
                    + c.subsystemNqn()
                    + " at " + address() + " has " + id.identifiers() + ", not " + ref.identifiers()
                    + " as on the other paths: not the same namespace, not used as a path to it");
        }
        if (id.blockSize() != ref.blockSize() || id.nsze() != ref.nsze()) {
            throw new NotSameNamespaceException("namespace " + Integer.toUnsignedString(n.nsid()) + " at " + address()
                    + " has " + id.nsze() + " blocks of " + id.blockSize() + " bytes, the other paths " + ref.nsze()
                    + " of " + ref.blockSize() + ": not used as a path");
        }
    }

    /** Reads the ANA log (LID 0Ch, RAE 0, which also re-arms the ANA change notice) and takes this namespace's state. */
    private void readAna(Controller c, Namespace n) throws NvmeException {
        // CMIC bit 3: the controller reports ANA (nvmeof-protocol.md §3.2.1). Without it every path is optimized.
        if ((c.identity().cmic() & 0x08) == 0) {
            ana = AnaState.OPTIMIZED;
            anaPending = false;
            return;
        }
        ByteBuffer idc = c.identifyControllerPage();
        int size = AnaLogPage.sizeFor(idc, n.maxBlocksPerCommand() * n.blockSize());
        ByteBuffer log = c.getLogPage(LogPageId.ASYMMETRIC_NAMESPACE_ACCESS.code(), 0, 0, size);
        AnaState s = AnaLogPage.stateOf(log, n.nsid(), n.identity().anagrpid());
        AnaState before = ana;
        ana = s;
        anaPending = false;
        if (before != s) {
            LOG.log(Level.INFO, () -> "path " + address() + " to namespace " + nsid(n) + ": ANA state " + name(s));
        }
    }

    private void readAnaQuietly() {
        Controller c = controller;
        Namespace n = namespace;
        if (closed || c == null || n == null || c.state() != ControllerState.LIVE) {
            return;
        }
        try {
            readAna(c, n);
        } catch (NvmeException e) {
            LOG.log(Level.WARNING, "reading the ANA log of path " + address() + " failed: " + e.getMessage());
        }
        owner.pathChanged(this);
    }

    /** The controller's event thread: an ANA change notice (type 2 notice, information 03h). */
    private void asyncEvent(int type, int info, int logPage) {
        if (type == 2 && info == 0x03) {
            anaPending = true;
            queueAnaRead();
        }
    }

    /**
     * The controller's state thread. Live again after its own reconnect: the ANA states may have changed meanwhile,
     * so the path waits for a fresh ANA log. Any other change: waiting commands may have a path now, or lost one.
     */
    private void stateChanged(ControllerStateEvent e) {
        if (e.state() == ControllerState.LIVE && e.previous() == ControllerState.RECONNECTING) {
            anaPending = true;
            queueAnaRead();
        } else if (e.state() == ControllerState.FAILED) {
            submitWork(this::check);
        }
        owner.pathChanged(this);
    }

    /** The worker, every 200 ms: reconnect a failed path when due; re-read a pending or changing ANA state. */
    private void check() {
        if (closed) {
            return;
        }
        Controller c = controller;
        ControllerState state = c == null ? null : c.state();
        if (state == ControllerState.LIVE && c.isOpen()) {
            if (anaPending || ana == AnaState.CHANGE) {
                readAnaQuietly();
            }
            return;
        }
        if (state == ControllerState.RECONNECTING || state == ControllerState.CONNECTING) {
            return; // the controller reconnects itself (reconnect_delay, ctrl_loss_tmo): not usable meanwhile
        }
        if (c != null) {
            // The controller failed: forget it; reconnect after the delay.
            lastFailure = c.failure() != null ? c.failure().getMessage() : "closed";
            controller = null;
            namespace = null;
            ana = null;
            droppedControllerReconnects += c.reconnectCount();
            c.removeAsyncEventListener(anaListener);
            c.removeStateListener(stateListener);
            c.close();
            reconnectAt = System.nanoTime() + reconnectDelay.toNanos();
            LOG.log(
                    Level.WARNING,
                    "path " + address() + " lost (" + lastFailure + "); reconnecting in " + reconnectDelay.toMillis()
                            + " ms");
            owner.pathChanged(this);
            return;
        }
        if (System.nanoTime() - reconnectAt < 0) {
            return;
        }
        try {
            connect();
            reconnects++;
            LOG.log(Level.INFO, () -> "path " + address() + " connected again (" + controller + ")");
        } catch (NvmeException | RuntimeException e) {
            lastFailure = e.getMessage();
            reconnectAt = System.nanoTime() + reconnectDelay.toNanos();
            LOG.log(
                    e instanceof NotSameNamespaceException ? Level.WARNING : Level.INFO,
                    () -> "reconnecting path " + address() + " failed: " + e.getMessage());
        }
    }

    private void submitWork(Runnable r) {
        if (!closed) {
            try {
                worker.execute(r);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // closing
            }
        }
    }

    // ---- state ----

    String address() {
        NvmeUri.Address a = uri.addresses().get(0);
        return uri.transport() + "://" + a;
    }

    Controller controller() {
        return controller;
    }

    AnaState anaState() {
        return ana;
    }

    String lastFailure() {
        return lastFailure;
    }

    PathStatus status() {
        Controller c = controller;
        Namespace n = namespace;
        return new PathStatus(
                address(),
                c != null && c.state() == ControllerState.LIVE && n != null && n.isActive(),
                ana,
                usable(),
                c != null ? c.cntlid() : -1,
                commands,
                reconnects + droppedControllerReconnects + (c != null ? c.reconnectCount() : 0));
    }

    /** Stops the worker and closes the controller (its commands in flight fail). */
    void close() {
        closed = true;
        worker.shutdownNow();
        try {
            worker.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Controller c = controller;
        namespace = null;
        if (c != null) {
            c.close();
        }
    }

    private static String nsid(Namespace n) {
        return Integer.toUnsignedString(n.nsid());
    }

    private static String name(AnaState s) {
        return s == null ? "not reported" : s.configName();
    }

    @Override
    public String toString() {
        return "path " + address() + " (" + name(ana) + (usable() ? "" : ", unusable") + ")";
    }
}

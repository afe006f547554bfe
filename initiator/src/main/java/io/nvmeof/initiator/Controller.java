package io.nvmeof.initiator;

import io.nvmeof.core.spi.IoMode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A connected NVMe-oF controller: its admin queue, its I/O queues and its namespaces. Made by {@link Nvme#connect};
 * {@link #close()} shuts it down in order (nvmeof-protocol.md §7.3).
 *
 * <p>Bring-up follows the Linux host's sequence and the conservative initiator profile (nvmeof-protocol.md §7.1,
 * §7.8), see {@link ControllerBringUp}. Keep Alive goes out every KATO/2 ({@link ControllerTimer}); namespace changes
 * arrive as asynchronous events ({@link AsyncEvents}, {@link NamespaceScanner}).
 *
 * <p>Failure model: a dead connection, a Keep Alive failure or a command timeout starts the Linux host's error
 * recovery and <em>reconnect</em> ({@link ControllerRecovery}, nvmeof-protocol.md §7.3): the state goes LIVE →
 * RECONNECTING, I/O waits in its command slots, an attempt every {@link #reconnectDelay()}, and once the controller is
 * back (same subsystem, namespaces the same by NGUID/EUI64/UUID) every command that did not complete is sent again
 * ({@link RetryRules}). After {@link #fastIoFailTimeout()} waiting I/O fails with {@link NvmeFastIoFailException};
 * after {@link #ctrlLossTimeout()} the controller is FAILED and every command fails with
 * {@link NvmeControllerLostException}. With ctrl_loss_tmo 0 the first failure is final: every outstanding command
 * completes with {@link NvmeTransportException} (or {@link NvmeTimeoutException} for the one that timed out). States:
 * {@link #state()}, {@link ControllerStateListener}. This object, its {@link Namespace}s and {@link BlockDevice}s stay
 * valid across reconnects.
 *
 * <p>This class is the public face and owns its parts; each part of the work is a package-private class of its own:
 * {@link ControllerBringUp}, {@link ControllerTeardown} (failure and shutdown), {@link AdminCommands},
 * {@link ControllerRegisters}, {@link ControllerQueues}, {@link ControllerTimer}, {@link AsyncEvents},
 * {@link NamespaceScanner}, {@link DiscoveryLogReader}.
 *
 * <p>Thread-safe. Namespaces may be used from any number of threads.
 */
public final class Controller implements AutoCloseable {
    private static final AtomicInteger IDS = new AtomicInteger();

    private final NvmeUri uri;
    private final ConnectOptions options;
    private final HostIdentity host;
    private final long timeoutNanos;
    private final AdminCommands commands;
    private final ControllerRegisters registers;
    private final ControllerQueues queues;
    private final ControllerTimer timer;
    private final NamespaceScanner namespaces;
    private final AsyncEvents events;
    private final ControllerStates states;
    private final ControllerRecovery recovery;
    /**
     * DH-HMAC-CHAP with the options' or the URI's secrets, or null without any (docs/security.md); the first bring-up
     * and every reconnect authenticate with it.
     */
    private final HostAuthentication authentication;

    private final ControllerTeardown teardown;

    /** CRDT1..3 in milliseconds once ACRE is enabled (Host Behavior Support), else null (RetryRules). */
    volatile int[] commandRetryDelays;

    // Set by ControllerBringUp on the connecting thread before open() returns, and by a reconnect before the gates
    // open again.
    /** The controller ID the admin Connect returned. */
    volatile int cntlid;
    /** The raw Identify Controller page. */
    volatile ByteBuffer identifyPage;
    /** Identify Controller, decoded; null while connecting. */
    volatile ControllerIdentity identity;
    /** Entries per I/O queue. */
    int ioQueueSize;
    /** In-capsule data bytes allowed on I/O queues. */
    int maxInCapsule;

    private Controller(NvmeUri uri, ConnectOptions options) {
        this.uri = uri;
        this.options = options;
        this.host = options.hostIdentity() != null ? options.hostIdentity() : HostIdentity.of(uri.hostNqn());
        this.timeoutNanos = uri.timeout().toNanos();
        int id = IDS.incrementAndGet();
        this.commands = new AdminCommands(this);
        this.registers = new ControllerRegisters(commands);
        this.queues = new ControllerQueues(this);
        this.timer = new ControllerTimer(this, "nvmeof-ctrl-" + id + "-timer");
        this.namespaces = new NamespaceScanner(this);
        this.events = new AsyncEvents(this, namespaces, "nvmeof-ctrl-" + id + "-events");
        this.states = new ControllerStates(this, options.stateListeners(), "nvmeof-ctrl-" + id + "-state");
        this.recovery = new ControllerRecovery(this, "nvmeof-ctrl-" + id + "-reconnect");
        this.teardown = new ControllerTeardown(this);
        DhchapKeys keys = options.dhchap() != null ? options.dhchap() : uri.dhchap();
        this.authentication = keys == null ? null : new HostAuthentication(this, keys);
    }

    /** Connects and brings the controller up; on any failure everything opened so far is closed again. */
    static Controller open(NvmeUri uri, ConnectOptions options) throws NvmeException {
        if (uri.isMultipath()) {
            throw new IllegalArgumentException(
                    "'" + uri + "' gives " + uri.addresses().size() + " addresses: a "
                            + "controller has one; use io.nvmeof.initiator.multipath.MultipathNamespace.connect for the "
                            + "namespace over all of them, or NvmeUri.paths() for one controller each");
        }
        Controller c = new Controller(uri, options);
        new ControllerBringUp(c).open();
        return c;
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
        return new DiscoveryLogReader(commands).read();
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
        return open(uri.forEntry(entry), options.withHostIdentity(host));
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
        return commands.getLogPage(lid, nsid, offset, length, false);
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
        return ControllerIdentity.versionString(registers.vs());
    }

    /** CAP (nvmeof-protocol.md §2.3). */
    public long capabilities() {
        return registers.cap();
    }

    public boolean isDiscovery() {
        return uri.isDiscovery();
    }

    /** I/O queues granted and connected. */
    public int ioQueueCount() {
        return queues.io().length;
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

    /** keep_alive_tmo (KATO) in milliseconds: the options', else the URI's; 0 when off. */
    public int keepAliveTimeoutMillis() {
        return options.keepAliveTmo() != null
                ? (int) Math.min(Integer.MAX_VALUE, options.keepAliveTmo().toMillis())
                : uri.katoMillis();
    }

    /** reconnect_delay: the options', else the URI's. */
    public Duration reconnectDelay() {
        return options.reconnectDelay() != null ? options.reconnectDelay() : uri.reconnectDelay();
    }

    /**
     * ctrl_loss_tmo: the options', else the URI's; negative: for ever ({@link NvmeUri#NEVER}); zero: no reconnect.
     * Always zero for a discovery controller.
     */
    public Duration ctrlLossTimeout() {
        if (uri.isDiscovery()) {
            return Duration.ZERO;
        }
        return options.ctrlLossTmo() != null ? options.ctrlLossTmo() : uri.ctrlLossTmo();
    }

    /** fast_io_fail_tmo: the options', else the URI's; negative: off. */
    public Duration fastIoFailTimeout() {
        return options.fastIoFailTmo() != null ? options.fastIoFailTmo() : uri.fastIoFailTmo();
    }

    /** Whether a lost connection is reconnected (ctrl_loss_tmo ≠ 0 and not a discovery controller). */
    boolean reconnects() {
        return !ctrlLossTimeout().isZero();
    }

    // ---- state (ControllerState) ----

    /** The controller's state now (see {@link ControllerState}). */
    public ControllerState state() {
        return states.get();
    }

    /**
     * Adds a listener told each later state change, on the controller's state thread (see
     * {@link ControllerStateListener}). To see CONNECTING and the first LIVE too, use
     * {@link ConnectOptions.Builder#stateListener}.
     */
    public void addStateListener(ControllerStateListener listener) {
        states.addListener(Objects.requireNonNull(listener));
    }

    public void removeStateListener(ControllerStateListener listener) {
        states.removeListener(listener);
    }

    /** The per-command timeout. */
    public Duration commandTimeout() {
        return uri.timeout();
    }

    /** The active namespaces, by ascending NSID (a snapshot). */
    public List<Namespace> namespaces() {
        return List.copyOf(namespaces.current().values());
    }

    /**
     * The URI's namespace ({@code nsid=}), or else the first active one.
     *
     * @throws NvmeException if the controller has no active namespace
     */
    public Namespace namespace() throws NvmeException {
        return uri.nsid() != 0 ? namespaces.active(uri.nsid()) : namespaces.first();
    }

    /**
     * The active namespace {@code nsid}.
     *
     * @throws NvmeException if it is not active
     */
    public Namespace namespace(int nsid) throws NvmeException {
        return namespaces.active(nsid);
    }

    /** Adds a listener for namespace changes (see {@link NamespaceChangeListener} for the thread it runs on). */
    public void onNamespaceChange(NamespaceChangeListener listener) {
        namespaces.addListener(Objects.requireNonNull(listener));
    }

    public void removeNamespaceChangeListener(NamespaceChangeListener listener) {
        namespaces.removeListener(listener);
    }

    /**
     * Adds a listener for every asynchronous event the controller reports (see {@link AsyncEventListener}), e.g. ANA
     * change notices. The controller enables the events of OAES it knows (namespace attribute, firmware activation,
     * ANA change, discovery log change).
     */
    public void onAsyncEvent(AsyncEventListener listener) {
        events.addListener(Objects.requireNonNull(listener));
    }

    public void removeAsyncEventListener(AsyncEventListener listener) {
        events.removeListener(listener);
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
        return queues.allocateBuffer(size);
    }

    // ---- failures (nvmeof-protocol.md §7.3) ----

    /** The reason the controller failed, or null while it works. */
    public NvmeException failure() {
        return teardown.failure();
    }

    /** Whether the controller is connected and has not failed. */
    public boolean isOpen() {
        return teardown.isOpen();
    }

    /** Successful reconnects so far (the perf report counts them). */
    public long reconnectCount() {
        return recovery.reconnects();
    }

    /** The states, for the recovery. */
    ControllerStates states() {
        return states;
    }

    ControllerRecovery recovery() {
        return recovery;
    }

    int[] commandRetryDelays() {
        return commandRetryDelays;
    }

    // ---- in-band authentication (docs/security.md) ----

    /**
     * Runs DH-HMAC-CHAP again on the admin queue and then on every I/O queue, as the Linux host does when its secret
     * changes (re-authentication, NVMe Base 2.0 §8.13). I/O may go on meanwhile; a failure fails the controller.
     * Only while LIVE: a reconnect authenticates every new queue itself.
     *
     * @throws IllegalStateException  if this controller has no DH-HMAC-CHAP secret
     * @throws NvmeTransportException if the controller is not LIVE (reconnecting, failed or closed)
     */
    public void reauthenticate() throws NvmeException {
        if (authentication == null) {
            throw new IllegalStateException("no dhchap_secret: this controller does not authenticate");
        }
        authentication.reauthenticate();
    }

    /** The host's side of DH-HMAC-CHAP, or null without a secret. */
    HostAuthentication authentication() {
        return authentication;
    }

    // ---- parts, for each other ----

    ConnectOptions options() {
        return options;
    }

    AdminCommands commands() {
        return commands;
    }

    ControllerRegisters registers() {
        return registers;
    }

    ControllerQueues queues() {
        return queues;
    }

    ControllerTimer timer() {
        return timer;
    }

    NamespaceScanner namespaceScanner() {
        return namespaces;
    }

    AsyncEvents asyncEvents() {
        return events;
    }

    /** Failure and shutdown: the closed, closing and failed state the parts ask about. */
    ControllerTeardown teardown() {
        return teardown;
    }

    /** The I/O queue for the calling thread: by thread ID, so one thread always uses one queue. */
    CommandQueue ioQueue() {
        return queues.forCurrentThread();
    }

    /** I/O queue {@code index} (0-based; modulo the queues there are, should a reconnect have opened fewer). */
    CommandQueue ioQueue(int index) {
        return queues.at(index);
    }

    CommandQueue[] ioQueues() {
        return queues.io();
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    /** Waits for a command future (the blocking forms of {@link Namespace} and {@link BlockDevice}). */
    static <T> T await(java.util.concurrent.CompletableFuture<T> f, long timeoutNanos) throws NvmeException {
        return AdminCommands.await(f, timeoutNanos, null);
    }

    /**
     * Waits for an I/O command's future: past the command timeout too while the controller reconnects (the command
     * is parked, and ctrl_loss_tmo or close() bounds the wait).
     */
    <T> T awaitIo(java.util.concurrent.CompletableFuture<T> f) throws NvmeException {
        return AdminCommands.await(f, timeoutNanos, recovery::mayStillComplete);
    }

    String hostPort() {
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
        teardown.close();
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
                queues.io().length,
                ioQueueSize);
    }
}

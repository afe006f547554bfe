package io.nvmeof.target;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.target.config.AnaStateConfig;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.namespace.ChunkMemory;
import io.nvmeof.target.namespace.ChunkPool;
import io.nvmeof.target.namespace.MemoryBudget;
import io.nvmeof.target.namespace.RamNamespace;
import io.nvmeof.target.stats.TargetStats;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A RAM-backed NVMe-over-Fabrics target: NVM subsystems with their namespaces, the discovery subsystem, and the
 * controllers hosts create on them, reached through any transport found with {@link Transport#find}.
 *
 * <pre>
 *   NvmeTarget target = NvmeTarget.start(config);   // builds everything, then listens on every ListenerConfig
 *   target.boundAddresses();                        // where it listens (real ports when 0 was asked for)
 *   target.close();                                 // closes listeners and controllers, frees namespace RAM
 * </pre>
 * {@link #create} builds without listening; {@link #acceptorFor} attaches queues of an in-JVM transport (tests).
 * Thread-safe: queues on different threads share subsystems, namespaces and controllers without locks on the I/O path.
 */
public final class NvmeTarget implements AutoCloseable {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");

    private final TargetConfig config;
    private final MemoryBudget budget;
    /** Namespace RAM as listeners that register memory see it (RDMA, zero copy). */
    private final ChunkMemory chunkMemory = new ChunkMemory();
    /** RAM chunks made ahead for first writes (within the budget), so they do not allocate on a queue thread. */
    private final ChunkPool chunkPool;

    private final Subsystem discovery = Subsystem.discovery();
    private final CopyOnWriteArrayList<Subsystem> subsystems = new CopyOnWriteArrayList<>();
    private final CopyOnWriteArrayList<PortInfo> ports = new CopyOnWriteArrayList<>();
    private final CopyOnWriteArrayList<TargetListener> listeners = new CopyOnWriteArrayList<>();
    /** GENCTR of the discovery log: bumped whenever what it lists changes (nvmeof-protocol.md §3.3). */
    private final AtomicLong discoveryGeneration = new AtomicLong(1);
    /** Metrics: every queue's counters and the admin-path events (StatsRegistry). */
    private final StatsRegistry stats = new StatsRegistry();

    private final ScheduledThreadPoolExecutor scheduler;
    private final QueueAcceptor acceptor = this::accept;
    /** The hosts' TLS PSKs, which listeners with TLS choose from by the identity a host offers. */
    private final TlsKeys tlsKeys = new TlsKeys();

    private volatile boolean started;
    private volatile boolean closed;

    private NvmeTarget(TargetConfig config) {
        this.config = config;
        this.budget = new MemoryBudget(config.memoryBudgetBytes());
        this.chunkPool = new ChunkPool(budget, chunkMemory, ChunkPool.configuredChunks());
        config.tlsKeys().forEach(tlsKeys::put);
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "nvmeof-target-keepalive");
            t.setDaemon(true);
            return t;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
    }

    /** Builds the subsystems and namespaces of {@code config} without listening. Namespaces cost no RAM until written. */
    public static NvmeTarget create(TargetConfig config) {
        NvmeTarget target = new NvmeTarget(config);
        try {
            Set<UUID> uuids = new HashSet<>();
            for (SubsystemConfig sc : config.subsystems()) {
                if (Nqn.DISCOVERY.equals(sc.nqn())) {
                    throw new IllegalArgumentException("the discovery NQN cannot name an NVM subsystem: " + sc.nqn());
                }
                String serial = sc.serial() != null ? sc.serial() : derivedSerial(sc.nqn());
                String model = sc.model() != null ? sc.model() : ControllerProfile.DEFAULT_MODEL;
                Subsystem s = new Subsystem(sc.nqn(), false, sc.allowAnyHost(), sc.hosts(), serial, model);
                if (sc.listeners() != null) {
                    s.restrictListeners(sc.listeners()); // listener numbers are the PORTIDs start() gives them
                }
                sc.hostAuth().forEach(a -> s.setHostAuth(a.hostNqn(), a));
                target.subsystems.add(s);
                for (NamespaceConfig nc : sc.namespaces()) {
                    RamNamespace ns = target.newNamespace(s, nc);
                    if (!uuids.add(ns.uuid())) {
                        throw new IllegalArgumentException("namespace UUID " + ns.uuid() + " used twice (" + sc.nqn()
                                + " nsid " + ns.nsid() + "): the Linux host would drop one of them");
                    }
                    assignAnaGroup(s, ns.nsid(), nc.anaGroup());
                    s.addNamespace(ns);
                }
                for (AnaStateConfig a : sc.anaStates()) {
                    s.setAnaState(a.listener(), a.group(), a.state());
                }
            }
        } catch (RuntimeException e) {
            target.close();
            throw e;
        }
        LOG.log(
                Level.INFO,
                "target created: " + target.subsystems.size() + " subsystem(s), memory budget "
                        + config.memoryBudgetBytes() + " bytes");
        return target;
    }

    /** {@link #create} then {@link #start()}. */
    public static NvmeTarget start(TargetConfig config) throws IOException {
        NvmeTarget target = create(config);
        try {
            return target.start();
        } catch (IOException | RuntimeException e) {
            target.close();
            throw e;
        }
    }

    /**
     * Binds every {@link ListenerConfig} through its transport. If one cannot be bound, the ones already bound are
     * closed again and the exception names the address.
     *
     * @throws IOException              if an address cannot be bound
     * @throws IllegalArgumentException if a transport is not on the class path
     * @throws IllegalStateException    if already started or closed
     */
    public synchronized NvmeTarget start() throws IOException {
        if (closed) {
            throw new IllegalStateException("the target is closed");
        }
        if (started) {
            throw new IllegalStateException("the target is already started");
        }
        started = true;
        int portId = 1;
        for (ListenerConfig lc : config.listeners()) {
            try {
                openListener(lc, portId++);
            } catch (IOException | RuntimeException e) {
                closeListeners();
                throw e;
            }
        }
        return this;
    }

    /** Binds one listener with PORTID {@code portId}, lists it in the discovery log and returns it. */
    private TargetListener openListener(ListenerConfig lc, int portId) throws IOException {
        Transport transport = Transport.find(lc.transport());
        if (!transport.isAvailable()) {
            throw new IOException(
                    "transport " + lc.transport() + " is not available: " + transport.unavailableReason());
        }
        int queueSize = lc.maxQueueSize() > 0 ? lc.maxQueueSize() : ListenerOptions.DEFAULT_MAX_QUEUE_SIZE;
        int inCapsule =
                lc.inCapsuleDataSize() > 0 ? lc.inCapsuleDataSize() : ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE;
        ListenerOptions options = new ListenerOptions(
                new InetSocketAddress(lc.address(), lc.port()),
                portId,
                queueSize,
                inCapsule,
                0,
                true,
                lc.ioMode(),
                lc.secureChannel(),
                tlsKeys);
        if (lc.secureChannel().tls() && tlsKeys.isEmpty()) {
            LOG.log(
                    Level.WARNING,
                    "listener " + lc.address() + ":" + lc.port() + " has TLS "
                            + lc.secureChannel().configName()
                            + " but no host has a TLS key yet (--tls-key, \"tlsKeys\", nvmf_subsystem_add_host --psk)");
        }
        TargetListener listener;
        try {
            listener = transport.listen(options, acceptor);
        } catch (IOException e) {
            throw new IOException(
                    "cannot listen on " + lc.transport() + "://" + lc.address() + ":" + lc.port() + ": "
                            + e.getMessage(),
                    e);
        }
        listeners.add(listener);
        attachMemory(listener);
        registerPort(listener.portInfo());
        LOG.log(
                Level.INFO,
                "listening on " + lc.transport() + " " + listener.localAddress() + " (port ID " + portId + ", "
                        + options.ioMode()
                        + (lc.secureChannel().tls()
                                ? ", TLS " + lc.secureChannel().configName()
                                : "")
                        + ")");
        return listener;
    }

    /** Lets a listener that wants the namespace memory (RDMA: to register it) see every chunk. */
    private void attachMemory(TargetListener listener) {
        if (listener.memoryObserver() != null) {
            chunkMemory.attach(listener.memoryObserver());
        }
    }

    /** The hosts' TLS PSKs: add and remove keys at run time; new handshakes see them at once. */
    public TlsKeys tlsKeys() {
        return tlsKeys;
    }

    /** The namespace memory and its observers (for tests and diagnostics). */
    public ChunkMemory chunkMemory() {
        return chunkMemory;
    }

    /** The addresses actually bound, in {@link TargetConfig#listeners()} order. */
    public List<InetSocketAddress> boundAddresses() {
        List<InetSocketAddress> out = new ArrayList<>();
        for (TargetListener l : listeners) {
            out.add(l.localAddress());
        }
        return out;
    }

    public List<TargetListener> listeners() {
        return List.copyOf(listeners);
    }

    /**
     * An acceptor for queues that arrive on {@code port} from a transport the target did not start itself (an in-JVM
     * transport in tests). The port is listed in the discovery log from now on.
     */
    public QueueAcceptor acceptorFor(PortInfo port) {
        registerPort(port);
        return acceptor;
    }

    private QueueHandler accept(QueueChannel channel) {
        QueueSession session = new QueueSession(this, channel);
        stats.connectionAccepted();
        if (closed) {
            channel.close();
        }
        return session;
    }

    private void registerPort(PortInfo port) {
        for (PortInfo p : ports) {
            if (p.transportType() == port.transportType()
                    && p.portId() == port.portId()
                    && p.address().equals(port.address())
                    && p.serviceId().equals(port.serviceId())) {
                return;
            }
        }
        ports.add(port);
        discoveryChanged();
    }

    // ---- subsystems and namespaces ----

    /** The NVM subsystems (not the discovery subsystem), in configuration order. */
    public List<Subsystem> subsystems() {
        return List.copyOf(subsystems);
    }

    /** The NVM subsystem named {@code nqn}, or null. */
    public Subsystem subsystem(String nqn) {
        for (Subsystem s : subsystems) {
            if (s.nqn().equals(nqn)) {
                return s;
            }
        }
        return null;
    }

    public Subsystem discoverySubsystem() {
        return discovery;
    }

    /** The subsystem a Connect names: an NVM subsystem or the well-known discovery NQN (nvmeof-protocol.md §2.2). */
    Subsystem subsystemForConnect(String nqn) {
        return Nqn.DISCOVERY.equals(nqn) ? discovery : subsystem(nqn);
    }

    /**
     * Adds a namespace at run time (NSID 0: the lowest free one). Connected controllers that enabled namespace notices
     * get a "namespace attribute changed" event and find the NSID in log 0x04 (nvmeof-protocol.md §3.6).
     */
    public RamNamespace addNamespace(String subsystemNqn, NamespaceConfig nc) {
        Subsystem s = requireSubsystem(subsystemNqn);
        RamNamespace ns;
        synchronized (s) {
            ns = newNamespace(s, nc);
            assignAnaGroup(s, ns.nsid(), nc.anaGroup());
            s.addNamespace(ns);
        }
        LOG.log(Level.INFO, "added " + ns + " to " + s.nqn());
        for (Controller c : s.controllers()) {
            c.namespaceChanged(ns.nsid());
        }
        return ns;
    }

    /** Removes a namespace and frees its RAM (reads in flight keep their chunks until the transport releases them). */
    public boolean removeNamespace(String subsystemNqn, int nsid) {
        Subsystem s = requireSubsystem(subsystemNqn);
        RamNamespace ns = s.removeNamespace(nsid);
        if (ns == null) {
            return false;
        }
        ns.free();
        s.ana().release(nsid);
        LOG.log(Level.INFO, "removed " + ns + " from " + s.nqn());
        for (Controller c : s.controllers()) {
            c.namespaceChanged(nsid);
        }
        return true;
    }

    /**
     * Sets the ANA state of {@code group} on the listener with PORTID {@code portId} (the listeners of the config are
     * PORTIDs 1, 2, … in order) in subsystem {@code subsystemNqn}; the controllers on that listener get the ANA change
     * notice (see {@link AnaGroups#setState}).
     */
    public boolean setAnaState(String subsystemNqn, int portId, int group, AnaState state) {
        boolean changed = requireSubsystem(subsystemNqn).setAnaState(portId, group, state);
        if (changed) {
            LOG.log(
                    Level.INFO,
                    "ANA group " + group + " of " + subsystemNqn + " is " + state.configName() + " on port ID "
                            + portId);
        }
        return changed;
    }

    /** Moves namespace {@code nsid} of {@code subsystemNqn} into ANA group {@code group} (see {@link AnaGroups#setGroup}). */
    public boolean setAnaGroup(String subsystemNqn, int nsid, int group) {
        boolean changed = requireSubsystem(subsystemNqn).setAnaGroup(nsid, group);
        if (changed) {
            LOG.log(Level.INFO, "namespace " + nsid + " of " + subsystemNqn + " is in ANA group " + group);
        }
        return changed;
    }

    // ---- changes at run time (called by the JSON-RPC layer, io.nvmeof.target.rpc) ----

    /**
     * Adds an NVM subsystem with the namespaces of {@code sc}. Hosts see it in the discovery log at once (GENCTR
     * bumped, discovery log change notice to connected discovery controllers, nvmeof-protocol.md §3.3, §3.6).
     *
     * @throws IllegalArgumentException if the NQN is taken or invalid, or a namespace cannot be built (nothing added)
     */
    public Subsystem addSubsystem(SubsystemConfig sc) {
        Subsystem s;
        synchronized (this) {
            if (Nqn.DISCOVERY.equals(sc.nqn()) || subsystem(sc.nqn()) != null) {
                throw new IllegalArgumentException("subsystem " + sc.nqn() + " already exists");
            }
            String serial = sc.serial() != null ? sc.serial() : derivedSerial(sc.nqn());
            String model = sc.model() != null ? sc.model() : ControllerProfile.DEFAULT_MODEL;
            s = new Subsystem(sc.nqn(), false, sc.allowAnyHost(), sc.hosts(), serial, model);
            if (sc.listeners() != null) {
                s.restrictListeners(sc.listeners());
            }
            for (io.nvmeof.target.config.HostAuth a : sc.hostAuth()) {
                s.setHostAuth(a.hostNqn(), a);
            }
            try {
                for (NamespaceConfig nc : sc.namespaces()) {
                    RamNamespace ns = newNamespace(s, nc);
                    assignAnaGroup(s, ns.nsid(), nc.anaGroup());
                    s.addNamespace(ns);
                }
            } catch (RuntimeException e) {
                s.namespaces().forEach(RamNamespace::free);
                throw e;
            }
            subsystems.add(s);
        }
        LOG.log(Level.INFO, "added " + s);
        discoveryChanged();
        return s;
    }

    /** Removes an NVM subsystem: its controllers are torn down, its namespace RAM freed; false if there is none. */
    public boolean removeSubsystem(String nqn) {
        Subsystem s = subsystem(nqn);
        if (s == null || !subsystems.remove(s)) {
            return false;
        }
        for (Controller c : s.controllers()) {
            c.teardown("subsystem removed", true);
        }
        for (RamNamespace ns : s.namespaces()) {
            s.removeNamespace(ns.nsid());
            ns.free();
        }
        LOG.log(Level.INFO, "removed " + s);
        discoveryChanged();
        return true;
    }

    /** Lets any host connect, or only the listed ones (controllers of hosts no longer allowed are torn down). */
    public void setAllowAnyHost(String nqn, boolean allow) {
        Subsystem s = requireSubsystem(nqn);
        s.setAllowAnyHost(allow);
        accessChanged(s);
    }

    /** Adds ({@code allow}) or removes a host NQN of a subsystem's allow-list; false if nothing changed. */
    public boolean setHostAllowed(String nqn, String hostNqn, boolean allow) {
        Subsystem s = requireSubsystem(nqn);
        boolean changed = s.changeHost(hostNqn, allow);
        if (changed) {
            accessChanged(s);
        }
        return changed;
    }

    /**
     * Sets the DH-HMAC-CHAP settings of a host on a subsystem (the host is allowed from then on), or removes them with
     * null. Queues already connected keep their state; new Connects and re-authentications use the new keys
     * (docs/security.md).
     */
    public void setHostAuth(String nqn, String hostNqn, io.nvmeof.target.config.HostAuth auth) {
        Subsystem s = requireSubsystem(nqn);
        if (auth != null && !auth.hostNqn().equals(hostNqn)) {
            throw new IllegalArgumentException("settings for " + auth.hostNqn() + " given for host " + hostNqn);
        }
        s.setHostAuth(hostNqn, auth);
        LOG.log(
                Level.INFO,
                "DH-HMAC-CHAP: host " + hostNqn + " on " + nqn + ": "
                        + (auth == null
                                ? "keys removed"
                                : auth.ctrlKey() == null ? "host key set" : "host and controller keys set"));
        discoveryChanged();
    }

    /** Tears down the controllers of hosts {@code s} no longer allows, and tells discovery controllers. */
    private void accessChanged(Subsystem s) {
        for (Controller c : s.controllers()) {
            if (!s.allows(c.hostNqn())) {
                c.teardown("host " + c.hostNqn() + " no longer allowed", true);
            }
        }
        discoveryChanged();
    }

    /**
     * Makes subsystem {@code nqn} reachable on the listener with PORTID {@code portId} (SPDK's
     * nvmf_subsystem_add_listener): the discovery log lists it there from now on and connected discovery controllers
     * are told. False if it was reachable there already.
     */
    public boolean addSubsystemListener(String nqn, int portId) {
        Subsystem s = requireSubsystem(nqn);
        if (!s.addListener(portId)) {
            return false;
        }
        LOG.log(Level.INFO, s + " is reachable on port ID " + portId);
        discoveryChanged();
        return true;
    }

    /**
     * Makes subsystem {@code nqn} unreachable on the listener with PORTID {@code portId} (SPDK's
     * nvmf_subsystem_remove_listener): its controllers connected there are torn down, the discovery log drops the
     * entry and connected discovery controllers are told. The listener itself stays open (see {@link
     * #listenerInUse}). False if the subsystem was not reachable there.
     */
    public boolean removeSubsystemListener(String nqn, int portId) {
        Subsystem s = requireSubsystem(nqn);
        List<Integer> all = new ArrayList<>();
        ports.forEach(p -> all.add(p.portId()));
        if (!s.removeListener(portId, all)) {
            return false;
        }
        for (Controller c : s.controllers()) {
            if (c.port() != null && c.port().portId() == portId) {
                c.teardown("listener port ID " + portId + " removed from " + nqn, true);
            }
        }
        LOG.log(Level.INFO, s + " is no longer reachable on port ID " + portId);
        discoveryChanged();
        return true;
    }

    /** Whether some NVM subsystem is reachable on the listener with PORTID {@code portId}. */
    public boolean listenerInUse(int portId) {
        for (Subsystem s : subsystems) {
            if (s.reachableOn(portId)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Opens a listener at run time with the next free PORTID. Subsystems that are reachable on any listener (from
     * flags or a config that names none) are reachable on it; others once {@link #addSubsystemListener} adds it. The
     * discovery log lists it from now on.
     */
    public synchronized TargetListener addListener(ListenerConfig lc) throws IOException {
        if (closed) {
            throw new IllegalStateException("the target is closed");
        }
        int portId = 1;
        for (PortInfo p : ports) {
            portId = Math.max(portId, p.portId() + 1);
        }
        return openListener(lc, portId);
    }

    /**
     * Opens a listener at run time that serves only the subsystems later added to it ({@link #addSubsystemListener}),
     * as SPDK's nvmf_subsystem_add_listener does: subsystems that were reachable on every listener (flags, a config
     * naming no listeners) keep the listeners they have now and are not reachable on this one.
     */
    public synchronized TargetListener addListenerForSubsystems(ListenerConfig lc) throws IOException {
        List<Integer> now = new ArrayList<>();
        ports.forEach(p -> now.add(p.portId()));
        for (Subsystem s : subsystems) {
            if (s.anyListener()) {
                s.restrictListeners(now);
            }
        }
        return addListener(lc);
    }

    /** Closes the listener with PORTID {@code portId} (and so its queues); false if there is none. */
    public synchronized boolean removeListener(int portId) {
        for (TargetListener l : listeners) {
            if (l.portInfo().portId() == portId) {
                listeners.remove(l);
                l.close();
                if (l.memoryObserver() != null) {
                    chunkMemory.detach(l.memoryObserver());
                }
                ports.removeIf(p -> p.portId() == portId);
                for (Subsystem s : subsystems) {
                    s.listenerClosed(portId); // the PORTID may go to a new listener later
                }
                LOG.log(Level.INFO, "closed listener " + l.localAddress() + " (port ID " + portId + ")");
                discoveryChanged();
                return true;
            }
        }
        return false;
    }

    /**
     * Gives namespace {@code nsid} a new size. Its blocks are not kept: this is for namespaces whose data does not
     * matter (SPDK's null bdevs). Controllers get the namespace attribute changed notice and re-read Identify Namespace
     * (NSZE, NCAP).
     */
    public RamNamespace resizeNamespace(String subsystemNqn, int nsid, long newSizeBytes) {
        Subsystem s = requireSubsystem(subsystemNqn);
        RamNamespace ns;
        RamNamespace old;
        synchronized (s) {
            old = s.namespace(nsid);
            if (old == null) {
                throw new IllegalArgumentException("no namespace " + nsid + " in " + subsystemNqn);
            }
            ns = new RamNamespace(
                    nsid, newSizeBytes, old.blockSize(), old.uuid(), old.readOnly(), budget, chunkMemory, chunkPool);
            s.replaceNamespace(ns);
        }
        old.free();
        LOG.log(Level.INFO, "resized " + ns + " in " + s.nqn());
        for (Controller c : s.controllers()) {
            c.namespaceChanged(nsid);
        }
        return ns;
    }

    /** Puts a namespace about to be added into its ANA group, unless the NSID is taken (addNamespace then refuses it). */
    private static void assignAnaGroup(Subsystem s, int nsid, int group) {
        synchronized (s) {
            if (s.namespace(nsid) == null) {
                s.ana().assign(nsid, group);
            }
        }
    }

    private Subsystem requireSubsystem(String nqn) {
        Subsystem s = subsystem(nqn);
        if (s == null) {
            throw new IllegalArgumentException("no subsystem " + nqn);
        }
        return s;
    }

    private RamNamespace newNamespace(Subsystem s, NamespaceConfig nc) {
        int nsid = nc.nsid() != 0 ? nc.nsid() : s.freeNsid();
        if (nsid == 0) {
            throw new IllegalArgumentException("no free NSID left in " + s.nqn());
        }
        UUID uuid = nc.uuid() != null ? nc.uuid() : RamNamespace.derivedUuid(s.nqn(), nsid);
        if (nc.file() != null) { // kept in a memory-mapped file (RamNamespace.fileBacked)
            return RamNamespace.fileBacked(
                    nsid, nc.sizeBytes(), nc.blockSize(), uuid, nc.readOnly(), budget, chunkMemory, nc.file());
        }
        return new RamNamespace(
                nsid, nc.sizeBytes(), nc.blockSize(), uuid, nc.readOnly(), budget, chunkMemory, chunkPool);
    }

    /** Identify SN for a subsystem without one: 20 hex digits of a name-based UUID of its NQN, stable across restarts. */
    private static String derivedSerial(String nqn) {
        return UUID.nameUUIDFromBytes(nqn.getBytes(StandardCharsets.UTF_8))
                .toString()
                .replace("-", "")
                .substring(0, 20);
    }

    // ---- discovery (nvmeof-protocol.md §3.3, §3.7) ----

    /**
     * The discovery log for {@code hostNqn}: per port, the discovery subsystem itself (SUBTYPE 3) and each NVM
     * subsystem reachable on that port that the host may use (SUBTYPE 2).
     */
    ByteBuffer discoveryLog(String hostNqn, QueueChannel channel) {
        long generation = discoveryGeneration.get();
        String local = hostOf(channel.localAddress());
        List<LogPages.DiscoveryEntry> entries = new ArrayList<>();
        for (PortInfo p : ports) {
            String address = isWildcard(p.address()) && local != null ? local : p.address();
            entries.add(new LogPages.DiscoveryEntry(p, address, LogPages.SUBTYPE_CURRENT_DISCOVERY, Nqn.DISCOVERY));
            for (Subsystem s : subsystems) {
                if (s.allows(hostNqn) && s.reachableOn(p.portId())) {
                    entries.add(new LogPages.DiscoveryEntry(p, address, LogPages.SUBTYPE_NVM, s.nqn()));
                }
            }
        }
        return LogPages.discovery(generation, entries);
    }

    /** GENCTR of the discovery log. */
    public long discoveryGeneration() {
        return discoveryGeneration.get();
    }

    private void discoveryChanged() {
        discoveryGeneration.incrementAndGet();
        for (Controller c : discovery.controllers()) {
            c.discoveryChanged();
        }
    }

    private static String hostOf(SocketAddress address) {
        if (address instanceof InetSocketAddress isa && isa.getAddress() != null) {
            return isa.getAddress().getHostAddress();
        }
        return null;
    }

    private static boolean isWildcard(String address) {
        return address.equals("0.0.0.0") || address.equals("::") || address.equals("0:0:0:0:0:0:0:0");
    }

    // ---- state for the daemon ----

    public TargetConfig config() {
        return config;
    }

    public MemoryBudget memoryBudget() {
        return budget;
    }

    /** Namespace RAM in use now, in bytes (not counting the chunks the pool holds ready, which the budget counts). */
    public long memoryUsedBytes() {
        return chunkPool.namespaceBytes();
    }

    /** The chunks made ahead for first writes into RAM namespaces. */
    public ChunkPool chunkPool() {
        return chunkPool;
    }

    /** The namespace RAM limit, in bytes. */
    public long memoryBudgetBytes() {
        return budget.limit();
    }

    /** Live controllers of every subsystem, the discovery subsystem included. */
    public List<Controller> controllers() {
        List<Controller> out = new ArrayList<>(discovery.controllers());
        for (Subsystem s : subsystems) {
            out.addAll(s.controllers());
        }
        return out;
    }

    // ---- statistics (metrics, nvmf_get_stats) ----

    /**
     * The target's statistics now: memory against the budget, and per subsystem (the discovery subsystem first),
     * namespace and connected queue. Cheap enough to call on every scrape; it never slows the I/O path.
     */
    public TargetStats stats() {
        List<Subsystem> all = new ArrayList<>();
        all.add(discovery);
        all.addAll(subsystems);
        return stats.snapshot(all, memoryUsedBytes(), budget.limit());
    }

    StatsRegistry statsRegistry() {
        return stats;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    public boolean isClosed() {
        return closed;
    }

    /** Closes the listeners (and so their queues), tears down every controller and frees all namespace RAM. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closeListeners();
        for (Controller c : controllers()) {
            c.teardown("target closing", true);
        }
        scheduler.shutdownNow();
        for (Subsystem s : subsystems) {
            for (RamNamespace ns : s.namespaces()) {
                ns.free();
            }
        }
        chunkPool.close();
        LOG.log(Level.INFO, "target closed; " + budget.used() + " bytes of namespace RAM still held by transports");
    }

    private void closeListeners() {
        for (TargetListener l : listeners) {
            try {
                l.close();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "closing listener " + l.localAddress() + " failed", e);
            }
            if (l.memoryObserver() != null) {
                chunkMemory.detach(l.memoryObserver());
            }
        }
        listeners.clear();
    }
}

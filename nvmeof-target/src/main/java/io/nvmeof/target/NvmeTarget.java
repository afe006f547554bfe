package io.nvmeof.target;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.core.command.Nqn;
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
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

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

    /** Builds subsystems and namespaces from their configs, in this target's memory. */
    private final SubsystemFactory factory;
    /** Changes to one subsystem at run time: namespaces, ANA, hosts, the listeners it is reachable on. */
    private final SubsystemChanges changes;

    private final Subsystem discovery = Subsystem.discovery();
    private final CopyOnWriteArrayList<Subsystem> subsystems = new CopyOnWriteArrayList<>();
    /** GENCTR of the discovery log and its change notices (nvmeof-protocol.md §3.3). */
    private final DiscoveryLog discoveryLog = new DiscoveryLog(discovery);
    /** Metrics: every queue's counters and the admin-path events (StatsRegistry). */
    private final StatsRegistry stats = new StatsRegistry();

    private final ScheduledThreadPoolExecutor scheduler;
    private final QueueAcceptor acceptor = this::accept;
    /** The hosts' TLS PSKs, which listeners with TLS choose from by the identity a host offers. */
    private final TlsKeys tlsKeys = new TlsKeys();
    /** The listeners and the ports the discovery log lists. */
    private final TargetPorts ports = new TargetPorts(chunkMemory, tlsKeys, acceptor, discoveryLog);

    private volatile boolean started;
    private volatile boolean closed;

    private NvmeTarget(TargetConfig config) {
        this.config = config;
        this.budget = new MemoryBudget(config.memoryBudgetBytes());
        this.chunkPool = new ChunkPool(budget, chunkMemory, ChunkPool.configuredChunks());
        this.factory = new SubsystemFactory(budget, chunkMemory, chunkPool);
        this.changes = new SubsystemChanges(factory, discoveryLog);
        config.tlsKeys().forEach(tlsKeys::put);
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "nvmeof-target-keepalive");
            t.setDaemon(true);
            return t;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
    }

    /**
     * Builds the subsystems and namespaces of {@code config} without listening. Namespaces cost no RAM until written,
     * except preallocated ones ({@link NamespaceConfig#preallocate}), which take all theirs here.
     */
    public static NvmeTarget create(TargetConfig config) {
        NvmeTarget target = new NvmeTarget(config);
        try {
            Set<UUID> uuids = new HashSet<>();
            for (SubsystemConfig sc : config.subsystems()) {
                if (Nqn.DISCOVERY.equals(sc.nqn())) {
                    throw new IllegalArgumentException("the discovery NQN cannot name an NVM subsystem: " + sc.nqn());
                }
                Subsystem s = SubsystemFactory.subsystem(sc);
                target.subsystems.add(s);
                for (NamespaceConfig nc : sc.namespaces()) {
                    RamNamespace ns = target.factory.namespace(s, nc);
                    if (!uuids.add(ns.uuid())) {
                        throw new IllegalArgumentException("namespace UUID " + ns.uuid() + " used twice (" + sc.nqn()
                                + " nsid " + ns.nsid() + "): the Linux host would drop one of them");
                    }
                    SubsystemFactory.assignAnaGroup(s, ns.nsid(), nc.anaGroup());
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
                ports.open(lc, portId++);
            } catch (IOException | RuntimeException e) {
                ports.closeAll();
                throw e;
            }
        }
        return this;
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
        return ports.boundAddresses();
    }

    public List<TargetListener> listeners() {
        return ports.listeners();
    }

    /**
     * An acceptor for queues that arrive on {@code port} from a transport the target did not start itself (an in-JVM
     * transport in tests). The port is listed in the discovery log from now on.
     */
    public QueueAcceptor acceptorFor(PortInfo port) {
        ports.register(port);
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
        return changes.addNamespace(requireSubsystem(subsystemNqn), nc);
    }

    /** Removes a namespace and frees its RAM (reads in flight keep their chunks until the transport releases them). */
    public boolean removeNamespace(String subsystemNqn, int nsid) {
        return changes.removeNamespace(requireSubsystem(subsystemNqn), nsid);
    }

    /**
     * Sets the ANA state of {@code group} on the listener with PORTID {@code portId} (the listeners of the config are
     * PORTIDs 1, 2, … in order) in subsystem {@code subsystemNqn}; the controllers on that listener get the ANA change
     * notice (see {@link AnaGroups#setState}).
     */
    public boolean setAnaState(String subsystemNqn, int portId, int group, AnaState state) {
        return changes.setAnaState(requireSubsystem(subsystemNqn), portId, group, state);
    }

    /** Moves namespace {@code nsid} of {@code subsystemNqn} into ANA group {@code group} (see {@link AnaGroups#setGroup}). */
    public boolean setAnaGroup(String subsystemNqn, int nsid, int group) {
        return changes.setAnaGroup(requireSubsystem(subsystemNqn), nsid, group);
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
            s = SubsystemFactory.subsystem(sc);
            try {
                for (NamespaceConfig nc : sc.namespaces()) {
                    factory.add(s, nc);
                }
            } catch (RuntimeException e) {
                s.namespaces().forEach(RamNamespace::free);
                throw e;
            }
            subsystems.add(s);
        }
        LOG.log(Level.INFO, "added " + s);
        discoveryLog.changed();
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
        discoveryLog.changed();
        return true;
    }

    /** Lets any host connect, or only the listed ones (controllers of hosts no longer allowed are torn down). */
    public void setAllowAnyHost(String nqn, boolean allow) {
        changes.setAllowAnyHost(requireSubsystem(nqn), allow);
    }

    /** Adds ({@code allow}) or removes a host NQN of a subsystem's allow-list; false if nothing changed. */
    public boolean setHostAllowed(String nqn, String hostNqn, boolean allow) {
        return changes.setHostAllowed(requireSubsystem(nqn), hostNqn, allow);
    }

    /**
     * Sets the DH-HMAC-CHAP settings of a host on a subsystem (the host is allowed from then on), or removes them with
     * null. Queues already connected keep their state; new Connects and re-authentications use the new keys
     * (docs/security.md).
     */
    public void setHostAuth(String nqn, String hostNqn, io.nvmeof.target.config.HostAuth auth) {
        changes.setHostAuth(requireSubsystem(nqn), hostNqn, auth);
    }

    /**
     * Makes subsystem {@code nqn} reachable on the listener with PORTID {@code portId} (SPDK's
     * nvmf_subsystem_add_listener): the discovery log lists it there from now on and connected discovery controllers
     * are told. False if it was reachable there already.
     */
    public boolean addSubsystemListener(String nqn, int portId) {
        return changes.addListener(requireSubsystem(nqn), portId);
    }

    /**
     * Makes subsystem {@code nqn} unreachable on the listener with PORTID {@code portId} (SPDK's
     * nvmf_subsystem_remove_listener): its controllers connected there are torn down, the discovery log drops the
     * entry and connected discovery controllers are told. The listener itself stays open (see {@link
     * #listenerInUse}). False if the subsystem was not reachable there.
     */
    public boolean removeSubsystemListener(String nqn, int portId) {
        return changes.removeListener(requireSubsystem(nqn), portId, ports.portIds());
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
        return ports.open(lc, ports.nextPortId());
    }

    /**
     * Opens a listener at run time that serves only the subsystems later added to it ({@link #addSubsystemListener}),
     * as SPDK's nvmf_subsystem_add_listener does: subsystems that were reachable on every listener (flags, a config
     * naming no listeners) keep the listeners they have now and are not reachable on this one.
     */
    public synchronized TargetListener addListenerForSubsystems(ListenerConfig lc) throws IOException {
        List<Integer> now = ports.portIds();
        for (Subsystem s : subsystems) {
            if (s.anyListener()) {
                s.restrictListeners(now);
            }
        }
        return addListener(lc);
    }

    /** Closes the listener with PORTID {@code portId} (and so its queues); false if there is none. */
    public synchronized boolean removeListener(int portId) {
        TargetListener l = ports.close(portId);
        if (l == null) {
            return false;
        }
        for (Subsystem s : subsystems) {
            s.listenerClosed(portId); // the PORTID may go to a new listener later
        }
        LOG.log(Level.INFO, "closed listener " + l.localAddress() + " (port ID " + portId + ")");
        discoveryLog.changed();
        return true;
    }

    /**
     * Gives namespace {@code nsid} a new size. Its blocks are not kept: this is for namespaces whose data does not
     * matter (SPDK's null bdevs). Controllers get the namespace attribute changed notice and re-read Identify Namespace
     * (NSZE, NCAP).
     */
    public RamNamespace resizeNamespace(String subsystemNqn, int nsid, long newSizeBytes) {
        return changes.resizeNamespace(requireSubsystem(subsystemNqn), nsid, newSizeBytes);
    }

    private Subsystem requireSubsystem(String nqn) {
        Subsystem s = subsystem(nqn);
        if (s == null) {
            throw new IllegalArgumentException("no subsystem " + nqn);
        }
        return s;
    }

    // ---- discovery (nvmeof-protocol.md §3.3, §3.7) ----

    /** The discovery log for {@code hostNqn}, read on {@code channel} (see {@link DiscoveryLog#page}). */
    ByteBuffer discoveryLog(String hostNqn, QueueChannel channel) {
        return discoveryLog.page(hostNqn, channel, ports.ports(), subsystems);
    }

    /** GENCTR of the discovery log. */
    public long discoveryGeneration() {
        return discoveryLog.generation();
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
        ports.closeAll();
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
}

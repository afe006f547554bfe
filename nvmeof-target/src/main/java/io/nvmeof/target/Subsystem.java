package io.nvmeof.target;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.target.namespace.RamNamespace;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;

/**
 * An NVM subsystem (or the discovery subsystem): its NQN, who may connect, its namespaces and its live controllers.
 * Namespaces sit in a copy-on-write array indexed by NSID, so the I/O path finds one with a plain volatile read.
 */
public final class Subsystem {
    private final String nqn;
    private final boolean discovery;
    /** Changed at run time by {@link NvmeTarget#setAllowAnyHost} / {@link NvmeTarget#addHost} (admin path only). */
    private volatile boolean allowAnyHost;

    private volatile Set<String> hosts;
    /** DH-HMAC-CHAP settings by host NQN, copy-on-write (docs/security.md); read at Connect only. */
    private volatile java.util.Map<String, io.nvmeof.target.config.HostAuth> hostAuth = java.util.Map.of();

    private final String serial;
    private final String model;
    private volatile RamNamespace[] namespaces = new RamNamespace[ControllerProfile.NN + 1];
    /** The reservation of each namespace, indexed like {@link #namespaces} and replaced with it. */
    private volatile Reservations[] reservations = new Reservations[ControllerProfile.NN + 1];

    private final ConcurrentHashMap<Integer, Controller> controllers = new ConcurrentHashMap<>();
    private int nextCntlid = ControllerProfile.MIN_CNTLID;
    /** Fused Compare and Write against the writes of every queue (FusedGate). */
    private final FusedGate fusedGate = new FusedGate();

    private final AnaGroups ana = new AnaGroups(this);

    /**
     * Reachable on every listener of the target (the discovery subsystem; subsystems from flags or a config that names
     * no listeners for them), or only on {@link #portIds} (SPDK's per-subsystem listeners: nvmf_subsystem_add_listener).
     */
    private volatile boolean anyListener = true;
    /** PORTIDs of the listeners this subsystem was added to, when not {@link #anyListener}; replaced, never changed. */
    private volatile Set<Integer> portIds = Set.of();

    Subsystem(
            String nqn,
            boolean discovery,
            boolean allowAnyHost,
            Collection<String> hosts,
            String serial,
            String model) {
        this.nqn = nqn;
        this.discovery = discovery;
        this.allowAnyHost = allowAnyHost;
        this.hosts = java.util.Collections.unmodifiableSet(new java.util.LinkedHashSet<>(hosts));
        this.serial = serial;
        this.model = model;
    }

    static Subsystem discovery() {
        return new Subsystem(Nqn.DISCOVERY, true, true, List.of(), "discovery", ControllerProfile.DEFAULT_MODEL);
    }

    public String nqn() {
        return nqn;
    }

    public boolean isDiscovery() {
        return discovery;
    }

    public boolean allowAnyHost() {
        return allowAnyHost;
    }

    public Set<String> hosts() {
        return hosts;
    }

    /** Identify SN (at most 20 characters). */
    public String serial() {
        return serial;
    }

    /** Identify MN (at most 40 characters). */
    public String model() {
        return model;
    }

    FusedGate fusedGate() {
        return fusedGate;
    }

    /** The DH-HMAC-CHAP settings of {@code hostNqn}, or null if that host need not authenticate (always, on discovery). */
    public io.nvmeof.target.config.HostAuth hostAuth(String hostNqn) {
        return discovery ? null : hostAuth.get(hostNqn);
    }

    /** Every host's DH-HMAC-CHAP settings. */
    public java.util.Collection<io.nvmeof.target.config.HostAuth> hostAuths() {
        return hostAuth.values();
    }

    /** Sets (or with null removes) the DH-HMAC-CHAP settings of one host; a host with settings is also allowed. */
    synchronized void setHostAuth(String hostNqn, io.nvmeof.target.config.HostAuth auth) {
        java.util.Map<String, io.nvmeof.target.config.HostAuth> next = new java.util.LinkedHashMap<>(hostAuth);
        if (auth == null) {
            next.remove(hostNqn);
        } else {
            next.put(hostNqn, auth);
            changeHost(hostNqn, true);
        }
        hostAuth = java.util.Collections.unmodifiableMap(next);
    }

    /** Whether {@code hostNqn} may connect (nvmeof-protocol.md §2.2): the discovery subsystem allows every host. */
    public boolean allows(String hostNqn) {
        return discovery || allowAnyHost || hosts.contains(hostNqn);
    }

    /** The active namespace {@code nsid}, or null. Allocation-free; NSIDs are compared unsigned. */
    public RamNamespace namespace(int nsid) {
        RamNamespace[] t = namespaces;
        return Integer.compareUnsigned(nsid, t.length) < 0 ? t[nsid] : null;
    }

    /** The reservation of namespace {@code nsid}, or null. Allocation-free. */
    Reservations reservations(int nsid) {
        Reservations[] t = reservations;
        return Integer.compareUnsigned(nsid, t.length) < 0 ? t[nsid] : null;
    }

    /** Active namespaces in NSID order. */
    public List<RamNamespace> namespaces() {
        List<RamNamespace> out = new ArrayList<>();
        for (RamNamespace ns : namespaces) {
            if (ns != null) {
                out.add(ns);
            }
        }
        return out;
    }

    /** The lowest NSID not in use, or 0 if all are. */
    synchronized int freeNsid() {
        RamNamespace[] t = namespaces;
        for (int i = 1; i < t.length; i++) {
            if (t[i] == null) {
                return i;
            }
        }
        return 0;
    }

    synchronized void addNamespace(RamNamespace ns) {
        if (discovery) {
            throw new IllegalStateException("the discovery subsystem has no namespaces");
        }
        int nsid = ns.nsid();
        if (nsid < 1 || nsid >= namespaces.length) {
            throw new IllegalArgumentException("nsid must be 1.." + (namespaces.length - 1) + ": " + nsid);
        }
        if (namespaces[nsid] != null) {
            throw new IllegalArgumentException("nsid " + nsid + " already exists in " + nqn);
        }
        Reservations[] r = reservations.clone();
        r[nsid] = new Reservations(this, nsid);
        reservations = r; // before the namespace: the I/O path finds its reservation once it finds the namespace
        RamNamespace[] t = namespaces.clone();
        t[nsid] = ns;
        namespaces = t;
    }

    /** Puts {@code ns} in place of the namespace with its NSID (a resize); returns the one it replaced. */
    synchronized RamNamespace replaceNamespace(RamNamespace ns) {
        RamNamespace old = namespace(ns.nsid());
        if (old == null) {
            throw new IllegalArgumentException("no namespace " + ns.nsid() + " in " + nqn);
        }
        RamNamespace[] t = namespaces.clone();
        t[ns.nsid()] = ns;
        namespaces = t;
        return old;
    }

    synchronized void setAllowAnyHost(boolean allow) {
        allowAnyHost = allow;
    }

    /** Adds or removes one host NQN of the allow-list; false if nothing changed. */
    synchronized boolean changeHost(String hostNqn, boolean allow) {
        Set<String> next = new java.util.LinkedHashSet<>(hosts);
        boolean changed = allow ? next.add(hostNqn) : next.remove(hostNqn);
        hosts = java.util.Collections.unmodifiableSet(next);
        return changed;
    }

    synchronized RamNamespace removeNamespace(int nsid) {
        RamNamespace ns = namespace(nsid);
        if (ns != null) {
            RamNamespace[] t = namespaces.clone();
            t[nsid] = null;
            namespaces = t; // its reservation stays until the NSID is reused, so an I/O in flight still finds one
        }
        return ns;
    }

    // ---- Asymmetric Namespace Access (AnaGroups) ----

    /** The ANA groups of this subsystem and their states per listener. */
    public AnaGroups ana() {
        return ana;
    }

    /** Gives {@code group} the state {@code state} on the listener with PORTID {@code portId}; see {@link AnaGroups#setState}. */
    public boolean setAnaState(int portId, int group, AnaState state) {
        return ana.setState(portId, group, state);
    }

    /** Gives {@code group} the state {@code state} on {@code listener}; see {@link AnaGroups#setState}. */
    public boolean setAnaState(TargetListener listener, int group, AnaState state) {
        return ana.setState(listener.portInfo().portId(), group, state);
    }

    /** Moves namespace {@code nsid} into ANA group {@code group}; see {@link AnaGroups#setGroup}. */
    public boolean setAnaGroup(int nsid, int group) {
        return ana.setGroup(nsid, group);
    }

    // ---- listeners ----

    /** Whether hosts reach this subsystem on every listener (see {@link #listenerPortIds()} otherwise). */
    public boolean anyListener() {
        return anyListener;
    }

    /** The PORTIDs of the listeners this subsystem was added to; meaningful when not {@link #anyListener()}. */
    public Set<Integer> listenerPortIds() {
        return portIds;
    }

    /** Whether a host may connect to this subsystem through the listener with PORTID {@code portId}. */
    public boolean reachableOn(int portId) {
        return anyListener || portIds.contains(portId);
    }

    /** Makes this subsystem reachable only on the listeners with these PORTIDs (a config that names them). */
    synchronized void restrictListeners(Collection<Integer> ids) {
        portIds = Set.copyOf(ids);
        anyListener = false;
    }

    /** Adds the listener with PORTID {@code portId}; false if the subsystem was reachable on it already. */
    synchronized boolean addListener(int portId) {
        if (reachableOn(portId)) {
            return false;
        }
        java.util.Set<Integer> next = new java.util.TreeSet<>(portIds);
        next.add(portId);
        portIds = Set.copyOf(next);
        return true;
    }

    /**
     * Removes the listener with PORTID {@code portId}; a subsystem reachable on any listener keeps the others of
     * {@code allPortIds}. False if it was not reachable there.
     */
    synchronized boolean removeListener(int portId, Collection<Integer> allPortIds) {
        if (!reachableOn(portId)) {
            return false;
        }
        java.util.Set<Integer> next = new java.util.TreeSet<>(anyListener ? allPortIds : portIds);
        next.remove(portId);
        portIds = Set.copyOf(next);
        anyListener = false;
        return true;
    }

    /** Forgets a listener the target closed (its PORTID may be given to a new listener later). */
    synchronized void listenerClosed(int portId) {
        if (!anyListener && portIds.contains(portId)) {
            java.util.Set<Integer> next = new java.util.TreeSet<>(portIds);
            next.remove(portId);
            portIds = Set.copyOf(next);
        }
    }

    // ---- controllers ----

    /**
     * Creates a controller with a CNTLID in 1..0xFFEF that no live controller uses (nvmeof-protocol.md §8), rotating so a reconnecting
     * host rarely gets the CNTLID it just dropped; null if none is left (Controller Busy, nvmeof-protocol.md §2.2).
     */
    synchronized Controller createController(IntFunction<Controller> factory) {
        int span = ControllerProfile.MAX_CNTLID - ControllerProfile.MIN_CNTLID + 1;
        for (int i = 0; i < span; i++) {
            int id = nextCntlid;
            nextCntlid = id == ControllerProfile.MAX_CNTLID ? ControllerProfile.MIN_CNTLID : id + 1;
            if (!controllers.containsKey(id)) {
                Controller c = factory.apply(id);
                controllers.put(id, c);
                return c;
            }
        }
        return null;
    }

    void remove(Controller controller) {
        controllers.remove(controller.cntlid(), controller);
    }

    /** The live controller with this CNTLID, or null. */
    Controller controller(int cntlid) {
        return controllers.get(cntlid);
    }

    /** Live controllers. */
    public List<Controller> controllers() {
        return new ArrayList<>(controllers.values());
    }

    @Override
    public String toString() {
        return (discovery ? "discovery subsystem " : "subsystem ") + nqn;
    }
}

package io.nvmeof.target;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.target.config.HostAuth;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.namespace.RamNamespace;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * Changes to one NVM subsystem of a running {@link NvmeTarget} (the run-time API the JSON-RPC layer calls): its
 * namespaces, their ANA groups and states, the hosts it allows with their DH-HMAC-CHAP settings, and the listeners it
 * is reachable on. Each change tells whom it concerns: the subsystem's controllers get the namespace attribute changed
 * notice (nvmeof-protocol.md §3.6), controllers that lose access are torn down, and the discovery log moves on
 * ({@link DiscoveryLog#changed}). Owned by the target, which finds the subsystem; it keeps no state of its own.
 */
final class SubsystemChanges {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");

    private final SubsystemFactory factory;
    private final DiscoveryLog discoveryLog;

    SubsystemChanges(SubsystemFactory factory, DiscoveryLog discoveryLog) {
        this.factory = factory;
        this.discoveryLog = discoveryLog;
    }

    // ---- namespaces ----

    RamNamespace addNamespace(Subsystem s, NamespaceConfig nc) {
        RamNamespace ns;
        synchronized (s) {
            ns = factory.add(s, nc);
        }
        LOG.log(Level.INFO, "added " + ns + " to " + s.nqn());
        namespaceChanged(s, ns.nsid());
        return ns;
    }

    boolean removeNamespace(Subsystem s, int nsid) {
        RamNamespace ns = s.removeNamespace(nsid);
        if (ns == null) {
            return false;
        }
        ns.free();
        s.ana().release(nsid);
        LOG.log(Level.INFO, "removed " + ns + " from " + s.nqn());
        namespaceChanged(s, nsid);
        return true;
    }

    RamNamespace resizeNamespace(Subsystem s, int nsid, long newSizeBytes) {
        RamNamespace ns;
        RamNamespace old;
        synchronized (s) {
            old = s.namespace(nsid);
            if (old == null) {
                throw new IllegalArgumentException("no namespace " + nsid + " in " + s.nqn());
            }
            ns = factory.resized(old, newSizeBytes);
            s.replaceNamespace(ns);
        }
        old.free();
        LOG.log(Level.INFO, "resized " + ns + " in " + s.nqn());
        namespaceChanged(s, nsid);
        return ns;
    }

    /** Tells every controller of {@code s} that namespace {@code nsid} changed (log 0x04 and its notice). */
    private static void namespaceChanged(Subsystem s, int nsid) {
        for (Controller c : s.controllers()) {
            c.namespaceChanged(nsid);
        }
    }

    // ---- ANA ----

    boolean setAnaState(Subsystem s, int portId, int group, AnaState state) {
        boolean changed = s.setAnaState(portId, group, state);
        if (changed) {
            LOG.log(
                    Level.INFO,
                    "ANA group " + group + " of " + s.nqn() + " is " + state.configName() + " on port ID " + portId);
        }
        return changed;
    }

    boolean setAnaGroup(Subsystem s, int nsid, int group) {
        boolean changed = s.setAnaGroup(nsid, group);
        if (changed) {
            LOG.log(Level.INFO, "namespace " + nsid + " of " + s.nqn() + " is in ANA group " + group);
        }
        return changed;
    }

    // ---- hosts ----

    void setAllowAnyHost(Subsystem s, boolean allow) {
        s.setAllowAnyHost(allow);
        accessChanged(s);
    }

    boolean setHostAllowed(Subsystem s, String hostNqn, boolean allow) {
        boolean changed = s.changeHost(hostNqn, allow);
        if (changed) {
            accessChanged(s);
        }
        return changed;
    }

    void setHostAuth(Subsystem s, String hostNqn, HostAuth auth) {
        if (auth != null && !auth.hostNqn().equals(hostNqn)) {
            throw new IllegalArgumentException("settings for " + auth.hostNqn() + " given for host " + hostNqn);
        }
        s.setHostAuth(hostNqn, auth);
        LOG.log(
                Level.INFO,
                "DH-HMAC-CHAP: host " + hostNqn + " on " + s.nqn() + ": "
                        + (auth == null
                                ? "keys removed"
                                : auth.ctrlKey() == null ? "host key set" : "host and controller keys set"));
        discoveryLog.changed();
    }

    /** Tears down the controllers of hosts {@code s} no longer allows, and tells discovery controllers. */
    private void accessChanged(Subsystem s) {
        for (Controller c : s.controllers()) {
            if (!s.allows(c.hostNqn())) {
                c.teardown("host " + c.hostNqn() + " no longer allowed", true);
            }
        }
        discoveryLog.changed();
    }

    // ---- listeners ----

    boolean addListener(Subsystem s, int portId) {
        if (!s.addListener(portId)) {
            return false;
        }
        LOG.log(Level.INFO, s + " is reachable on port ID " + portId);
        discoveryLog.changed();
        return true;
    }

    /** Makes {@code s} unreachable on {@code portId}, one of {@code portIds} (all the target's), and tears down its controllers there. */
    boolean removeListener(Subsystem s, int portId, List<Integer> portIds) {
        if (!s.removeListener(portId, portIds)) {
            return false;
        }
        for (Controller c : s.controllers()) {
            if (c.port() != null && c.port().portId() == portId) {
                c.teardown("listener port ID " + portId + " removed from " + s.nqn(), true);
            }
        }
        LOG.log(Level.INFO, s + " is no longer reachable on port ID " + portId);
        discoveryLog.changed();
        return true;
    }
}

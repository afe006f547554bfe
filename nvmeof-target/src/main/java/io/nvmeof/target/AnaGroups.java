package io.nvmeof.target;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Asymmetric Namespace Access groups of one subsystem (NVMe Base 2.0 §8.1, Asymmetric Namespace Access Reporting;
 * nvmeof-protocol.md §3.2.1, §3.3): which group (ANAGRPID) each namespace is in, and, through one {@link AnaPath} per
 * listener (port), which state each group has on that listener. It builds the ANA log page (LID 0Ch), keeps its change
 * count, and raises the ANA change notice on the controllers whose log changed.
 *
 * <p>Groups are 1..{@value #MAX_GROUP} (ANAGRPMAX = NANAGRPID = 128, like nvmet). Every namespace starts in group
 * {@value #DEFAULT_GROUP}; every group is optimized on every listener until it is given another state (nvmet makes a
 * group other than 1 inaccessible on a port until it is configured there). The log lists group 1, every group that
 * holds a namespace and every group that was given a state on some listener.
 *
 * <p>Threads: changes come from the API (any thread) and are serialised on this object; the I/O path reads only the
 * volatile copy-on-write arrays ({@link #groupOf}, {@link AnaPath#ioStatus}), without a lock or an allocation.
 */
public final class AnaGroups {
    /** ANAGRPMAX and NANAGRPID: the highest ANA group ID and the number of group IDs, as nvmet. */
    public static final int MAX_GROUP = NamespaceConfig.MAX_ANA_GROUP;
    /** The group of a namespace that names none (nvmet's default ANAGRPID). */
    public static final int DEFAULT_GROUP = 1;
    /** Identify Controller ANATT: ANA transition time in seconds, as nvmet. */
    static final int ANATT_SECONDS = 10;
    /**
     * Identify Controller ANACAP: bits 0–4, the states we may report (optimized, non-optimized, inaccessible,
     * persistent loss, change). Bit 6 ("ANAGRPID does not change while attached") is clear: {@link #setGroup} moves
     * an attached namespace, as nvmet's configfs does. Bit 7 (non-zero ANAGRPID in Namespace Management) does not
     * apply: there is no Namespace Management command.
     */
    static final int ANACAP = 0x1F;
    /** CMIC bit 3: ANA reporting (nvmeof-protocol.md §3.2.1). */
    static final int CMIC_ANA = 0x08;
    /** ANA log page: header and group descriptor sizes (nvmeof-protocol.md §3.3). */
    static final int LOG_HEADER = 16;

    static final int LOG_DESCRIPTOR = 32;

    private final Subsystem subsystem;
    /** ANAGRPID by NSID (index 0 unused); copy-on-write, read by the I/O path. */
    private volatile int[] groupOfNsid;
    /** Per group: the change count at which its NSID list last changed (guarded by this). */
    private final long[] membershipChanged = new long[MAX_GROUP + 1];
    /** Per group: whether some listener was given a state for it, so the log lists it (guarded by this). */
    private final boolean[] configured = new boolean[MAX_GROUP + 1];
    /** The listeners' views by PORTID (guarded by this). */
    private final Map<Integer, AnaPath> paths = new HashMap<>();
    /** CHGCNT of the log header (guarded by this). */
    private long changeCount;

    AnaGroups(Subsystem subsystem) {
        this.subsystem = subsystem;
        int[] groups = new int[ControllerProfile.NN + 1];
        Arrays.fill(groups, DEFAULT_GROUP);
        this.groupOfNsid = groups;
    }

    // ---- the I/O path and Identify ----

    /** The ANAGRPID of {@code nsid} (the default group for an NSID out of range). Allocation-free, no lock. */
    public int groupOf(int nsid) {
        int[] g = groupOfNsid;
        return Integer.compareUnsigned(nsid, g.length) < 0 ? g[nsid] : DEFAULT_GROUP;
    }

    /** The view of the listener with PORTID {@code portId}, made on first use (each controller takes its own at Connect). */
    synchronized AnaPath path(int portId) {
        return paths.computeIfAbsent(portId, id -> new AnaPath(this, id));
    }

    /** The state of {@code group} on the listener with PORTID {@code portId}. */
    public AnaState state(int portId, int group) {
        checkGroup(group);
        return path(portId).state(group);
    }

    // ---- changes (the management API) ----

    /**
     * Gives {@code group} the state {@code state} on the listener with PORTID {@code portId}. If that changes the
     * listener's ANA log, the change count goes up and every controller connected through that listener gets the ANA
     * change notice (if it enabled it).
     *
     * @return whether anything changed
     * @throws IllegalArgumentException for a group outside 1..128 or a PORTID outside 1..65535
     */
    public boolean setState(int portId, int group, AnaState state) {
        checkGroup(group);
        if (portId < 1 || portId > 0xFFFF) {
            throw new IllegalArgumentException("a listener's PORTID is 1..65535: " + portId);
        }
        if (state == null) {
            throw new IllegalArgumentException("no ANA state");
        }
        boolean newlyListed;
        synchronized (this) {
            AnaPath path = path(portId);
            newlyListed = !listed(group);
            if (!newlyListed && path.state(group) == state) {
                configured[group] = true;
                return false;
            }
            configured[group] = true;
            long count = bump();
            path.set(group, state, count);
            if (newlyListed) {
                // The group is listed on every listener from now on: their logs changed too.
                membershipChanged[group] = count;
            }
        }
        for (Controller c : subsystem.controllers()) {
            if (newlyListed || c.port().portId() == portId) {
                c.anaChanged();
            }
        }
        return true;
    }

    /**
     * Moves the active namespace {@code nsid} into {@code group}. Every controller of the subsystem gets the ANA
     * change notice (nvmet does the same when a namespace's ana_grpid is written).
     *
     * @return whether the namespace changed group
     * @throws IllegalArgumentException for a group outside 1..128 or an NSID that is not active
     */
    public boolean setGroup(int nsid, int group) {
        checkGroup(group);
        if (subsystem.namespace(nsid) == null) {
            throw new IllegalArgumentException("no namespace " + nsid + " in " + subsystem.nqn());
        }
        synchronized (this) {
            if (groupOf(nsid) == group) {
                return false;
            }
            assign(nsid, group);
        }
        for (Controller c : subsystem.controllers()) {
            c.anaChanged();
        }
        return true;
    }

    /** A namespace is being added in {@code group} (0: the default group). The namespace notice tells the host. */
    synchronized void assign(int nsid, int group) {
        int g = group == 0 ? DEFAULT_GROUP : group;
        checkGroup(g);
        int old = groupOf(nsid);
        int[] t = groupOfNsid.clone();
        t[nsid] = g;
        groupOfNsid = t;
        long count = bump();
        membershipChanged[old] = count;
        membershipChanged[g] = count;
    }

    /** A namespace went away: its group's NSID list changed; its NSID returns to the default group. */
    synchronized void release(int nsid) {
        int old = groupOf(nsid);
        long count = bump();
        membershipChanged[old] = count;
        if (old != DEFAULT_GROUP) {
            int[] t = groupOfNsid.clone();
            t[nsid] = DEFAULT_GROUP;
            groupOfNsid = t;
        }
    }

    private long bump() {
        // CHGCNT rolls over from FFFFFFFF_FFFFFFFFh to 0 (NVMe Base 2.0, ANA log page).
        changeCount = changeCount == -1L ? 0 : changeCount + 1;
        return changeCount;
    }

    private static void checkGroup(int group) {
        if (group < 1 || group > MAX_GROUP) {
            throw new IllegalArgumentException("an ANA group ID is 1.." + MAX_GROUP + ": " + group);
        }
    }

    // ---- the log page (admin path: allocates) ----

    /**
     * The ANA log page (LID 0Ch) as {@code path}'s listener sees it (nvmeof-protocol.md §3.3): a 16-byte header (CHGCNT,
     * NGRPS), then per listed group a 32-byte descriptor (ANAGRPID, NNSIDS, CHGCNT, ANAS) followed by its NSIDs in
     * ascending order, unless {@code groupsOnly} (LSP bit 0, RGO) asks for the descriptors alone with NNSIDS = 0.
     * A descriptor's CHGCNT is the header's CHGCNT when that descriptor last changed.
     */
    synchronized ByteBuffer log(AnaPath path, boolean groupsOnly) {
        List<List<Integer>> members = new ArrayList<>(MAX_GROUP + 1);
        for (int g = 0; g <= MAX_GROUP; g++) {
            members.add(new ArrayList<>());
        }
        for (RamNamespace ns : subsystem.namespaces()) {
            members.get(groupOf(ns.nsid())).add(ns.nsid());
        }
        int groups = 0;
        int size = LOG_HEADER;
        for (int g = 1; g <= MAX_GROUP; g++) {
            if (listed(g, members.get(g))) {
                groups++;
                size += LOG_DESCRIPTOR + (groupsOnly ? 0 : 4 * members.get(g).size());
            }
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0, changeCount); // CHGCNT
        b.putShort(8, (short) groups); // NGRPS
        int at = LOG_HEADER;
        for (int g = 1; g <= MAX_GROUP; g++) {
            List<Integer> nsids = members.get(g);
            if (!listed(g, nsids)) {
                continue;
            }
            int n = groupsOnly ? 0 : nsids.size();
            b.putInt(at, g); // ANAGRPID
            b.putInt(at + 4, n); // NNSIDS
            b.putLong(at + 8, Math.max(membershipChanged[g], path.changed(g))); // CHGCNT
            b.put(at + 16, (byte) path.state(g).code()); // ANAS
            at += LOG_DESCRIPTOR;
            for (int i = 0; i < n; i++) {
                b.putInt(at, nsids.get(i));
                at += 4;
            }
        }
        return b;
    }

    private boolean listed(int group, List<Integer> nsids) {
        return group == DEFAULT_GROUP || configured[group] || !nsids.isEmpty();
    }

    /** Whether the log lists {@code group} now (guarded by this). */
    private boolean listed(int group) {
        if (group == DEFAULT_GROUP || configured[group]) {
            return true;
        }
        for (RamNamespace ns : subsystem.namespaces()) {
            if (groupOf(ns.nsid()) == group) {
                return true;
            }
        }
        return false;
    }

    /** CHGCNT of the log header now. */
    public synchronized long changeCount() {
        return changeCount;
    }

    /** Identify Controller's ANA fields of an I/O controller (nvmeof-protocol.md §3.2.1), nvmet's values. */
    static void identifyController(ByteBuffer b) {
        b.put(76, (byte) (b.get(76) | CMIC_ANA)); // CMIC bit 3: ANA reporting
        b.put(342, (byte) ANATT_SECONDS); // ANATT
        b.put(343, (byte) ANACAP); // ANACAP
        b.putInt(344, MAX_GROUP); // ANAGRPMAX
        b.putInt(348, MAX_GROUP); // NANAGRPID
        // MNAN: with CMIC bit 3 the Linux host requires 0 < MNAN <= NN ("Invalid MNAN value").
        b.putInt(540, ControllerProfile.NN);
    }
}

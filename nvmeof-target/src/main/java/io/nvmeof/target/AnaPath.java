package io.nvmeof.target;

import io.nvmeof.core.command.AnaState;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The ANA group states one listener (port) of a subsystem gives (NVMe Base 2.0 §8.1, Asymmetric Namespace Access
 * Reporting): the path a controller connected through that listener is. Shared by those controllers; owned by the
 * subsystem's {@link AnaGroups}, which serialises every change.
 *
 * <p>The I/O path calls {@link #ioStatus} for every command: one volatile read of the group array, one of the state
 * array, no lock and no allocation. Changes publish new arrays.
 */
final class AnaPath {
    private final AnaGroups groups;
    private final int portId;
    /** State by ANAGRPID (index 0 unused); copy-on-write. */
    private volatile AnaState[] states;
    /** Per group: the log's CHGCNT when this listener's state of it last changed (guarded by {@link #groups}). */
    private final long[] changed = new long[AnaGroups.MAX_GROUP + 1];

    AnaPath(AnaGroups groups, int portId) {
        this.groups = groups;
        this.portId = portId;
        AnaState[] s = new AnaState[AnaGroups.MAX_GROUP + 1];
        Arrays.fill(s, AnaState.OPTIMIZED);
        this.states = s;
    }

    int portId() {
        return portId;
    }

    AnaState state(int group) {
        return states[group];
    }

    /**
     * The status of an I/O command to {@code nsid} on this path: success when its group is optimized or
     * non-optimized, else ANA Inaccessible (3/02h), ANA Persistent Loss (3/01h) or ANA Transition (3/03h) without DNR,
     * as nvmet answers (nvmet_check_ana_state). Allocation-free, no lock.
     */
    int ioStatus(int nsid) {
        return states[groups.groupOf(nsid)].ioStatus();
    }

    /** Called by {@link AnaGroups} with its lock held. */
    void set(int group, AnaState state, long changeCount) {
        AnaState[] s = states.clone();
        s[group] = state;
        states = s;
        changed[group] = changeCount;
    }

    /** Called by {@link AnaGroups} with its lock held. */
    long changed(int group) {
        return changed[group];
    }

    /** The ANA log page as this path sees it; {@code groupsOnly} is LSP bit 0 (RGO). */
    ByteBuffer log(boolean groupsOnly) {
        return groups.log(this, groupsOnly);
    }

    /**
     * Identify Namespace's ANA fields (nvmeof-protocol.md §3.2.2): ANAGRPID, and NUSE = 0 while the group is
     * inaccessible or persistently lost on this path, as nvmet (not in the change state).
     */
    void identifyNamespace(ByteBuffer page, int nsid) {
        int group = groups.groupOf(nsid);
        page.putInt(92, group); // ANAGRPID
        AnaState state = states[group];
        if (state == AnaState.INACCESSIBLE || state == AnaState.PERSISTENT_LOSS) {
            page.putLong(16, 0); // NUSE
        }
    }
}

package io.nvmeof.initiator.multipath;

/**
 * Picks the path of a command by the {@link IoPolicy}, over a fixed array of paths, with the rules of the Linux
 * host's {@code __nvme_find_path}, {@code nvme_round_robin_path} and {@code nvme_queue_depth_path}: optimized before
 * non-optimized, never a path that is not {@link NamespacePath#usable() usable}. Reads volatile fields only: no lock,
 * no allocation. The round-robin position is a plain field shared by all threads, as Linux's per-node current path
 * is: a race between two threads only makes them pick the same next path.
 */
final class PathSelector {
    private final NamespacePath[] paths;
    private volatile IoPolicy policy;
    /** The path round-robin used last (its index), -1 before the first. */
    private int current = -1;

    PathSelector(NamespacePath[] paths, IoPolicy policy) {
        this.paths = paths;
        this.policy = policy;
    }

    IoPolicy policy() {
        return policy;
    }

    void policy(IoPolicy p) {
        policy = p;
    }

    /** Whether commands on this selector count their path's queue depth. */
    boolean countsActive() {
        return policy == IoPolicy.QUEUE_DEPTH;
    }

    /** The path for the next command, or null if no path is usable now. */
    NamespacePath select() {
        switch (policy) {
            case ROUND_ROBIN:
                return roundRobin();
            case QUEUE_DEPTH:
                return queueDepth();
            default:
                return first();
        }
    }

    /** The first optimized path, else the first non-optimized one. */
    private NamespacePath first() {
        NamespacePath fallback = null;
        for (NamespacePath p : paths) {
            if (p.optimized()) {
                return p;
            }
            if (fallback == null && p.nonOptimized()) {
                fallback = p;
            }
        }
        return fallback;
    }

    /**
     * Starting after the path used last: the first optimized path; else the last one again if it is optimized;
     * else a non-optimized path (the last one met), or the last one if it is the only usable path.
     */
    private NamespacePath roundRobin() {
        int n = paths.length;
        int old = current;
        if (old < 0 || old >= n) {
            NamespacePath p = first();
            if (p != null) {
                current = p.index;
            }
            return p;
        }
        NamespacePath found = null;
        for (int k = 1; k < n; k++) {
            NamespacePath p = paths[(old + k) % n];
            if (p.optimized()) {
                current = p.index;
                return p;
            }
            if (p.nonOptimized()) {
                found = p;
            }
        }
        NamespacePath last = paths[old];
        if (last.optimized() || (found == null && last.nonOptimized())) {
            return last;
        }
        if (found != null) {
            current = found.index;
        }
        return found;
    }

    /** The optimized path with the fewest commands in flight, else the non-optimized one with the fewest. */
    private NamespacePath queueDepth() {
        NamespacePath bestOpt = null;
        NamespacePath bestNonOpt = null;
        int minOpt = Integer.MAX_VALUE;
        int minNonOpt = Integer.MAX_VALUE;
        for (NamespacePath p : paths) {
            int depth = p.active();
            if (p.optimized()) {
                if (depth < minOpt) {
                    minOpt = depth;
                    bestOpt = p;
                    if (depth <= 0) {
                        return p;
                    }
                }
            } else if (p.nonOptimized() && depth < minNonOpt) {
                minNonOpt = depth;
                bestNonOpt = p;
            }
        }
        return bestOpt != null ? bestOpt : bestNonOpt;
    }
}

package io.nvmeof.target.namespace;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The namespace RAM all namespaces of one target may use together. A chunk reserves its bytes here before it is
 * allocated and gives them back when it is freed, so the total can never overshoot the limit, whatever the number of
 * queue threads writing at once (a compare-and-set loop, no lock).
 */
public final class MemoryBudget {
    private static final Logger LOG = System.getLogger("io.nvmeof.target.memory");
    /** At most one refusal line per this many nanoseconds, so a host hammering a full target cannot flood the log. */
    private static final long REFUSAL_LOG_INTERVAL_NANOS = 5_000_000_000L;

    private final long limit;
    private final AtomicLong used = new AtomicLong();
    private final AtomicLong refusals = new AtomicLong();
    private final AtomicLong lastRefusalLog = new AtomicLong(System.nanoTime() - REFUSAL_LOG_INTERVAL_NANOS);

    public MemoryBudget(long limitBytes) {
        if (limitBytes <= 0) {
            throw new IllegalArgumentException("a memory budget must be positive: " + limitBytes);
        }
        this.limit = limitBytes;
    }

    /** Reserves {@code bytes}; false (and a rate-limited log line) if that would exceed the limit. */
    public boolean tryReserve(long bytes) {
        while (true) {
            long now = used.get();
            long next = now + bytes;
            if (next > limit || next < 0) {
                refused(bytes);
                return false;
            }
            if (used.compareAndSet(now, next)) {
                return true;
            }
        }
    }

    /** Reserves {@code bytes} if that stays within the limit, without counting or logging a refusal (the chunk pool's reserve ahead). */
    boolean tryReserveQuietly(long bytes) {
        while (true) {
            long now = used.get();
            long next = now + bytes;
            if (next > limit || next < 0) {
                return false;
            }
            if (used.compareAndSet(now, next)) {
                return true;
            }
        }
    }

    /** Gives back bytes reserved earlier. */
    public void release(long bytes) {
        used.addAndGet(-bytes);
    }

    /** Counts a refusal that happened for another reason (the JVM ran out of direct memory) and logs it. */
    void refused(long bytes) {
        refusals.incrementAndGet();
        long now = System.nanoTime();
        long last = lastRefusalLog.get();
        if (now - last >= REFUSAL_LOG_INTERVAL_NANOS && lastRefusalLog.compareAndSet(last, now)) {
            LOG.log(
                    Level.WARNING,
                    "memory budget exhausted: " + used.get() + " of " + limit
                            + " bytes in use, refused " + bytes
                            + " more; writes to unallocated blocks fail with Capacity Exceeded ("
                            + refusals.get() + " refusals so far)");
        }
    }

    public long limit() {
        return limit;
    }

    public long used() {
        return used.get();
    }

    /** How many allocations were refused since the target started. */
    public long refusals() {
        return refusals.get();
    }
}

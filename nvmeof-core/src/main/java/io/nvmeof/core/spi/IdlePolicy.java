package io.nvmeof.core.spi;

import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * How a transport's queue thread waits when it has nothing to do, the same for every transport: <b>spin, then
 * sleep</b>. After its last piece of work the thread keeps polling (without blocking) for a spin window, so an answer
 * that comes soon (a response to a command just sent, the next batch of a busy peer) is picked up without a wake-up;
 * once the window has passed with nothing to do it sleeps in the kernel until the next event or task. With
 * {@link IoMode#busyPoll()} (fio's {@code --hipri}) the thread spins and never sleeps while its queues are in use.
 *
 * <p>The window is one setting per JVM: the system property {@value #SPIN_MICROS_PROPERTY} in microseconds, default
 * {@value #DEFAULT_SPIN_MICROS}; 0 sleeps as soon as the thread is idle. 200 µs was measured as right for NVMe/TCP on
 * the 2-core test VM (perf/README.md, "Measured"): 50 µs let the two sides fall asleep in turn at queue depth 32. The
 * RDMA queues use the same window. {@value #TCP_SPIN_MICROS_PROPERTY}, the NVMe/TCP name of the same setting, still
 * works when {@value #SPIN_MICROS_PROPERTY} is not set; it is deprecated.
 *
 * <p>Immutable; the transports ask {@link #of(IoMode)} once per queue thread and then call
 * {@link #shouldSleep(long)} on each idle turn (no allocation).
 */
public final class IdlePolicy {
    /** The spin window in microseconds, for every transport. */
    public static final String SPIN_MICROS_PROPERTY = "io.nvmeof.spinMicros";
    /**
     * The former NVMe/TCP-only name of {@link #SPIN_MICROS_PROPERTY}, read when that is not set.
     *
     * @deprecated use {@link #SPIN_MICROS_PROPERTY}
     */
    @Deprecated
    public static final String TCP_SPIN_MICROS_PROPERTY = "io.nvmeof.tcp.spinMicros";
    /** The default spin window: 200 µs. */
    public static final long DEFAULT_SPIN_MICROS = 200;

    private static final IdlePolicy BUSY = new IdlePolicy(true, Long.MAX_VALUE);
    private static final IdlePolicy SPIN_THEN_SLEEP = new IdlePolicy(false, spinNanos(System.getProperties()));

    private final boolean busyPoll;
    private final long spinNanos;

    private IdlePolicy(boolean busyPoll, long spinNanos) {
        this.busyPoll = busyPoll;
        this.spinNanos = spinNanos;
    }

    /** The policy of a queue thread in {@code mode}: busy polling, or spin-then-sleep with this JVM's window. */
    public static IdlePolicy of(IoMode mode) {
        return of(mode.busyPoll());
    }

    /** {@link #of(IoMode)} by the busy-poll flag alone. */
    public static IdlePolicy of(boolean busyPoll) {
        return busyPoll ? BUSY : SPIN_THEN_SLEEP;
    }

    /**
     * The spin window the given system properties set: {@value #SPIN_MICROS_PROPERTY}, else the deprecated
     * {@value #TCP_SPIN_MICROS_PROPERTY}, else {@value #DEFAULT_SPIN_MICROS} µs. Read as {@link Long#getLong} reads
     * a property: a value that is not a number gives the default; a negative one counts as 0.
     */
    static long spinNanos(Properties properties) {
        String v = properties.getProperty(SPIN_MICROS_PROPERTY);
        if (v == null) {
            v = properties.getProperty(TCP_SPIN_MICROS_PROPERTY);
        }
        long micros = DEFAULT_SPIN_MICROS;
        if (v != null) {
            try {
                micros = Long.decode(v);
            } catch (NumberFormatException e) {
                micros = DEFAULT_SPIN_MICROS;
            }
        }
        return TimeUnit.MICROSECONDS.toNanos(Math.max(0, micros));
    }

    /** Spin without ever sleeping while the queues are in use. */
    public boolean busyPoll() {
        return busyPoll;
    }

    /** How long an idle thread spins before it sleeps; {@link Long#MAX_VALUE} when busy polling. */
    public long spinNanos() {
        return spinNanos;
    }

    /** Whether a thread that has been idle for {@code idleNanos} should now sleep; never when busy polling. */
    public boolean shouldSleep(long idleNanos) {
        return !busyPoll && idleNanos >= spinNanos;
    }

    @Override
    public String toString() {
        return busyPoll ? "busy-poll" : "spin " + TimeUnit.NANOSECONDS.toMicros(spinNanos) + " µs, then sleep";
    }
}

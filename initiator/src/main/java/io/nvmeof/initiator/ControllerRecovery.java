package io.nvmeof.initiator;

import io.nvmeof.core.spi.HostQueue;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reconnects a controller whose connection was lost, with the Linux host's options and order (nvme_tcp
 * error_recovery_work, reconnect_ctrl_work, nvmf_should_reconnect; nvmeof-protocol.md §7.3):
 *
 * <ol>
 *   <li>LIVE → RECONNECTING (a queue closed, Keep Alive failed or got no answer, or a command timed out): every queue
 *       is gated, Keep Alive stops, every connection is closed. I/O commands in flight or submitted from now on park
 *       in their slots ({@link CommandSlot}).</li>
 *   <li>Every {@code reconnect_delay}: an attempt ({@link ControllerBringUp#reconnect}): admin Connect with the same
 *       Host NQN and Host Identifier, enable, Identify (the same subsystem), the I/O queues on new connections, the
 *       namespaces checked by NGUID/EUI64/UUID; DH-HMAC-CHAP on each queue whose Connect asks for it, with the same
 *       secrets. A failed attempt closes what it opened. A key refused in DH-HMAC-CHAP ends the reconnect at once
 *       with {@link NvmeControllerLostException} (as Linux after -EKEYREJECTED); any other failure, an authentication
 *       that broke off included, waits for the next attempt.</li>
 *   <li>Success: RECONNECTING → LIVE, Keep Alive again, the gates open and the parked commands go out again.</li>
 *   <li>{@code fast_io_fail_tmo} after the loss: parked and new I/O fails with {@link NvmeFastIoFailException}
 *       (attempts go on).</li>
 *   <li>{@code ctrl_loss_tmo} after the loss (or when the next attempt would start after it): FAILED, at that moment
 *       even if an attempt is under way; every parked and later command fails with
 *       {@link NvmeControllerLostException}.</li>
 * </ol>
 *
 * <p>Attempts run on this controller's reconnect thread; the two time limits on its timer thread. The state changes
 * are compare-and-set on {@link ControllerStates}, so an attempt that succeeds just as ctrl_loss_tmo passes either
 * goes live or is closed again, never both.
 */
final class ControllerRecovery {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");

    private final Controller controller;
    private final ScheduledExecutorService worker;
    private volatile Thread workerThread;
    private final AtomicLong reconnects = new AtomicLong();

    // Written under the controller's state change (one loss at a time), read by the timers and the worker.
    private volatile long lostAtNanos;
    private volatile NvmeException lastError;
    private volatile int attempts;
    private volatile ScheduledFuture<?> lossTimer;
    private volatile ScheduledFuture<?> fastFailTimer;
    private volatile NvmeException fastFail;
    private volatile long lastAttemptMillis;

    ControllerRecovery(Controller controller, String threadName) {
        this.controller = controller;
        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            workerThread = t;
            return t;
        });
    }

    /** Whether the caller is the reconnect thread (its commands go past the gates). */
    boolean isWorker() {
        return Thread.currentThread() == workerThread;
    }

    /** Successful reconnects so far. */
    long reconnects() {
        return reconnects.get();
    }

    /** How long the last successful attempt took, from its start to LIVE (diagnostics, the timing test). */
    long lastAttemptMillis() {
        return lastAttemptMillis;
    }

    /** Whether a command without an outcome yet may still get one later: reconnecting (or retrying), not lost. */
    boolean mayStillComplete() {
        ControllerState s = controller.states().get();
        return controller.reconnects() && (s == ControllerState.LIVE || s == ControllerState.RECONNECTING);
    }

    /** Set once fast_io_fail_tmo passed while reconnecting; null otherwise (and always once LIVE again). */
    NvmeException fastFail() {
        NvmeException f = fastFail;
        return f != null && controller.state() == ControllerState.RECONNECTING ? f : null;
    }

    /** The controller was LIVE and is RECONNECTING now (the caller made that change): tear down and start over. */
    void start(NvmeException cause) {
        lostAtNanos = System.nanoTime();
        lastError = cause;
        attempts = 0;
        fastFail = null;
        controller.timer().stopKeepAlive();
        controller.queues().gateAll();
        Duration loss = controller.ctrlLossTimeout();
        lossTimer = loss.isNegative() ? null : controller.timer().schedule(this::ctrlLossTimedOut, loss.toNanos());
        Duration fast = controller.fastIoFailTimeout();
        fastFailTimer =
                fast.isNegative() ? null : controller.timer().schedule(this::fastIoFailTimedOut, fast.toNanos());
        worker.execute(() -> {
            controller.queues().disconnectAll();
            scheduleAttempt();
        });
    }

    private void scheduleAttempt() {
        if (controller.state() != ControllerState.RECONNECTING) {
            return;
        }
        long delay = controller.reconnectDelay().toNanos();
        Duration loss = controller.ctrlLossTimeout();
        if (!loss.isNegative() && System.nanoTime() + delay - (lostAtNanos + loss.toNanos()) > 0) {
            // Linux: nvmf_should_reconnect says no when the next attempt would come after ctrl_loss_tmo.
            ctrlLossTimedOut();
            return;
        }
        worker.schedule(this::attempt, delay, TimeUnit.NANOSECONDS);
    }

    private void attempt() {
        if (controller.state() != ControllerState.RECONNECTING) {
            return;
        }
        int n = ++attempts;
        long started = System.nanoTime();
        try {
            new ControllerBringUp(controller).reconnect();
        } catch (NvmeException | RuntimeException e) {
            lastError = e instanceof NvmeException ne ? ne : new NvmeException(String.valueOf(e.getMessage()), e);
            LOG.log(Level.INFO, () -> controller + ": reconnect attempt " + n + " failed: " + e.getMessage());
            controller.queues().disconnectAll();
            if (e instanceof NvmeControllerLostException lost) {
                controller.teardown().fail(lost);
                return;
            }
            if (e instanceof NvmeAuthenticationException auth && auth.keyRejected()) {
                // The Linux host does not reconnect after -EKEYREJECTED (nvmf_should_reconnect): the same secrets
                // would be refused again. Other authentication failures are failed attempts like any other.
                controller
                        .teardown()
                        .fail(new NvmeControllerLostException(
                                "controller lost: reconnect attempt " + n + " to " + controller.hostPort()
                                        + " failed DH-HMAC-CHAP with a rejected key, not retried: " + e.getMessage(),
                                auth));
                return;
            }
            scheduleAttempt();
            return;
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostAtNanos);
        if (!goLive("reconnected after " + n + " attempt(s), " + ms + " ms after the loss")) {
            // ctrl_loss_tmo or close() came first: what the attempt opened is closed by them or here.
            controller.queues().disconnectAll();
            return;
        }
        lastAttemptMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        reconnects.incrementAndGet();
    }

    /** Opens the gates (after the state is LIVE again): parked commands go out. */
    void resume() {
        controller.queues().goLiveAll();
        int kato = controller.keepAliveTimeoutMillis();
        if (kato > 0) {
            controller.timer().startKeepAlive(kato);
        }
    }

    private void fastIoFailTimedOut() {
        if (controller.state() != ControllerState.RECONNECTING) {
            return;
        }
        NvmeException e = new NvmeFastIoFailException(
                "fast_io_fail_tmo " + controller.fastIoFailTimeout().toMillis() + " ms passed while reconnecting to "
                        + controller.hostPort() + " (last error: " + describe(lastError) + ")",
                lastError);
        fastFail = e;
        int n = controller.queues().failParked(0, e);
        LOG.log(Level.WARNING, () -> controller + ": " + e.getMessage() + "; " + n + " waiting command(s) failed");
    }

    private void ctrlLossTimedOut() {
        if (controller.state() != ControllerState.RECONNECTING) {
            return;
        }
        Duration loss = controller.ctrlLossTimeout();
        controller
                .teardown()
                .fail(new NvmeControllerLostException(
                        "controller lost: not reconnected to " + controller.hostPort() + " within ctrl_loss_tmo "
                                + loss.toMillis() + " ms (" + attempts + " attempt(s); last error: "
                                + describe(lastError)
                                + ")",
                        lastError));
    }

    private static String describe(NvmeException e) {
        return e == null ? "none" : e.getMessage();
    }

    private void cancelTimers() {
        ScheduledFuture<?> t = lossTimer;
        if (t != null) {
            t.cancel(false);
        }
        t = fastFailTimer;
        if (t != null) {
            t.cancel(false);
        }
    }

    /**
     * A command timed out and was told so (no reconnect, or not an I/O command): recover or fail the controller (its
     * queues close, every other command fails), nvmeof-protocol.md §7.3.
     */
    void commandTimedOut(CommandQueue q, HostQueue connection, NvmeTimeoutException e) {
        connectionLost(q, connection, e);
    }

    /**
     * The connection {@code connection} of queue {@code q} failed: it closed, a Keep Alive on it failed or got no
     * answer, or a command on it timed out. While LIVE this starts a reconnect ({@link ControllerRecovery}), or fails
     * the controller when reconnecting is off; while CONNECTING it fails the bring-up. A report about a connection
     * that is no longer the queue's (an old one, closed by a reconnect) is ignored, as is any while reconnecting.
     */
    void connectionLost(CommandQueue q, HostQueue connection, NvmeException cause) {
        if (controller.teardown().isClosing() || q == null) {
            return;
        }
        if ((q.qid == 0 && controller.queues().admin() != q) || (connection != null && q.transport != connection)) {
            return; // stale
        }
        ControllerState s = controller.states().get();
        if (s == ControllerState.CONNECTING || (s == ControllerState.LIVE && !controller.reconnects())) {
            controller
                    .teardown()
                    .fail(
                            cause instanceof NvmeTimeoutException
                                    ? new NvmeTimeoutException("controller failed: " + cause.getMessage())
                                    : cause);
        } else if (s == ControllerState.LIVE
                && controller
                        .states()
                        .change(ControllerState.LIVE, ControllerState.RECONNECTING, cause.getMessage(), cause)) {
            LOG.log(
                    Level.WARNING,
                    "controller " + controller.cntlid() + " of "
                            + controller.uri().connectNqn() + " at "
                            + controller.hostPort() + " lost ("
                            + cause.getMessage() + "); reconnecting every "
                            + controller.reconnectDelay().toMillis()
                            + " ms, ctrl_loss_tmo " + describeTmo(controller.ctrlLossTimeout()));
            start(cause);
        }
    }

    private static String describeTmo(Duration d) {
        return d.isNegative() ? "-1 (for ever)" : d.toMillis() + " ms";
    }

    /** A queue closed on its own (connection lost, target closed it). */
    void queueClosed(CommandQueue q, HostQueue connection, Throwable cause) {
        if (controller.teardown().isClosing()) {
            return;
        }
        connectionLost(
                q,
                connection,
                new NvmeTransportException(
                        q.name() + " of " + controller.uri().connectNqn() + " at " + controller.hostPort() + " closed"
                                + (cause != null ? ": " + cause.getMessage() : ""),
                        cause));
    }

    /** A reconnect attempt succeeded: RECONNECTING → LIVE and the gates open; false if the controller was lost or closed meanwhile. */
    boolean goLive(String reason) {
        // This loss's timers, taken before LIVE: a new loss may start (and set its own) as soon as the state is LIVE.
        ScheduledFuture<?> loss = lossTimer;
        ScheduledFuture<?> fast = fastFailTimer;
        synchronized (controller) { // against ControllerTeardown.fail and close
            if (controller.teardown().isClosing() || controller.teardown().failure() != null) {
                return false;
            }
            if (!controller.states().change(ControllerState.RECONNECTING, ControllerState.LIVE, reason, null)) {
                return false;
            }
        }
        if (loss != null) {
            loss.cancel(false);
        }
        if (fast != null) {
            fast.cancel(false);
        }
        resume();
        // A connection that died between the attempt and now reported while RECONNECTING (ignored): look again.
        for (CommandQueue q : controller.queues().io()) {
            if (!q.transport.isOpen()) {
                connectionLost(q, q.transport, new NvmeTransportException(q.name() + " closed while reconnecting"));
                break;
            }
        }
        return true;
    }

    /** Why a parked command must fail now, or null while it may wait: lost, closed, or fast_io_fail_tmo passed. */
    NvmeException parkedFailure() {
        NvmeException f = controller.teardown().failure();
        if (f != null) {
            return f;
        }
        if (controller.teardown().isClosing()) {
            return new NvmeTransportException("the controller was closed");
        }
        return fastFail();
    }

    /** The error of a command that cannot wait for the reconnect (admin, reservations): it is not sent. */
    NvmeException notLiveError(String what) {
        NvmeException dead = parkedFailure();
        if (dead != null) {
            return dead instanceof NvmeControllerLostException
                    ? new NvmeControllerLostException(what + " not sent: " + dead.getMessage(), dead)
                    : new NvmeTransportException(what + " not sent: " + dead.getMessage(), dead);
        }
        return new NvmeTransportException(
                what + " not sent: the controller is reconnecting to " + controller.hostPort());
    }

    /**
     * Waits (up to {@code nanos}) while the controller reconnects, for an admin command of the application's; returns
     * the admin queue to use then ({@code q} unless a reconnect replaced it).
     */
    CommandQueue awaitNotReconnecting(CommandQueue q, long nanos) {
        if (q.qid != 0 || controller.states().get() != ControllerState.RECONNECTING) {
            return q;
        }
        long end = System.nanoTime() + nanos;
        // LIVE comes just before the gates open: wait for the admin queue's too.
        while ((controller.states().get() == ControllerState.RECONNECTING
                        || (controller.states().get() == ControllerState.LIVE
                                && controller.queues().admin().live == null))
                && System.nanoTime() - end < 0) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        CommandQueue now = controller.queues().admin();
        return now != null ? now : q;
    }

    /** Stops attempts (the controller is lost or closed). */
    void shutdown() {
        cancelTimers();
        worker.shutdownNow();
    }
}

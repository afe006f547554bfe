package io.nvmeof.initiator;

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
 *       namespaces checked by NGUID/EUI64/UUID. A failed attempt closes what it opened.</li>
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

    /** Set once fast_io_fail_tmo passed while reconnecting; null otherwise. */
    NvmeException fastFail() {
        return fastFail;
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
        if (!loss.isNegative()) {
            lossTimer = controller.timer().schedule(this::ctrlLossTimedOut, loss.toNanos());
        }
        Duration fast = controller.fastIoFailTimeout();
        if (!fast.isNegative()) {
            fastFailTimer = controller.timer().schedule(this::fastIoFailTimedOut, fast.toNanos());
        }
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
                controller.lost(lost);
                return;
            }
            scheduleAttempt();
            return;
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostAtNanos);
        if (!controller.goLive("reconnected after " + n + " attempt(s), " + ms + " ms after the loss")) {
            // ctrl_loss_tmo or close() came first: what the attempt opened is closed by them or here.
            controller.queues().disconnectAll();
            return;
        }
        lastAttemptMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        reconnects.incrementAndGet();
        cancelTimers();
        fastFail = null;
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
        controller.lost(new NvmeControllerLostException(
                "controller lost: not reconnected to " + controller.hostPort() + " within ctrl_loss_tmo "
                        + loss.toMillis() + " ms (" + attempts + " attempt(s); last error: " + describe(lastError)
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

    /** Stops attempts (the controller is lost or closed). */
    void shutdown() {
        cancelTimers();
        worker.shutdownNow();
    }
}

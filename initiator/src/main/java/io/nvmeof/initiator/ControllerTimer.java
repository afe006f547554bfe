package io.nvmeof.initiator;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.HostQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The controller's timer thread and its two periodic tasks: the command-timeout scan, every timeout/20 (5..200 ms),
 * and Keep Alive, every KATO/2 (nvmeof-protocol.md §3.5, §7.8; Linux's nvme_keep_alive_work). A Keep Alive that fails
 * or gets no answer within KATO fails the controller, as does a command past its deadline (the scan finds it).
 *
 * <p>After a failure only Keep Alive stops: the timeout scan keeps running until {@link #shutdown()}, so a transport
 * that never answers still cannot hang a caller.
 */
final class ControllerTimer {
    private final Controller controller;
    private final ScheduledExecutorService timer;
    private volatile ScheduledFuture<?> keepAlive;

    ControllerTimer(Controller controller, String threadName) {
        this.controller = controller;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the timeout scan with a tick of timeout/20, between 5 and 200 ms. */
    void startTimeoutScan(long timeoutMillis) {
        long tick = Math.max(5, Math.min(200, timeoutMillis / 20));
        timer.scheduleWithFixedDelay(controller.queues()::checkTimeouts, tick, tick, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts Keep Alive every KATO/2 (nvmeof-protocol.md §3.5, §7.8); Linux checks at KATO/2 too (KATO/4 only with
     * TBKAS).
     */
    void startKeepAlive(long katoMillis) {
        stopKeepAlive();
        long period = Math.max(1, katoMillis / 2);
        keepAlive = timer.scheduleAtFixedRate(() -> sendKeepAlive(katoMillis), period, period, TimeUnit.MILLISECONDS);
    }

    private void sendKeepAlive(long katoMillis) {
        if (!controller.teardown().isLive()) {
            return;
        }
        // The Keep Alive itself times out after KATO, which starts the error recovery like Linux's
        // (nvmeof-protocol.md §3.5): a reconnect, or the controller fails.
        CommandQueue admin = controller.queues().admin();
        HostQueue connection = admin.transport;
        CompletableFuture<CommandSlot.Completion> f =
                controller.commands().trySubmit(AdminOpcode.KEEP_ALIVE, TimeUnit.MILLISECONDS.toNanos(katoMillis));
        if (f == null) {
            return; // every admin slot busy: the controller sees traffic anyway; try at the next period
        }
        f.whenComplete((c, err) -> {
            if (controller.teardown().isClosing()) {
                return;
            }
            if (err != null) {
                controller
                        .recovery()
                        .connectionLost(
                                admin,
                                connection,
                                err instanceof NvmeException ne
                                        ? ne
                                        : new NvmeTransportException("Keep Alive failed: " + err, err));
            } else if (!c.ok()) {
                controller
                        .recovery()
                        .connectionLost(
                                admin,
                                connection,
                                new NvmeTransportException("Keep Alive failed: " + Status.toString(c.status())));
            }
        });
    }

    /** Runs {@code task} once after {@code delayNanos} on the timer thread (ctrl_loss_tmo, fast_io_fail_tmo). */
    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        return timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    /** Stops Keep Alive; the timeout scan goes on. */
    void stopKeepAlive() {
        ScheduledFuture<?> k = keepAlive;
        if (k != null) {
            k.cancel(false);
        }
    }

    /** Stops the thread and both tasks. */
    void shutdown() {
        timer.shutdownNow();
    }
}

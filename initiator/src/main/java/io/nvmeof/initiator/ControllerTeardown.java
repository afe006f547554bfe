package io.nvmeof.initiator;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How a {@link Controller} ends (nvmeof-protocol.md §7.3): the closed, closing and failed state every part asks
 * about, a failure (error recovery: every queue closed without writing CC, the controller FAILED) and
 * {@link Controller#close()} (the orderly shutdown: the I/O queues, CC.SHN, then the admin queue), and what a failed
 * bring-up leaves to release. Owned by one controller. Its flags are read from any thread; a failure and a close
 * decide under the controller's monitor, which {@link ControllerRecovery} holds too while it swaps the queues.
 */
final class ControllerTeardown {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");

    private final Controller controller;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean closing;
    private volatile NvmeException failure;

    ControllerTeardown(Controller controller) {
        this.controller = controller;
    }

    /** The reason the controller failed, or null while it works. */
    NvmeException failure() {
        return failure;
    }

    /** Whether the controller is connected and has not failed. */
    boolean isOpen() {
        return !closed.get() && failure == null;
    }

    /** close() or a failed bring-up has begun: no new command, no new buffer. */
    boolean isClosed() {
        return closed.get();
    }

    /** Fails the controller: closes every queue without writing CC (error recovery, nvmeof-protocol.md §7.3). Idempotent. */
    void fail(NvmeException cause) {
        synchronized (controller) {
            if (failure != null || closing) {
                return;
            }
            failure = cause;
        }
        controller.states().changeFromAny(ControllerState.FAILED, cause.getMessage(), cause);
        LOG.log(
                Level.WARNING,
                "controller " + controller.cntlid + " of " + controller.uri().connectNqn() + " at "
                        + controller.hostPort() + " failed: " + cause.getMessage());
        // The timeout scan keeps running: commands the transport never answers still need their deadline.
        controller.timer().stopKeepAlive();
        controller.recovery().shutdown();
        controller.queues().closeAll(cause);
    }

    /** Why a new command cannot be sent now, or null if it can. */
    NvmeException unusable() {
        NvmeException f = failure;
        if (f != null) {
            return f instanceof NvmeControllerLostException
                    ? new NvmeControllerLostException(f.getMessage(), f)
                    : new NvmeTransportException("controller failed: " + f.getMessage(), f);
        }
        if (closed.get()) {
            return new NvmeTransportException("the controller is closed");
        }
        NvmeException fast = controller.recovery().fastFail();
        if (fast != null) {
            return new NvmeFastIoFailException(fast.getMessage(), fast);
        }
        return null;
    }

    /** Neither closing nor failed: Keep Alive and AERs may go out. */
    boolean isRunning() {
        return !closing && failure == null;
    }

    /** Whether a Keep Alive may go out now: running and LIVE (not while reconnecting). */
    boolean isLive() {
        return isRunning() && controller.states().get() == ControllerState.LIVE;
    }

    /** close() or a failed bring-up has started: queue closes and late completions are expected. */
    boolean isClosing() {
        return closing;
    }

    /** {@link Controller#close()}: the orderly shutdown, or after a failure only the release of what is left. */
    void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ControllerQueues queues = controller.queues();
        ControllerTimer timer = controller.timer();
        ControllerStates states = controller.states();
        NvmeTransportException cause = new NvmeTransportException("the controller was closed");
        boolean orderly;
        synchronized (controller) {
            orderly = failure == null;
            closing = true;
        }
        timer.stopKeepAlive();
        controller.recovery().shutdown();
        orderly &= states.get() == ControllerState.LIVE;
        queues.closeIo(cause);
        if (orderly && controller.registers().enabled() && queues.admin() != null) {
            try {
                controller.registers().shutdown();
            } catch (NvmeException e) {
                LOG.log(
                        Level.WARNING,
                        "orderly shutdown of controller " + controller.cntlid + " failed: " + e.getMessage());
            }
        }
        queues.closeAdmin(cause);
        timer.shutdown();
        controller.asyncEvents().shutdown();
        controller.namespaceScanner().deactivateAll();
        states.changeFromAny(ControllerState.DELETED, "closed", null);
        states.shutdown();
        LOG.log(
                Level.INFO,
                () -> "closed controller " + controller.cntlid + " of "
                        + controller.uri().connectNqn() + " at " + controller.hostPort());
    }

    /** Closes whatever a failed bring-up opened, without a shutdown handshake. */
    void abort() {
        closed.set(true);
        closing = true;
        controller.recovery().shutdown();
        controller.queues().closeAll(new NvmeTransportException("connect failed"));
        controller.timer().shutdown();
        controller.asyncEvents().shutdown();
        controller.states().shutdown();
    }
}

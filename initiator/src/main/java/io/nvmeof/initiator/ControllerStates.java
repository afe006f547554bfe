package io.nvmeof.initiator;

import java.lang.System.Logger.Level;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * A controller's {@link ControllerState} and its {@link ControllerStateListener}s. Changes are made under this
 * object's monitor (cold path: a connection is lost or comes back) and told to the listeners in order on the
 * controller's state thread, never on the thread that made the change (often a queue's thread).
 */
final class ControllerStates {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");

    private final Controller controller;
    private final CopyOnWriteArrayList<ControllerStateListener> listeners = new CopyOnWriteArrayList<>();
    private final ExecutorService notifier;
    private volatile ControllerState state;

    ControllerStates(Controller controller, Iterable<ControllerStateListener> initial, String threadName) {
        this.controller = controller;
        for (ControllerStateListener l : initial) {
            listeners.add(l);
        }
        this.notifier = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        this.state = ControllerState.CONNECTING;
        tell(new ControllerStateEvent(controller, null, ControllerState.CONNECTING, "connecting", null));
    }

    ControllerState get() {
        return state;
    }

    void addListener(ControllerStateListener l) {
        listeners.add(l);
    }

    void removeListener(ControllerStateListener l) {
        listeners.remove(l);
    }

    /** Moves from {@code from} to {@code to}; false (and nothing told) if the state is not {@code from}. */
    synchronized boolean change(ControllerState from, ControllerState to, String reason, NvmeException cause) {
        if (state != from) {
            return false;
        }
        state = to;
        tell(new ControllerStateEvent(controller, from, to, reason, cause));
        return true;
    }

    /** Moves to {@code to} from any state but {@code to} itself and DELETED; returns the state before. */
    synchronized ControllerState changeFromAny(ControllerState to, String reason, NvmeException cause) {
        ControllerState from = state;
        if (from == to || from == ControllerState.DELETED) {
            return from;
        }
        state = to;
        tell(new ControllerStateEvent(controller, from, to, reason, cause));
        return from;
    }

    private void tell(ControllerStateEvent e) {
        LOG.log(e.cause() == null ? Level.INFO : Level.WARNING, () -> controller + ": " + e);
        if (listeners.isEmpty()) {
            return;
        }
        try {
            notifier.execute(() -> {
                for (ControllerStateListener l : listeners) {
                    try {
                        l.stateChanged(e);
                    } catch (RuntimeException ex) {
                        LOG.log(Level.WARNING, "a controller state listener threw", ex);
                    }
                }
            });
        } catch (RejectedExecutionException ex) {
            // shut down: nothing to tell any more
        }
    }

    /** Tells what is queued (DELETED included), then stops the thread. */
    void shutdown() {
        notifier.shutdown();
    }
}

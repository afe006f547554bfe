package io.nvmeof.initiator;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.Status;
import java.lang.System.Logger.Level;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Asynchronous events (nvmeof-protocol.md §3.6): enables the events the host handles, keeps one Asynchronous Event
 * Request outstanding, and handles each completion on the controller's event thread: re-issue the request first, as
 * Linux does, then for "namespace attribute changed" let the {@link NamespaceScanner} rescan; then every
 * {@link AsyncEventListener} is told (the multipath layer reads the ANA log on "ANA change"). Events nobody handles
 * are logged.
 *
 * <p>The event thread is the one that runs {@link NamespaceChangeListener}s; it never runs on a queue's thread.
 */
final class AsyncEvents {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");
    /** OAES bits the host enables: NS attribute (8), FW activation (9), ANA (11), discovery log change (31), nvmeof-protocol.md §3.4. */
    static final int OAES_HOST_MASK = 0x80000B00;
    /** Asynchronous Event Configuration (Set Features FID 0x0B, nvmeof-protocol.md §3.4). */
    private static final int FID_ASYNC_EVENT_CONFIGURATION = 0x0B;

    private final Controller controller;
    private final NamespaceScanner scanner;
    private final ExecutorService events;
    private final CopyOnWriteArrayList<AsyncEventListener> listeners = new CopyOnWriteArrayList<>();

    AsyncEvents(Controller controller, NamespaceScanner scanner, String threadName) {
        this.controller = controller;
        this.scanner = scanner;
        this.events = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Set Features Asynchronous Event Configuration with OAES & 0x80000B00, then the first AER. Linux sends no AER
     * unless that mask is non-zero; a refused Set Features leaves events off with a warning.
     */
    void enable(int oaes) throws NvmeException {
        int mask = oaes & OAES_HOST_MASK;
        if (mask == 0) {
            return;
        }
        CommandSlot.Completion c = controller.commands().setFeatures(FID_ASYNC_EVENT_CONFIGURATION, mask, false);
        if (!c.ok()) {
            LOG.log(
                    Level.WARNING,
                    "Set Features Asynchronous Event Configuration failed: " + Status.toString(c.status()));
            return;
        }
        submitRequest();
    }

    private void submitRequest() {
        if (!controller.teardown().isRunning()) {
            return;
        }
        // No timeout: the controller holds an AER until an event happens (nvmeof-protocol.md §3.6).
        CompletableFuture<CommandSlot.Completion> f =
                controller.commands().trySubmit(AdminOpcode.ASYNC_EVENT_REQUEST, 0);
        if (f == null) {
            LOG.log(Level.WARNING, "no admin slot for an Asynchronous Event Request; namespace events are off");
            return;
        }
        f.whenComplete((c, err) -> {
            if (err != null || !controller.teardown().isRunning()) {
                return;
            }
            if (!c.ok()) {
                // Linux does not re-issue after an error status (nvmeof-protocol.md §3.6).
                LOG.log(Level.WARNING, "Asynchronous Event Request failed: " + Status.toString(c.status()));
                return;
            }
            events.execute(() -> onEvent(c.dw0()));
        });
    }

    /** The event thread: one AER completion, DW0 = type (2:0), information (15:8), log page (23:16). */
    private void onEvent(int dw0) {
        int type = dw0 & 0x7;
        int info = (dw0 >>> 8) & 0xFF;
        int lid = (dw0 >>> 16) & 0xFF;
        submitRequest(); // re-issue first, as Linux does
        try {
            if (type == 2 && info == 0x00) {
                scanner.namespacesChanged();
            } else if (listeners.isEmpty()) {
                LOG.log(
                        Level.INFO,
                        String.format("asynchronous event type %d info 0x%02x log 0x%02x ignored", type, info, lid));
            }
        } catch (NvmeException e) {
            if (!controller.teardown().isClosing()) {
                LOG.log(
                        Level.WARNING,
                        "handling asynchronous event 0x" + Integer.toHexString(dw0) + " failed: " + e.getMessage());
            }
        }
        for (AsyncEventListener l : listeners) {
            try {
                l.asyncEvent(type, info, lid);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "an asynchronous event listener threw", e);
            }
        }
    }

    void addListener(AsyncEventListener listener) {
        listeners.add(listener);
    }

    void removeListener(AsyncEventListener listener) {
        listeners.remove(listener);
    }

    /** Runs {@code task} on the event thread (the namespace listeners after a reconnect); dropped once shut down. */
    void execute(Runnable task) {
        try {
            events.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // shut down: the controller is closed
        }
    }

    /** Stops the event thread. */
    void shutdown() {
        events.shutdownNow();
    }
}

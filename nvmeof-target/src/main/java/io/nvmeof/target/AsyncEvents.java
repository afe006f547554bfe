package io.nvmeof.target;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.TreeSet;

/**
 * The asynchronous events of one controller (nvmeof-protocol.md §3.6): the Asynchronous Event Requests it holds, the
 * Asynchronous Event Configuration feature (§3.4) that enables the notices, the events pending or masked until the
 * host reads their log page, and the Changed Namespace List behind the namespace notice (§3.3). Owned by its
 * {@link Controller}; used only on the admin queue's thread (events raised elsewhere hop there with
 * {@code QueueChannel.execute}).
 */
final class AsyncEvents {
    /** AER completion DW0 (nvmeof-protocol.md §3.6): notice (type 2), namespace attribute changed (info 0x00), log 0x04. */
    static final int EVENT_NAMESPACE_CHANGED = 0x00040002;
    /** AER completion DW0 (nvmeof-protocol.md §3.6): notice, discovery log page change (info 0xF0), log 0x70. */
    static final int EVENT_DISCOVERY_CHANGED = 0x0070F002;
    /** AER completion DW0 (nvmeof-protocol.md §3.6): notice, ANA change (info 0x03), log 0x0C. */
    static final int EVENT_ANA_CHANGED = 0x000C0302;
    /** AER completion DW0: I/O command set specific (type 6), reservation log page available (info 0x00), log 0x80. */
    static final int EVENT_RESERVATION_LOG = 0x00800006;
    /** Asynchronous Event Configuration bits that enable those notices (nvmeof-protocol.md §3.4). */
    private static final int AEC_NAMESPACE_NOTICE = 1 << 8;

    private static final int AEC_DISCOVERY_NOTICE = 1 << 31;
    /** AEC bit 11: ANA change notices (AnaGroups). */
    private static final int AEC_ANA_NOTICE = 1 << 11;
    /** AEC bits 7:0: SMART critical-warning events; accepted (never raised: RAM does not wear). */
    private static final int AEC_SMART_MASK = 0xFF;

    private static final int PENDING_NAMESPACE = 1;
    private static final int PENDING_DISCOVERY = 2;
    private static final int PENDING_ANA = 4;
    private static final int PENDING_RESERVATION = 8;

    private final Controller controller;
    private final QueueSession admin;
    private final ArrayDeque<TargetRequest> heldAers = new ArrayDeque<>();
    private final TreeSet<Integer> changedNamespaces = new TreeSet<>();
    private int configuration;
    private int pendingEvents;
    private int maskedEvents;

    AsyncEvents(Controller controller, QueueSession admin) {
        this.controller = controller;
        this.admin = admin;
    }

    // ---- Asynchronous Event Configuration (feature 0x0B) ----

    /** The AEC bits this controller can raise: the discovery notice, or the namespace and ANA notices and SMART warnings. */
    int configurable() {
        return controller.isDiscovery()
                ? AEC_DISCOVERY_NOTICE
                : (AEC_NAMESPACE_NOTICE | AEC_ANA_NOTICE | AEC_SMART_MASK);
    }

    int configuration() {
        return configuration;
    }

    void configure(int value) {
        configuration = value;
    }

    // ---- Asynchronous Event Request ----

    /** Holds the request until an event comes; returns {@link QueueSession#PENDING}, or a status if over AERL. */
    int request(TargetRequest request) {
        if (heldAers.size() > ControllerProfile.AERL) {
            return Status.dnr(Status.ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED);
        }
        heldAers.add(request);
        deliver();
        return QueueSession.PENDING;
    }

    /**
     * Abort of a held request: completes the AER with CID {@code cid} with Command Abort Requested and returns true,
     * or false if no held AER has that CID.
     */
    boolean abort(int cid) {
        for (TargetRequest aer : heldAers) {
            if (aer.command().cid() == cid) {
                heldAers.remove(aer);
                admin.complete(aer, Status.ABORT_REQUESTED);
                return true;
            }
        }
        return false;
    }

    int heldCount() {
        return heldAers.size();
    }

    /** The admin queue is gone: the held requests die with it (the transport releases them). */
    void dropHeld() {
        heldAers.clear();
    }

    // ---- events ----

    /** A namespace of this controller's subsystem appeared or went away: remember it for log 0x04 and raise the notice. */
    void namespaceChanged(int nsid) {
        admin.channel().execute(() -> {
            if (changedNamespaces.size() < LogPages.CHANGED_NS_MAX) {
                changedNamespaces.add(nsid);
            } else {
                changedNamespaces.add(
                        0xFFFFFFFF); // more than 1024 changed: entry 0 = 0xFFFFFFFF (nvmeof-protocol.md §3.3)
            }
            if ((configuration & AEC_NAMESPACE_NOTICE) != 0) {
                raise(PENDING_NAMESPACE);
            }
        });
    }

    /** The discovery log changed: raise the notice on a discovery controller that enabled it. */
    void discoveryChanged() {
        admin.channel().execute(() -> {
            if ((configuration & AEC_DISCOVERY_NOTICE) != 0) {
                raise(PENDING_DISCOVERY);
            }
        });
    }

    /** An ANA group's state on this controller's path, or a group's namespaces, changed: raise the ANA notice. */
    void anaChanged() {
        admin.channel().execute(() -> {
            if ((configuration & AEC_ANA_NOTICE) != 0) {
                raise(PENDING_ANA);
            }
        });
    }

    /** The host read the ANA log (0x0C); unless RAE, the ANA notice is unmasked. */
    void anaLogRead(boolean retainEvent) {
        if (!retainEvent) {
            maskedEvents &= ~PENDING_ANA;
        }
    }

    /** Log page 0x04 as read now; unless RAE, the list is cleared and the namespace notice unmasked. */
    ByteBuffer changedNamespaceLog(boolean retainEvent) {
        ByteBuffer log = LogPages.changedNamespaces(changedNamespaces);
        if (!retainEvent) {
            changedNamespaces.clear();
            maskedEvents &= ~PENDING_NAMESPACE;
        }
        return log;
    }

    /** The host read the discovery log; unless RAE, the discovery notice is unmasked. */
    void discoveryLogRead(boolean retainEvent) {
        if (!retainEvent) {
            maskedEvents &= ~PENDING_DISCOVERY;
        }
    }

    /** A reservation notice was queued in log 0x80 (ReservationNotices): raise the event; no AEC bit gates it. */
    void reservationNotice() {
        admin.channel().execute(() -> raise(PENDING_RESERVATION));
    }

    /** The host read log 0x80; unless RAE the event is unmasked, and raised again if notices remain. */
    void reservationLogRead(boolean retainEvent, boolean more) {
        if (!retainEvent) {
            maskedEvents &= ~PENDING_RESERVATION;
            if (more) {
                raise(PENDING_RESERVATION);
            }
        }
    }

    private void raise(int event) {
        if (controller.isClosed() || (maskedEvents & event) != 0) {
            // Closed, or the host has not read the log of the last one yet: the event stays masked (§3.6).
            return;
        }
        pendingEvents |= event;
        deliver();
    }

    private void deliver() {
        while (pendingEvents != 0 && !heldAers.isEmpty()) {
            int event = Integer.lowestOneBit(pendingEvents);
            pendingEvents &= ~event;
            maskedEvents |= event;
            TargetRequest aer = heldAers.poll();
            aer.response()
                    .dw0(
                            event == PENDING_NAMESPACE
                                    ? EVENT_NAMESPACE_CHANGED
                                    : event == PENDING_ANA
                                            ? EVENT_ANA_CHANGED
                                            : event == PENDING_RESERVATION
                                                    ? EVENT_RESERVATION_LOG
                                                    : EVENT_DISCOVERY_CHANGED);
            admin.complete(aer, Status.SUCCESS);
            controller.aenSent();
        }
    }
}

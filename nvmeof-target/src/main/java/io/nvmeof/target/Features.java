package io.nvmeof.target;

import io.nvmeof.core.command.FeatureId;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;

/**
 * Set Features and Get Features of one controller (nvmeof-protocol.md §3.4), and the values of the features that live
 * nowhere else: Number of Queues and Volatile Write Cache. Keep Alive Timer is the controller's keep-alive timeout and
 * Asynchronous Event Configuration belongs to its {@link AsyncEvents}. Owned by its {@link Controller}; used only on
 * the admin queue's thread.
 */
final class Features {
    /** Number of Queues, both halves 0's based: what we grant at most (and report as the default). */
    private static final int QUEUES_MAX =
            (ControllerProfile.MAX_IO_QUEUES - 1) | ((ControllerProfile.MAX_IO_QUEUES - 1) << 16);
    /** CDW10 bit 31 of Set Features: SV, save across a reset. */
    private static final int SAVE = 0x80000000;
    /** Get Features SEL 3: the supported capabilities (DW0 bit 2: changeable; not saveable, not per namespace). */
    private static final int SEL_SUPPORTED_CAPABILITIES = 3;

    private static final int CAPABILITIES_CHANGEABLE = 0x4;

    private final Controller controller;
    private final AsyncEvents events;

    private int queuesGranted = QUEUES_MAX;
    private int writeCacheEnabled = 1;

    Features(Controller controller, AsyncEvents events) {
        this.controller = controller;
        this.events = events;
    }

    int setFeatures(TargetRequest request, SubmissionQueueEntry c) {
        int cdw10 = c.cdw10();
        FeatureId fid = FeatureId.of(cdw10);
        int value = c.cdw11();
        if ((cdw10 & SAVE) != 0) {
            return Status.dnr(Status.FEATURE_NOT_SAVEABLE); // SV: nothing here survives a restart
        }
        if (fid == null) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        boolean discovery = controller.isDiscovery();
        if (fid == FeatureId.RESERVATION_NOTIFICATION_MASK && !discovery) {
            return controller.reservationNotices().setMask(controller.subsystem(), c); // NVMe Base 2.0 §8.19
        }
        switch (fid) {
            case NUMBER_OF_QUEUES: {
                if (discovery) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                int nsqr = value & 0xFFFF;
                int ncqr = value >>> 16;
                if (nsqr == 0xFFFF || ncqr == 0xFFFF) {
                    // 0's based; 0xFFFF is not a count (nvmeof-protocol.md §3.4).
                    return Status.dnr(Status.INVALID_FIELD);
                }
                int max = ControllerProfile.MAX_IO_QUEUES - 1;
                queuesGranted = Math.min(nsqr, max) | (Math.min(ncqr, max) << 16);
                request.response().dw0(queuesGranted);
                return Status.SUCCESS;
            }
            case KEEP_ALIVE_TIMER:
                controller.keepAliveTimeout(value);
                return Status.SUCCESS;
            case ASYNC_EVENT_CONFIGURATION: {
                if ((value & ~events.configurable()) != 0) {
                    // nvmet rejects bits it cannot raise (nvmeof-protocol.md §3.4).
                    return Status.dnr(Status.INVALID_FIELD);
                }
                events.configure(value);
                return Status.SUCCESS;
            }
            case VOLATILE_WRITE_CACHE:
                if (discovery) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                writeCacheEnabled = value & 1;
                return Status.SUCCESS;
            case HOST_IDENTIFIER:
                // Host Identifier comes from Connect on fabrics (nvmeof-protocol.md §3.4)
                return Status.dnr(Status.COMMAND_SEQUENCE_ERROR);
            default:
                return Status.dnr(Status.INVALID_FIELD);
        }
    }

    int getFeatures(TargetRequest request, SubmissionQueueEntry c) {
        int cdw10 = c.cdw10();
        FeatureId fid = FeatureId.of(cdw10);
        int sel = (cdw10 >>> 8) & 0x7;
        boolean discovery = controller.isDiscovery();
        if (fid == FeatureId.RESERVATION_NOTIFICATION_MASK && !discovery) {
            return controller.reservationNotices().getMask(controller.subsystem(), request, c); // NVMe Base 2.0 §8.19
        }
        boolean supported = fid == FeatureId.KEEP_ALIVE_TIMER
                || fid == FeatureId.ASYNC_EVENT_CONFIGURATION
                || (!discovery && (fid == FeatureId.NUMBER_OF_QUEUES || fid == FeatureId.VOLATILE_WRITE_CACHE));
        if (!supported) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        if (sel == SEL_SUPPORTED_CAPABILITIES) {
            request.response().dw0(CAPABILITIES_CHANGEABLE);
            return Status.SUCCESS;
        }
        if (sel > SEL_SUPPORTED_CAPABILITIES) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        boolean current = sel == 0;
        int v;
        switch (fid) {
            case NUMBER_OF_QUEUES:
                v = current ? queuesGranted : QUEUES_MAX;
                break;
            case KEEP_ALIVE_TIMER:
                v = current ? controller.katoMillis() : 0;
                break;
            case ASYNC_EVENT_CONFIGURATION:
                v = current ? events.configuration() : 0;
                break;
            default: // VOLATILE_WRITE_CACHE
                v = current ? writeCacheEnabled : 1;
                break;
        }
        request.response().dw0(v);
        return Status.SUCCESS;
    }
}

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
    /** Get Features SEL (CDW10 bits 10:8): 000b current, 001b default, 010b saved, 011b supported capabilities. */
    private static final int SEL_CURRENT = 0;

    private static final int SEL_SUPPORTED_CAPABILITIES = 3;
    /** Supported capabilities DW0 bit 2: changeable (bit 0 saveable and bit 1 namespace specific: never here). */
    private static final int CAPABILITIES_CHANGEABLE = 0x4;

    private final Controller controller;
    private final AsyncEvents events;

    private int queuesGranted = QUEUES_MAX;
    private int writeCacheEnabled = 1;
    private final FeatureValues values = new FeatureValues();

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
        if (!discovery && FeatureValues.handles(fid)) {
            return values.set(fid, value);
        }
        if (fid == FeatureId.RESERVATION_NOTIFICATION_MASK && !discovery) {
            return controller.reservationNotices().setMask(controller.subsystem(), c); // NVMe Base 2.0 §8.19
        }
        switch (fid) {
            case NUMBER_OF_QUEUES: {
                if (discovery) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                if (controller.ioQueueCount() > 0) {
                    // Only before I/O queues exist (NVMe Base 2.0c §5.27.1.5). SPDK checks this; nvmet does not.
                    return Status.dnr(Status.COMMAND_SEQUENCE_ERROR);
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
            case IO_COMMAND_SET_PROFILE:
                // Index into the I/O Command Set data structure (Identify CNS 1Ch): only combination 0 (NVM) exists,
                // and it may change only while no I/O queue exists (NVMe Base 2.0c §5.27.1.21).
                if (discovery) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                if (controller.ioQueueCount() > 0) {
                    return Status.dnr(Status.COMMAND_SEQUENCE_ERROR);
                }
                return (value & 0x1FF) == 0 ? Status.SUCCESS : Status.dnr(Status.IO_COMMAND_SET_COMBINATION_REJECTED);
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

    /**
     * Get Features with SEL (NVMe Base 2.0c §5.15.1): current, default, saved (no feature here is saveable, so the
     * default, as the spec says) or the supported capabilities.
     */
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
                || (!discovery
                        && (fid == FeatureId.NUMBER_OF_QUEUES
                                || fid == FeatureId.VOLATILE_WRITE_CACHE
                                || fid == FeatureId.HOST_IDENTIFIER
                                || fid == FeatureId.IO_COMMAND_SET_PROFILE
                                || FeatureValues.handles(fid)));
        if (!supported || sel > SEL_SUPPORTED_CAPABILITIES) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        if (sel == SEL_SUPPORTED_CAPABILITIES) {
            // Host Identifier comes from Connect: not changeable over fabrics.
            request.response().dw0(fid == FeatureId.HOST_IDENTIFIER ? 0 : CAPABILITIES_CHANGEABLE);
            return Status.SUCCESS;
        }
        boolean current = sel == SEL_CURRENT;
        if (fid == FeatureId.HOST_IDENTIFIER) {
            return FeatureValues.hostIdentifier(request, c, controller.hostId());
        }
        if (FeatureValues.handles(fid)) {
            return values.get(fid, c, current, request);
        }
        if (fid == FeatureId.IO_COMMAND_SET_PROFILE) {
            request.response().dw0(0); // combination 0, current and default
            return Status.SUCCESS;
        }
        int v;
        switch (fid) {
            case NUMBER_OF_QUEUES:
                v = current ? queuesGranted : QUEUES_MAX;
                break;
            case KEEP_ALIVE_TIMER:
                // KATO is a 32-bit field: a timeout rounded up past 2^32 - 1 ms reads back as the most it can say.
                v = current ? (int) Math.min(controller.katoMillis(), 0xFFFFFFFFL) : 0;
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

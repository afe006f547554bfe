package io.nvmeof.target;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.IdentifyCns;
import io.nvmeof.core.command.LogPageId;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The admin commands of one controller (nvmeof-protocol.md §3): dispatch on the admin opcode, Identify (§3.2), Get Log
 * Page (§3.3) and Abort; Set and Get Features go to its {@link Features}, Asynchronous Event Request to its
 * {@link AsyncEvents}, Keep Alive to the controller's timer (§3.5). Owned by its {@link Controller}; runs only on the
 * admin queue's thread. The admin path is not the I/O path: pages may be built per command.
 */
final class AdminCommands {
    /** Get Log Page CDW10 bit 15: RAE, retain the asynchronous event (nvmeof-protocol.md §3.3). */
    private static final int RAE = 0x8000;
    /** Get Log Page CDW10 bit 8: LSP bit 0, for the ANA log RGO, return groups only (nvmeof-protocol.md §3.3). */
    private static final int LSP_ANA_RGO = 0x100;

    private final Controller controller;
    private final NvmeTarget target;
    private final Features features;
    private final AsyncEvents events;

    AdminCommands(Controller controller, NvmeTarget target, Features features, AsyncEvents events) {
        this.controller = controller;
        this.target = target;
        this.features = features;
        this.events = events;
    }

    private Subsystem subsystem() {
        return controller.subsystem();
    }

    /** Runs one admin command; returns its status, or {@link QueueSession#PENDING} if the controller keeps it (an AER). */
    int execute(TargetRequest request, SubmissionQueueEntry c) {
        AdminOpcode opcode = AdminOpcode.of(c.opcode());
        if (opcode == null) {
            return Status.dnr(Status.INVALID_OPCODE);
        }
        boolean discovery = controller.isDiscovery();
        switch (opcode) {
            case IDENTIFY:
                return identify(request, c);
            case GET_LOG_PAGE:
                return getLogPage(request, c);
            case SET_FEATURES:
                return features.setFeatures(request, c);
            case GET_FEATURES:
                return features.getFeatures(request, c);
            case KEEP_ALIVE:
                return controller.keepAlive();
            case ASYNC_EVENT_REQUEST:
                return events.request(request);
            case ABORT:
                if (discovery) {
                    return Status.dnr(Status.INVALID_OPCODE);
                }
                return abort(request, c);
            default:
                return Status.dnr(Status.INVALID_OPCODE);
        }
    }

    /**
     * Abort (NVMe Base 2.0c §5.1): SQID in CDW10 bits 15:0, CID in bits 31:16. An outstanding Asynchronous Event
     * Request is aborted (it completes with Command Abort Requested) and DW0 bit 0 = 0 says so. Every other command
     * here runs to completion as it arrives (nothing waits in a queue to start), so it cannot be aborted: DW0 bit 0 =
     * 1, "not aborted", success, as the spec allows; a command not found is not aborted either.
     */
    private int abort(TargetRequest request, SubmissionQueueEntry c) {
        int sqid = c.cdw10() & 0xFFFF;
        int cid = c.cdw10() >>> 16;
        boolean aborted = sqid == 0 && events.abort(cid);
        request.response().dw0(aborted ? 0 : 1);
        return Status.SUCCESS;
    }

    // Identify (nvmeof-protocol.md §3.2)

    private int identify(TargetRequest request, SubmissionQueueEntry c) {
        if (request.dataLength() != IdentifyPages.SIZE) {
            // nvmet requires exactly 4096 bytes (nvmeof-protocol.md §3.2).
            return Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
        }
        IdentifyCns cns = IdentifyCns.of(c.cdw10());
        int nsid = c.nsid();
        ByteBuffer page;
        if (controller.isDiscovery() && cns != IdentifyCns.CONTROLLER) {
            // A discovery controller answers only CNS 0x01 (nvmeof-protocol.md §3.2).
            return Status.dnr(Status.INVALID_FIELD);
        }
        if (cns == null) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        if (IdentifyCommandSets.handles(cns)) {
            return IdentifyCommandSets.identify(request, c, cns, subsystem());
        }
        switch (cns) {
            case NAMESPACE: {
                if (nsid == 0xFFFFFFFF) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                RamNamespace ns = subsystem().namespace(nsid);
                // An inactive NSID gets an all-zero page with success; NCAP = 0 tells the host it is absent
                // (nvmeof-protocol.md §3.2).
                page = ns == null ? IdentifyPages.zero() : IdentifyPages.namespace(ns);
                if (ns != null) {
                    controller.anaPath().identifyNamespace(page, nsid); // ANAGRPID, NUSE
                }
                break;
            }
            case CONTROLLER:
                page = IdentifyPages.controller(controller);
                break;
            case ACTIVE_NAMESPACE_LIST:
                if (Integer.compareUnsigned(nsid, 0xFFFFFFFE) >= 0) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                page = IdentifyPages.activeNamespaces(subsystem(), nsid);
                break;
            case NAMESPACE_IDENTIFICATION_DESCRIPTORS: {
                RamNamespace ns = subsystem().namespace(nsid);
                if (ns == null) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                page = IdentifyPages.descriptors(ns);
                break;
            }
            default:
                return Status.dnr(Status.INVALID_FIELD);
        }
        request.addData(page, 0, IdentifyPages.SIZE, DataRelease.NONE);
        return Status.SUCCESS;
    }

    // Get Log Page (nvmeof-protocol.md §3.3)

    private int getLogPage(TargetRequest request, SubmissionQueueEntry c) {
        int cdw10 = c.cdw10();
        LogPageId lid = LogPageId.of(cdw10);
        boolean rae = (cdw10 & RAE) != 0;
        long numd = ((((long) c.cdw11() & 0xFFFF) << 16) | (cdw10 >>> 16)) + 1;
        long length = numd * 4;
        if (length != request.dataLength()) {
            // nvmet: (NUMD + 1) × 4 exactly (nvmeof-protocol.md §3.3).
            return Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
        }
        long lpo = (c.cdw12() & 0xFFFFFFFFL) | ((long) c.cdw13() << 32);
        if ((lpo & 3) != 0) {
            return Status.dnr(Status.INVALID_FIELD); // LPO must be dword aligned (nvmeof-protocol.md §3.3)
        }
        ByteBuffer log;
        if (controller.isDiscovery()) {
            if (lid != LogPageId.DISCOVERY) {
                return Status.dnr(Status.INVALID_FIELD);
            }
            log = target.discoveryLog(
                    controller.hostNqn(), controller.adminQueue().channel());
            events.discoveryLogRead(rae);
        } else {
            if (lid == null) {
                return Status.dnr(Status.INVALID_FIELD); // nvmet answers unknown LIDs with Invalid Field
            }
            switch (lid) {
                case SUPPORTED_LOG_PAGES:
                    log = SupportLogPages.supportedLogPages();
                    break;
                case FIRMWARE_SLOT_INFORMATION:
                    log = SupportLogPages.firmwareSlots();
                    break;
                case ERROR_INFORMATION:
                    log = controller.errorLog();
                    break;
                case SMART_HEALTH_INFORMATION:
                    if (c.nsid() != 0 && c.nsid() != 0xFFFFFFFF && subsystem().namespace(c.nsid()) == null) {
                        // Per namespace (LPA bit 0): an NSID that names no attached namespace is refused as by nvmet
                        // (NVMe Base 2.0c §5.16.1.3; 0h and FFFFFFFFh ask for the whole controller).
                        return Status.dnr(Status.INVALID_NAMESPACE);
                    }
                    log = LogPages.health(subsystem(), c.nsid(), controller.createdNanos());
                    break;
                case CHANGED_NAMESPACE_LIST:
                    log = events.changedNamespaceLog(rae);
                    break;
                case RESERVATION_NOTIFICATION:
                    log = controller.reservationNotices().read(rae); // one notice per read (NVMe Base 2.0 §8.19)
                    break;
                case COMMANDS_SUPPORTED_AND_EFFECTS:
                    if ((c.cdw14() >>> 24) != IdentifyCommandSets.CSI_NVM) {
                        return Status.dnr(Status.INVALID_LOG_PAGE); // CSI (CDW14 31:24): NVM only, as nvmet
                    }
                    log = LogPages.commandEffects();
                    break;
                case ASYMMETRIC_NAMESPACE_ACCESS:
                    log = controller.anaPath().log((cdw10 & LSP_ANA_RGO) != 0);
                    events.anaLogRead(rae);
                    break;
                case VENDOR_PERF_STATS:
                    log = LogPages.perfStats(subsystem()); // vendor specific: CPU and work counters for nvmeof-perf
                    break;
                default:
                    // nvmet answers unknown LIDs with Invalid Field (nvmeof-protocol.md §3.3).
                    return Status.dnr(Status.INVALID_FIELD);
            }
        }
        if (Long.compareUnsigned(lpo, log.capacity()) > 0) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        int len = (int) length;
        ByteBuffer out = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
        int available = (int) Math.min(len, log.capacity() - lpo);
        out.put(0, log, (int) lpo, available); // the rest stays zero
        request.addData(out, 0, len, DataRelease.NONE);
        return Status.SUCCESS;
    }
}

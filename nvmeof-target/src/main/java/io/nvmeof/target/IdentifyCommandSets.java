package io.nvmeof.target;

import io.nvmeof.core.command.IdentifyCns;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.ByteBuffer;

/**
 * The Identify structures of the I/O command set model (NVMe Base 2.0c §5.17.2; CAP.CSS bit 43 advertises it): CNS
 * 05h (I/O command set specific namespace), 06h (I/O command set specific controller), 07h (active namespaces of a
 * command set), 08h (command set independent namespace) and 1Ch (the I/O Command Set data structure). The only
 * command set here is NVM (CSI 00h); any other CSI is Invalid Field. Runs for its controller's
 * {@link AdminCommands} on the admin thread; pages are built per command (admin path).
 */
final class IdentifyCommandSets {
    /** CSI 00h: the NVM command set. */
    static final int CSI_NVM = 0;
    /** The I/O Command Set data structure's combination 0: NVM only (bit 0). */
    private static final long COMBINATION_NVM = 1;

    private IdentifyCommandSets() {}

    /** Whether this class answers {@code cns}. */
    static boolean handles(IdentifyCns cns) {
        switch (cns) {
            case IO_COMMAND_SET_NAMESPACE:
            case IO_COMMAND_SET_CONTROLLER:
            case IO_COMMAND_SET_ACTIVE_NAMESPACE_LIST:
            case IO_COMMAND_SET_INDEPENDENT_NAMESPACE:
            case IO_COMMAND_SET:
                return true;
            default:
                return false;
        }
    }

    /** Answers one of {@link #handles these}: adds the 4096-byte page and returns the status. */
    static int identify(TargetRequest request, SubmissionQueueEntry c, IdentifyCns cns, Subsystem subsystem) {
        int nsid = c.nsid();
        int csi = c.cdw11() >>> 24;
        ByteBuffer page;
        switch (cns) {
            case IO_COMMAND_SET_NAMESPACE:
                // NVM command set Identify Namespace (NVM Command Set 1.0c §4.1.5.1): LBSTM, PIC and the extended
                // LBA formats, all zero without protection information or storage tags; inactive NSIDs read zero.
                if (csi != CSI_NVM) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                if (!validNsid(nsid)) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                page = IdentifyPages.zero();
                break;
            case IO_COMMAND_SET_CONTROLLER:
                // NVM command set Identify Controller (NVM Command Set 1.0c §4.1.5.2): VSL, WZSL, WUSL, DMRL, DMRSL and
                // DMSL all 0, "no limit": Verify, Write Zeroes and Dataset Management take any size RAM can hold.
                if (csi != CSI_NVM) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                page = IdentifyPages.zero();
                break;
            case IO_COMMAND_SET_ACTIVE_NAMESPACE_LIST:
                if (csi != CSI_NVM) {
                    return Status.dnr(Status.INVALID_FIELD);
                }
                if (Integer.compareUnsigned(nsid, 0xFFFFFFFE) >= 0) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                page = IdentifyPages.activeNamespaces(subsystem, nsid); // every namespace is NVM
                break;
            case IO_COMMAND_SET_INDEPENDENT_NAMESPACE: {
                if (!validNsid(nsid)) {
                    return Status.dnr(Status.INVALID_NAMESPACE);
                }
                RamNamespace ns = subsystem.namespace(nsid);
                page = ns == null ? IdentifyPages.zero() : independentNamespace(ns);
                break;
            }
            default: // IO_COMMAND_SET
                page = IdentifyPages.zero();
                page.putLong(0, COMBINATION_NVM); // combination 0 = NVM; the I/O Command Set Profile feature is 0
                break;
        }
        request.addData(page, 0, IdentifyPages.SIZE, DataRelease.NONE);
        return Status.SUCCESS;
    }

    /** 1..NN: a namespace that exists or may exist. */
    private static boolean validNsid(int nsid) {
        return nsid != 0 && Integer.compareUnsigned(nsid, ControllerProfile.NN) <= 0;
    }

    /** I/O Command Set Independent Identify Namespace (NVMe Base 2.0c §5.17.2.7). */
    private static ByteBuffer independentNamespace(RamNamespace ns) {
        ByteBuffer b = IdentifyPages.zero();
        b.put(1, (byte) 1); // NMIC: may be shared, as CNS 00h
        b.put(8, (byte) (ns.readOnly() ? 1 : 0)); // NSATTR bit 0: write protected
        b.put(14, (byte) 1); // NSTAT bit 0: ready
        return b;
    }
}

package io.nvmeof.target;

import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** Builders of the 4096-byte Identify data structures (nvmeof-protocol.md §3.2). Admin path: they allocate. */
final class IdentifyPages {
    static final int SIZE = 4096;

    private IdentifyPages() {}

    static ByteBuffer zero() {
        return ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Identify Controller, CNS 0x01 (nvmeof-protocol.md §3.2.1), with the values of the conservative profile (nvmeof-protocol.md §7.7). */
    static ByteBuffer controller(Controller controller) {
        ByteBuffer b = zero();
        Subsystem subsystem = controller.subsystem();
        PortInfo port = controller.port();
        boolean discovery = subsystem.isDiscovery();
        ascii(b, 4, 20, subsystem.serial()); // SN
        ascii(b, 24, 40, subsystem.model()); // MN
        ascii(b, 64, 8, ControllerProfile.FIRMWARE_REVISION); // FR
        b.put(72, (byte) 6); // RAB, as nvmet
        b.put(76, (byte) (discovery ? 0 : ControllerProfile.CMIC));
        b.put(77, (byte) port.mdts()); // MDTS from the transport
        b.putShort(78, (short) controller.cntlid()); // CNTLID = Connect's CNTLID (nvmeof-protocol.md §7.1 step 11)
        b.putInt(80, ControllerProfile.VERSION); // VER
        b.putInt(92, discovery ? ControllerProfile.OAES_DISCOVERY : ControllerProfile.OAES_IO);
        b.putInt(96, discovery ? 0 : ControllerProfile.CTRATT); // CTRATT
        b.put(111, (byte) (discovery ? ControllerProfile.CNTRLTYPE_DISCOVERY : ControllerProfile.CNTRLTYPE_IO));
        b.put(258, (byte) ControllerProfile.ACL);
        b.put(259, (byte) ControllerProfile.AERL);
        b.put(260, (byte) (discovery ? 0 : SupportLogPages.FRMW)); // FRMW
        b.put(261, (byte) (discovery ? ControllerProfile.LPA_DISCOVERY : ControllerProfile.LPA_IO));
        b.put(262, (byte) (ControllerProfile.ERROR_LOG_ENTRIES - 1)); // ELPE, 0's based
        b.putShort(320, (short) ControllerProfile.KAS);
        b.put(512, (byte) ControllerProfile.SQES);
        b.put(513, (byte) ControllerProfile.CQES);
        // MAXCMD = CAP.MQES + 1 for discovery controllers too, as nvmet does: the Linux host compares its sqsize with
        // MAXCMD
        // and logs "sqsize 128 > ctrl maxcmd 32, clamping down" for a smaller value (seen in the interop run).
        b.putShort(514, (short) port.maxQueueSize()); // MAXCMD
        if (!discovery) {
            b.putInt(516, ControllerProfile.NN);
            b.putShort(520, (short) ControllerProfile.ONCS);
            b.putShort(522, (short) ControllerProfile.FUSES);
            b.putShort(532, (short) ControllerProfile.ACWU);
            b.putShort(534, (short) ControllerProfile.OCFS_COPY);
            b.put(525, (byte) ControllerProfile.VWC);
        }
        b.putInt(536, port.sgls()); // SGLS from the transport
        nqn(b, 768, subsystem.nqn()); // SUBNQN
        if (!discovery) {
            b.putInt(1792, port.ioccsz()); // IOCCSZ = (64 + in-capsule) / 16
            b.putInt(1796, ControllerProfile.IORCSZ);
        }
        b.putShort(1800, (short) 0); // ICDOFF must be 0 (nvmeof-protocol.md §3.2.1)
        b.put(1802, (byte) 0); // FCATT: dynamic controller model
        b.put(1803, (byte) 1); // MSDBD: one SGL data block descriptor
        b.putShort(1804, (short) (discovery ? 0 : ControllerProfile.OFCS));
        if (!discovery) {
            AnaGroups.identifyController(b); // CMIC bit 3, ANATT, ANACAP, ANAGRPMAX, NANAGRPID, MNAN
        }
        return b;
    }

    /** Identify Namespace, CNS 0x00 (nvmeof-protocol.md §3.2.2). */
    static ByteBuffer namespace(RamNamespace ns) {
        ByteBuffer b = zero();
        long blocks = ns.blocks();
        b.putLong(0, blocks); // NSZE
        b.putLong(8, blocks); // NCAP (non-zero: present)
        b.putLong(16, blocks); // NUSE
        b.put(25, (byte) 0); // NLBAF: one format
        b.put(26, (byte) 0); // FLBAS: format 0, no metadata
        b.put(30, (byte) 1); // NMIC: may be shared (CMIC bit 1)
        b.put(31, (byte) ControllerProfile.RESCAP); // RESCAP (NVMe Base 2.0 §8.19)
        // DLFEAT: deallocated reads zero (001b), Write Zeroes DEAC (bit 3); for a file-backed namespace, whose
        // deallocate keeps the data, the value read is not reported (000b).
        b.put(33, (byte) (ns.deallocates() ? 0x09 : 0x08));
        b.putShort(74, (short) NvmCopy.MSSRL); // MSSRL, blocks
        b.putInt(76, NvmCopy.MCL); // MCL, blocks
        b.put(80, (byte) NvmCopy.MSRC); // MSRC, 0's based
        b.put(99, (byte) (ns.readOnly() ? 1 : 0)); // NSATTR bit 0: write protected
        putUuid(b, 104, ns.uuid()); // NGUID
        b.putInt(128, ns.blockShift() << 16); // LBAF0: MS 0, LBADS, RP 0
        return b;
    }

    /** Active Namespace ID list, CNS 0x02: NSIDs greater than {@code after}, ascending, zero-terminated (nvmeof-protocol.md §3.2). */
    static ByteBuffer activeNamespaces(Subsystem subsystem, int after) {
        ByteBuffer b = zero();
        int i = 0;
        for (RamNamespace ns : subsystem.namespaces()) {
            if (Integer.compareUnsigned(ns.nsid(), after) > 0 && i < SIZE / 4) {
                b.putInt(4 * i++, ns.nsid());
            }
        }
        return b;
    }

    /** Namespace Identification Descriptor list, CNS 0x03 (nvmeof-protocol.md §3.2.3): NGUID, UUID and CSI, like nvmet. */
    static ByteBuffer descriptors(RamNamespace ns) {
        ByteBuffer b = zero();
        int p = 0;
        b.put(p, (byte) 0x02).put(p + 1, (byte) 16); // NIDT NGUID, NIDL 16
        putUuid(b, p + 4, ns.uuid());
        p += 4 + 16;
        b.put(p, (byte) 0x03).put(p + 1, (byte) 16); // NIDT UUID, NIDL 16
        putUuid(b, p + 4, ns.uuid());
        p += 4 + 16;
        b.put(p, (byte) 0x04).put(p + 1, (byte) 1); // NIDT CSI, NIDL 1, value 0 = NVM
        return b;
    }

    /** A UUID as 16 raw bytes in textual order (nvmeof-protocol.md §0). */
    static void putUuid(ByteBuffer b, int at, UUID uuid) {
        long msb = uuid.getMostSignificantBits();
        long lsb = uuid.getLeastSignificantBits();
        for (int i = 0; i < 8; i++) {
            b.put(at + i, (byte) (msb >>> (56 - 8 * i)));
            b.put(at + 8 + i, (byte) (lsb >>> (56 - 8 * i)));
        }
    }

    /** An ASCII field padded with spaces, not NUL-terminated (nvmeof-protocol.md §0). */
    static void ascii(ByteBuffer b, int at, int width, String text) {
        byte[] bytes = text == null ? new byte[0] : text.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < width; i++) {
            b.put(at + i, i < bytes.length ? bytes[i] : (byte) ' ');
        }
    }

    /** An NQN field: NUL-terminated, zero padded, 256 bytes (nvmeof-protocol.md §0). */
    static void nqn(ByteBuffer b, int at, String nqn) {
        byte[] bytes = nqn.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length && i < 255; i++) {
            b.put(at + i, bytes[i]);
        }
    }

    /** A text field padded with NULs (discovery TRADDR/TRSVCID, nvmeof-protocol.md §3.3). */
    static void text(ByteBuffer b, int at, int width, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < bytes.length && i < width; i++) {
            b.put(at + i, bytes[i]);
        }
    }
}

package io.nvmeof.conformance;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FeatureId;
import io.nvmeof.core.command.IdentifyCns;
import io.nvmeof.core.command.LogPageId;

/**
 * Admin commands (nvmeof-protocol.md §3): Identify (CNS, CNTID, CSI, NSID), Get Log Page (LID, LSP, RAE, NUMD,
 * offsets), Get/Set Features (FID, SEL, SV, values), Keep Alive, Abort, Asynchronous Event Request, the PCIe-only
 * queue commands and opcodes that nobody or only other controllers implement — each with reserved bits and SGLs varied.
 */
final class AdminGen {
    static final int PAGE = 4096;
    private final Pick pick;

    AdminGen(Pick pick) {
        this.pick = pick;
    }

    Cmd random() {
        int r = pick.below(100);
        if (r < 25) {
            return identify();
        } else if (r < 45) {
            return getLogPage();
        } else if (r < 62) {
            return getFeatures();
        } else if (r < 78) {
            return setFeatures();
        } else if (r < 83) {
            return keepAlive();
        } else if (r < 87) {
            return abort();
        } else if (r < 88) {
            return asyncEventRequest();
        } else {
            return otherOpcode();
        }
    }

    Cmd identify() {
        int cns = pick.chance(70)
                ? pick.one(
                        IdentifyCns.NAMESPACE.code(),
                        IdentifyCns.CONTROLLER.code(),
                        IdentifyCns.ACTIVE_NAMESPACE_LIST.code(),
                        IdentifyCns.NAMESPACE_IDENTIFICATION_DESCRIPTORS.code(),
                        IdentifyCns.IO_COMMAND_SET_CONTROLLER.code())
                : pick.one(
                        0x04,
                        0x05,
                        0x07,
                        0x08,
                        0x09,
                        0x0A,
                        0x10,
                        0x11,
                        0x12,
                        0x13,
                        0x14,
                        0x15,
                        0x16,
                        0x1C,
                        0x1F,
                        0x20,
                        0x7F,
                        0xFF,
                        pick.below(256));
        int nsid = pick.chance(50) ? pick.one(cns == 0x01 ? 0 : 1, 0) : pick.nsid();
        int cntid = pick.chance(85) ? 0 : pick.one(1, 0xFFFF, pick.below(0x10000));
        int csi = pick.chance(80) ? 0 : pick.one(1, 2, 0xFF);
        int cdw10 = cns | (cntid << 16) | pick.reservedBits(0x0000FF00);
        int cdw11 = (csi << 24) | pick.reservedBits(0x00FF0000); // CNSSID 15:0 stays 0
        return data(
                Sqe.admin(
                                AdminOpcode.IDENTIFY.code(),
                                String.format("identify cns=%02x nsid=%x cntid=%x csi=%x", cns, nsid, cntid, csi))
                        .nsid(nsid)
                        .cdw(10, cdw10)
                        .cdw(11, cdw11)
                        .cdw(14, pick.reservedBits(0xFFFFFF80)),
                PAGE);
    }

    Cmd getLogPage() {
        int lid = pick.chance(70)
                ? pick.one(
                        LogPageId.ERROR_INFORMATION.code(),
                        LogPageId.SMART_HEALTH_INFORMATION.code(),
                        0x03, // Firmware Slot Information
                        LogPageId.CHANGED_NAMESPACE_LIST.code(),
                        LogPageId.COMMANDS_SUPPORTED_AND_EFFECTS.code(),
                        0x06,
                        0x0C,
                        0x0D, // Device Self-test, ANA, Persistent Event
                        0x80, // Reservation Notification
                        LogPageId.DISCOVERY.code())
                : pick.one(0x00, 0x07, 0x08, 0x0A, 0x0F, 0x70, 0x71, 0x81, 0xBF, 0xC0, 0xFF, pick.below(256));
        int len = pick.chance(60) ? pick.one(64, 512, PAGE) : pick.one(4, 8, 508, 516, 1024, 2 * PAGE, 16 * PAGE);
        long offset = pick.chance(80) ? 0 : pick.oneLong(4, 64, 512, 513, PAGE, 1L << 32, -4L);
        int lsp = pick.chance(85) ? 0 : pick.one(1, 0x7F);
        boolean rae = pick.chance(20);
        int numd = len / 4 - 1;
        int cdw10 = lid | (lsp << 8) | (rae ? 1 << 15 : 0) | ((numd & 0xFFFF) << 16);
        int cdw11 = (numd >>> 16) | pick.reservedBits(0xFFFF0000); // LSI 31:16
        int nsid = pick.chance(60) ? pick.one(0xFFFFFFFF, 0) : pick.nsid();
        int csi = pick.chance(90) ? 0 : pick.one(1, 2);
        return data(
                Sqe.admin(
                                AdminOpcode.GET_LOG_PAGE.code(),
                                String.format(
                                        "get-log-page lid=%02x lsp=%x rae=%b len=%d offset=%x nsid=%x",
                                        lid, lsp, rae, len, offset, nsid))
                        .nsid(nsid)
                        .cdw(10, cdw10)
                        .cdw(11, cdw11)
                        .cdw(12, (int) offset)
                        .cdw(13, (int) (offset >>> 32))
                        .cdw(14, csi << 24),
                len);
    }

    /** The feature identifiers tried: every one NVMe 2.0 defines that a fabrics controller could have, plus others. */
    int fid() {
        return pick.chance(75)
                ? pick.one(
                        0x01,
                        0x02,
                        0x03,
                        0x04,
                        0x05, // Arbitration, Power Mgmt, LBA Range Type, Temp Thr, Error Rec
                        FeatureId.VOLATILE_WRITE_CACHE.code(),
                        FeatureId.NUMBER_OF_QUEUES.code(),
                        0x08,
                        0x09,
                        0x0A, // IRQ Coalescing, IRQ Vector Config, Write Atomicity Normal
                        FeatureId.ASYNC_EVENT_CONFIGURATION.code(),
                        0x0C,
                        0x0D,
                        0x0E, // APST, HMB, Timestamp
                        FeatureId.KEEP_ALIVE_TIMER.code(),
                        0x10,
                        0x11,
                        0x12,
                        0x13,
                        0x16,
                        0x17,
                        0x18,
                        0x19,
                        0x1D,
                        0x80, // Software Progress Marker
                        FeatureId.HOST_IDENTIFIER.code(),
                        0x82,
                        0x83,
                        0x84) // Reservation Notification Mask, Reservation Persistence, NS Write Protect
                : pick.one(0x00, 0x14, 0x7F, 0x85, 0xBF, 0xC0, 0xFF, pick.below(256));
    }

    Cmd getFeatures() {
        int fid = fid();
        int sel = pick.chance(70) ? 0 : pick.one(1, 2, 3, 4, 7);
        int cdw11 = fid == FeatureId.HOST_IDENTIFIER.code() ? pick.one(1, 0) : pick.chance(85) ? 0 : pick.anyInt();
        int nsid = pick.chance(70) ? 0 : pick.nsid();
        int len = fid == FeatureId.HOST_IDENTIFIER.code()
                ? pick.one(16, 8, 0)
                : fid == 0x0E ? 8 : fid == 0x03 ? PAGE : pick.chance(80) ? 0 : 64;
        Sqe s = Sqe.admin(
                        AdminOpcode.GET_FEATURES.code(),
                        String.format(
                                "get-features fid=%02x sel=%d cdw11=%x nsid=%x len=%d", fid, sel, cdw11, nsid, len))
                .nsid(nsid)
                .cdw(10, fid | (sel << 8) | pick.reservedBits(0xFFFFF800))
                .cdw(11, cdw11);
        return data(s, len);
    }

    Cmd setFeatures() {
        int fid = fid();
        boolean sv = pick.chance(15);
        int value = value(fid);
        int nsid = pick.chance(75) ? 0 : pick.nsid();
        int len = fid == FeatureId.HOST_IDENTIFIER.code() ? pick.one(16, 8) : fid == 0x0E ? 8 : 0;
        Sqe s = Sqe.admin(
                        AdminOpcode.SET_FEATURES.code(),
                        String.format("set-features fid=%02x sv=%b cdw11=%x nsid=%x len=%d", fid, sv, value, nsid, len))
                .nsid(nsid)
                .cdw(10, fid | (sv ? 1 << 31 : 0) | pick.reservedBits(0x7FFFFF00))
                .cdw(11, value);
        return data(s, len);
    }

    /** Set Features CDW11: the values a host uses and edge values of each field. */
    private int value(int fid) {
        if (fid == FeatureId.NUMBER_OF_QUEUES.code()) {
            return pick.one(0, 0x00010001, 0x003F003F, 0x007F007F, 0xFFFEFFFE, 0xFFFF0000, 0x0000FFFF, 0xFFFFFFFF);
        } else if (fid == FeatureId.KEEP_ALIVE_TIMER.code()) {
            return pick.one(0, 1, 1000, 5000, 30_000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF);
        } else if (fid == FeatureId.ASYNC_EVENT_CONFIGURATION.code()) {
            return pick.one(0, 0x100, 0x200, 0x800, 0x900, 0xFF, 0xFFFFFFFF);
        } else if (fid == FeatureId.VOLATILE_WRITE_CACHE.code()) {
            return pick.one(0, 1, 0xFFFFFFFE);
        } else if (fid == 0x04) {
            return pick.one(0x0000015E, 0x0010015E, 0x0020015E, 0x00F0FFFF); // TMPTH, TMPSEL, THSEL
        } else if (fid == 0x05) {
            return pick.one(0, 10, 0x0001000A, 0xFFFFFFFF); // TLER, DULBE
        }
        return pick.chance(50) ? 0 : pick.anyInt();
    }

    Cmd keepAlive() {
        return Sqe.admin(AdminOpcode.KEEP_ALIVE.code(), "keep-alive")
                .nsid(pick.chance(80) ? 0 : pick.nsid())
                .cdw(10, pick.reservedBits(0xFFFFFFFF))
                .build();
    }

    Cmd abort() {
        int sqid = pick.one(0, 1, 2, 0xFFFF);
        int cid = pick.one(0, 0x0100, 0xFFFF, pick.below(0x10000));
        return Sqe.admin(AdminOpcode.ABORT.code(), String.format("abort sqid=%x cid=%x", sqid, cid))
                .cdw(10, sqid | (cid << 16))
                .build();
    }

    /** Held by the target until an event: both should stay silent (a short wait; NO_RESPONSE on both is equal). */
    Cmd asyncEventRequest() {
        return Sqe.admin(AdminOpcode.ASYNC_EVENT_REQUEST.code(), "async-event-request")
                .timeout(400)
                .build();
    }

    /** PCIe queue management, and admin opcodes a fabrics RAM target need not implement, and undefined ones. */
    Cmd otherOpcode() {
        int opc = pick.one(
                AdminOpcode.DELETE_IO_SQ.code(),
                AdminOpcode.CREATE_IO_SQ.code(),
                AdminOpcode.DELETE_IO_CQ.code(),
                AdminOpcode.CREATE_IO_CQ.code(),
                0x03,
                0x07,
                0x0B,
                0x0D,
                0x0E,
                0x10,
                0x11,
                0x14,
                0x15,
                0x19,
                0x1A,
                0x1C,
                0x1D,
                0x1E,
                0x20,
                0x24,
                0x7C,
                0x80,
                0x81,
                0x82,
                0x84,
                0x86,
                0xC0,
                0xC1,
                0xFF,
                0x7E);
        int nsid = pick.chance(50) ? 0 : pick.nsid();
        int len = (opc & 0x3) == 0 ? 0 : 512;
        return data(
                Sqe.admin(opc, String.format("admin opc=%02x nsid=%x", opc, nsid))
                        .nsid(nsid)
                        .cdw(10, pick.chance(50) ? 0 : pick.anyInt()),
                len);
    }

    private Cmd data(Sqe s, int len) {
        if (len == 0 && pick.chance(85)) {
            return s.sgl(0x5A, 0, 0).build(); // no data: a zero-length transport descriptor, as Linux sends
        }
        return s.data(pick.sgl(), pick.bytes(len), len, FabricsGen.ADMIN_IN_CAPSULE)
                .build();
    }
}

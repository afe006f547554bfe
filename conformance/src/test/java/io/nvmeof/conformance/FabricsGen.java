package io.nvmeof.conformance;

import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.wire.ConnectData;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Fabrics commands (nvmeof-protocol.md §2): Connect with every field varied, Property Get/Set, the rest. */
final class FabricsGen {
    static final int OPC = FabricsCommandType.OPCODE;
    /** 8 KiB: what Linux sends in-capsule on the admin queue at most (nvmeof-protocol.md §5.10). */
    static final int ADMIN_IN_CAPSULE = 8192;

    private final Pick pick;
    private final Geometry g;

    FabricsGen(Pick pick, Geometry g) {
        this.pick = pick;
        this.g = g;
    }

    // ------------------------------------------------------------------ Connect (nvmeof-protocol.md §2.2)

    /** The admin Connect a Linux host sends: QID 0, SQSIZE 31, KATO 30 s, CNTLID FFFFh. */
    Cmd adminConnect() {
        return connect(Cmd.Queue.ADMIN, "connect admin", 0, 0, 31, 0, 30_000, g.hostNqn(), g.subNqn(), 0xFFFF, false);
    }

    /** The I/O Connect a Linux host sends for QID 1 of the admin queue's controller. */
    Cmd ioConnect() {
        return connect(Cmd.Queue.IO, "connect io", 0, 1, 31, 0, 0, g.hostNqn(), g.subNqn(), 0, true);
    }

    /** An admin Connect with one or two fields off the usual values. */
    Cmd adminConnectVariant() {
        int recfmt = pick.chance(85) ? 0 : pick.one(1, 0xFFFF);
        int qid = pick.chance(85) ? 0 : pick.one(1, 0xFFFF);
        int sqsize = pick.chance(50) ? 31 : pick.one(0, 1, 2, 31, 126, 127, 128, 1023, 0xFFFF);
        int cattr = pick.chance(85) ? 0 : pick.one(0x01, 0x04, 0x08, 0xFF);
        int kato = pick.chance(50)
                ? 30_000
                : pick.one(0, 1, 999, 1000, 120_000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, pick.anyInt());
        String host = pick.chance(80) ? g.hostNqn() : badNqn(g.hostNqn());
        String sub = pick.chance(80) ? g.subNqn() : badNqn(g.subNqn());
        int cntlid = pick.chance(80) ? 0xFFFF : pick.one(0, 1, 0xFFFE, 0xFFF0);
        String label = String.format(
                "connect admin recfmt=%x qid=%x sqsize=%d cattr=%x kato=%08x cntlid=%x host=%s sub=%s",
                recfmt, qid, sqsize, cattr, kato, cntlid, host, sub);
        return connect(Cmd.Queue.ADMIN, label, recfmt, qid, sqsize, cattr, kato, host, sub, cntlid, false);
    }

    /** An I/O Connect with one or two fields off: QID, SQSIZE (incl. beyond MQES), CNTLID, host NQN, KATO. */
    Cmd ioConnectVariant() {
        int qid = pick.chance(60) ? 1 : pick.one(0, 2, 0x40, 0xFFFF);
        int sqsize = pick.chance(50) ? 31 : pick.one(0, 1, 127, 128, 1023, 1024, 0xFFFF);
        int kato = pick.chance(80) ? 0 : pick.one(1000, 0x80000000);
        int cattr = pick.chance(85) ? 0 : pick.one(0x04, 0xFF);
        boolean otherHost = pick.chance(15);
        String host = otherHost ? "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000aa" : g.hostNqn();
        boolean patch = pick.chance(85);
        int cntlid = patch ? 0 : pick.one(0xFFFF, 0xFFFE, 0x7FFF);
        String label = String.format(
                "connect io qid=%x sqsize=%d cattr=%x kato=%08x cntlid=%s host=%s",
                qid, sqsize, cattr, kato, patch ? "admin" : Integer.toHexString(cntlid), otherHost ? "other" : "same");
        return connect(Cmd.Queue.IO, label, 0, qid, sqsize, cattr, kato, host, g.subNqn(), cntlid, patch);
    }

    private String badNqn(String good) {
        return switch (pick.below(7)) {
            case 0 -> "";
            case 1 -> good + "x";
            case 2 -> "nqn.2014-08.org.nvmexpress.discovery";
            case 3 -> "not-an-nqn";
            case 4 -> "nqn.2026-01.io.nvmeof:" + "a".repeat(223 - 22); // 223 bytes: the longest allowed
            case 5 -> "nqn.2026-01.io.nvmeof:" + "a".repeat(240); // longer than 223
            default -> good.toUpperCase();
        };
    }

    private Cmd connect(
            Cmd.Queue queue,
            String label,
            int recfmt,
            int qid,
            int sqsize,
            int cattr,
            int kato,
            String hostNqn,
            String subNqn,
            int cntlid,
            boolean patchCntlid) {
        ByteBuffer data = ByteBuffer.allocate(ConnectData.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        // The Host Identifier is 16 bytes as on the wire by Linux: the UUID's bytes in order.
        ByteBuffer be = ByteBuffer.allocate(16);
        be.putLong(g.hostId().getMostSignificantBits()).putLong(g.hostId().getLeastSignificantBits());
        data.put(ConnectData.HOSTID_OFFSET, be.array());
        data.putShort(ConnectData.CNTLID_OFFSET, (short) cntlid);
        putString(data, ConnectData.SUBNQN_OFFSET, subNqn);
        putString(data, ConnectData.HOSTNQN_OFFSET, hostNqn);
        Sqe s = Sqe.on(queue, OPC, label)
                .fctype(FabricsCommandType.CONNECT.code())
                .u16(SubmissionQueueEntry.CONNECT_RECFMT_OFFSET, recfmt)
                .u16(SubmissionQueueEntry.CONNECT_QID_OFFSET, qid)
                .u16(SubmissionQueueEntry.CONNECT_SQSIZE_OFFSET, sqsize)
                .u8(SubmissionQueueEntry.CONNECT_CATTR_OFFSET, cattr)
                .u32(SubmissionQueueEntry.CONNECT_KATO_OFFSET, kato);
        SglVariant sgl = patchCntlid || label.equals("connect admin") ? SglVariant.NORMAL : connectSgl();
        s.data(sgl, data.array(), ConnectData.LENGTH, ADMIN_IN_CAPSULE);
        if (patchCntlid) {
            s.patchCntlid();
        }
        return s.build();
    }

    private SglVariant connectSgl() {
        return pick.chance(85)
                ? SglVariant.NORMAL
                : pick.one(java.util.List.of(
                        SglVariant.TRANSPORT, SglVariant.SHORT, SglVariant.LONG, SglVariant.ZERO_IN_CAPSULE));
    }

    private static void putString(ByteBuffer b, int offset, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
        b.put(offset, bytes, 0, Math.min(bytes.length, ConnectData.NQN_FIELD_LENGTH));
    }

    // ------------------------------------------------------------------ properties (nvmeof-protocol.md §2.3)

    Cmd propertyGet(int offset, boolean eightBytes) {
        return Sqe.admin(OPC, String.format("property get ofst=%02x size=%d", offset, eightBytes ? 8 : 4))
                .fctype(FabricsCommandType.PROPERTY_GET.code())
                .u8(SubmissionQueueEntry.PROPERTY_ATTRIB_OFFSET, eightBytes ? Properties.SIZE_8 : Properties.SIZE_4)
                .u32(SubmissionQueueEntry.PROPERTY_OFFSET_OFFSET, offset)
                .build();
    }

    Cmd propertySet(int offset, long value, int attrib) {
        return Sqe.admin(OPC, String.format("property set ofst=%02x attrib=%x value=%x", offset, attrib, value))
                .fctype(FabricsCommandType.PROPERTY_SET.code())
                .u8(SubmissionQueueEntry.PROPERTY_ATTRIB_OFFSET, attrib)
                .u32(SubmissionQueueEntry.PROPERTY_OFFSET_OFFSET, offset)
                .u64(SubmissionQueueEntry.PROPERTY_VALUE_OFFSET, value)
                .build();
    }

    Cmd setCc(int cc) {
        return propertySet(Properties.CC, cc & 0xFFFFFFFFL, Properties.SIZE_4);
    }

    /** A random Property Get: every defined offset, reserved ones, unaligned ones, sizes 4 and 8 and reserved. */
    Cmd randomPropertyGet() {
        int offset = pick.chance(80)
                ? pick.one(
                        Properties.CAP,
                        Properties.VS,
                        0x0C,
                        0x10,
                        Properties.CC,
                        Properties.CSTS,
                        Properties.NSSR,
                        0x24,
                        0x28,
                        0x30,
                        0x38,
                        0x3C,
                        0x50,
                        0xE00)
                : pick.one(0x03, 0x04, 0x18, 0x1000, 0xFFFFFFFF, pick.anyInt() & 0xFFF);
        if (pick.chance(10)) {
            return Sqe.admin(OPC, String.format("property get ofst=%02x attrib=reserved", offset))
                    .fctype(FabricsCommandType.PROPERTY_GET.code())
                    .u8(SubmissionQueueEntry.PROPERTY_ATTRIB_OFFSET, pick.one(0x02, 0x07, 0xF8))
                    .u32(SubmissionQueueEntry.PROPERTY_OFFSET_OFFSET, offset)
                    .build();
        }
        return propertyGet(offset, pick.chance(50));
    }

    /** A random Property Set: CC values valid and not, read-only properties, NSSR, size 8, reserved sizes. */
    Cmd randomPropertySet() {
        int which = pick.below(10);
        if (which < 6) {
            int cc = pick.one(
                    0x00460000,
                    0x00460001,
                    0x00464001,
                    0x00468001,
                    0x0046c001, // EN 0/1, SHN 01/10/11
                    0x00460011,
                    0x00460061,
                    0x00460071, // CSS 001b, 110b, 111b
                    0x00460081,
                    0x00460801, // MPS 1, AMS 001b
                    0x00000001,
                    0x00560001,
                    0x00470001,
                    0x00450001,
                    0x00360001, // IOSQES/IOCQES off
                    0xFF460001,
                    0x01460001);
            int attrib = pick.chance(90) ? Properties.SIZE_4 : pick.one(Properties.SIZE_8, 0x02);
            return propertySet(Properties.CC, cc & 0xFFFFFFFFL, attrib);
        }
        int offset = pick.one(
                Properties.CAP,
                Properties.VS,
                Properties.CSTS,
                Properties.NSSR,
                0x0C,
                0x10,
                0x24,
                0x03,
                0x1000,
                0xFFFFFFFF);
        long value = offset == Properties.NSSR && pick.chance(50) ? 0x4E564D65L : pick.anyInt() & 0xFFFFFFFFL;
        return propertySet(offset, value, pick.chance(80) ? Properties.SIZE_4 : Properties.SIZE_8);
    }

    /** Disconnect, Authentication Send/Receive (no authentication set up), and fabrics types nobody defines. */
    Cmd otherFabrics(Cmd.Queue queue) {
        int fctype = pick.one(
                FabricsCommandType.DISCONNECT.code(),
                FabricsCommandType.AUTHENTICATION_SEND.code(),
                FabricsCommandType.AUTHENTICATION_RECEIVE.code(),
                0x02,
                0x03,
                0x07,
                0x09,
                0x7E,
                0xC0,
                0xFF);
        Sqe s = Sqe.on(queue, OPC, String.format("fabrics fctype=%02x", fctype)).fctype(fctype);
        if (fctype == FabricsCommandType.AUTHENTICATION_SEND.code()
                || fctype == FabricsCommandType.AUTHENTICATION_RECEIVE.code()) {
            s.cdw(10, 0xE9010100).cdw(11, 64); // SECP E9h (NVMe in-band authentication), SPSP1/0 01h; TL/AL 64
            s.data(SglVariant.NORMAL, new byte[64], 64, ADMIN_IN_CAPSULE);
        }
        return s.build();
    }
}

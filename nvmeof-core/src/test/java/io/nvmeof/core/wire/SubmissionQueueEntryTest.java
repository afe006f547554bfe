package io.nvmeof.core.wire;

import static io.nvmeof.core.wire.Golden.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Properties;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class SubmissionQueueEntryTest {
    /**
     * The admin Connect SQE that the Linux host sends (nvmeof-protocol.md §5.5): CID 0, FLAGS 0x40, FCTYPE 1, SGL
     * in-capsule (0x01) of 1024 bytes, RECFMT 0, QID 0, SQSIZE 31, KATO 5000 ms.
     */
    static final byte[] ADMIN_CONNECT_SQE = hex("7f 40 00 00 01 00 00 00 00 00 00 00 00 00 00 00"
            + "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
            + "00 04 00 00 00 00 00 01 00 00 00 00 1f 00 00 00"
            + "88 13 00 00 00 00 00 00 00 00 00 00 00 00 00 00");

    private static SubmissionQueueEntry buildAdminConnect(ByteBuffer buffer, int offset) {
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(buffer, offset);
        sqe.clear();
        sqe.opcode(FabricsCommandType.OPCODE)
                .flags(SubmissionQueueEntry.FLAGS_SGL)
                .cid(0)
                .fctype(FabricsCommandType.CONNECT.code());
        sqe.sgl().set(SglDescriptor.ID_IN_CAPSULE, 0, ConnectData.LENGTH);
        sqe.connect(0, 0, 31, 0, 5000);
        return sqe;
    }

    @Test
    void adminConnectMatchesGoldenBytes() {
        SubmissionQueueEntry sqe = buildAdminConnect(Golden.dirtyBuffer(64), 0);
        assertEquals(hex(ADMIN_CONNECT_SQE), hex(sqe.toBytes()));
    }

    @Test
    void adminConnectAtAnOffsetWritesOnlyItsOwnBytes() {
        ByteBuffer buffer = Golden.dirtyBuffer(8 + 64 + 8);
        SubmissionQueueEntry sqe = buildAdminConnect(buffer, 8);
        assertArrayEquals(ADMIN_CONNECT_SQE, sqe.toBytes());
        for (int i : new int[] {0, 7, 72, 79}) {
            assertEquals((byte) 0xA5, buffer.get(i), "byte " + i + " outside the SQE was touched");
        }
        assertEquals(0, buffer.position(), "accessors must not move the position");
        assertEquals(buffer.capacity(), buffer.limit());
    }

    /**
     * nvmeof-protocol.md §5.8: the Connect CapsuleCmd header with HDGSTF (CH 04 01 48 4c 4c 04 00 00) followed by the nvmeof-protocol.md §5.5 SQE has the
     * header digest b7 d9 34 9f. This ties the golden SQE above to an independent value from the reference.
     */
    @Test
    void adminConnectHeaderDigestMatchesReference() {
        CRC32C crc = new CRC32C();
        crc.update(hex("04 01 48 4c 4c 04 00 00"));
        crc.update(buildAdminConnect(Golden.buffer(64), 0).toBytes());
        ByteBuffer digest = Golden.buffer(4).putInt(0, (int) crc.getValue());
        assertEquals("b7 d9 34 9f", hex(digest.array()));
    }

    @Test
    void readsConnectFieldsBack() {
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(Golden.wrap(ADMIN_CONNECT_SQE.clone()), 0);
        assertEquals(0x7F, sqe.opcode());
        assertEquals(0x40, sqe.flags());
        assertEquals(1, sqe.psdt());
        assertEquals(0, sqe.fuse());
        assertEquals(0, sqe.cid());
        assertSame(FabricsCommandType.CONNECT, FabricsCommandType.of(sqe.fctype()));
        assertEquals(SglDescriptor.ID_IN_CAPSULE, sqe.sgl().identifier());
        assertEquals(1024, sqe.sgl().dataLength());
        assertEquals(0, sqe.sgl().address());
        assertEquals(0, sqe.connectRecfmt());
        assertEquals(0, sqe.connectQid());
        assertEquals(31, sqe.connectSqsize());
        assertEquals(0, sqe.connectCattr());
        assertEquals(5000, sqe.connectKato());
    }

    @Test
    void ioConnectFields() {
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(Golden.dirtyBuffer(64), 0).clear();
        sqe.connect(0, 3, 127, SubmissionQueueEntry.CATTR_DISABLE_SQ_FLOW_CONTROL, 0);
        byte[] b = sqe.toBytes();
        assertEquals("00 00 03 00 7f 00 04 00 00 00 00 00", hex(java.util.Arrays.copyOfRange(b, 40, 52)));
        assertEquals(3, sqe.connectQid());
        assertEquals(127, sqe.connectSqsize());
        assertEquals(4, sqe.connectCattr());
    }

    @Test
    void propertySetCcGolden() {
        // Property Set CC = 0x00460001 (EN=1, IOSQES=6, IOCQES=4), nvmeof-protocol.md §2.3: ATTRIB byte 40, OFST
        // 44..47, VALUE 48..55.
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(Golden.dirtyBuffer(64), 0).clear();
        sqe.opcode(0x7F).flags(0x40).cid(0x1234).fctype(FabricsCommandType.PROPERTY_SET.code());
        sqe.sgl().set(SglDescriptor.ID_TCP_TRANSPORT, 0, 0);
        sqe.property(Properties.SIZE_4, Properties.CC, 0x00460001L);
        assertEquals(
                hex(hex("7f 40 34 12 00 00 00 00 00 00 00 00 00 00 00 00"
                        + "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
                        + "00 00 00 00 00 00 00 5a 00 00 00 00 14 00 00 00"
                        + "01 00 46 00 00 00 00 00 00 00 00 00 00 00 00 00")),
                hex(sqe.toBytes()));
        assertEquals(0, sqe.propertySize());
        assertEquals(0x14, sqe.propertyOffset());
        assertEquals(0x00460001L, sqe.propertyValue());
        assertEquals(0x1234, sqe.cid());
    }

    @Test
    void propertyGetCapReadsSizeEight() {
        byte[] b = new byte[64];
        b[0] = 0x7F;
        b[4] = 0x04;
        b[40] = 0x01; // ATTRIB SIZE = 8 bytes
        b[44] = 0x00;
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(Golden.wrap(b), 0);
        assertSame(FabricsCommandType.PROPERTY_GET, FabricsCommandType.of(sqe.fctype()));
        assertEquals(Properties.SIZE_8, sqe.propertySize());
        assertEquals(Properties.CAP, sqe.propertyOffset());
    }

    @Test
    void readCommandFields() {
        // Read NSID 1, SLBA 0x0102030405060708, NLB 7 (8 blocks), CID 0xF00D, SGL 0x5A 4096 bytes (nvmeof-protocol.md
        // §4.2, §5.10).
        byte[] golden = hex("02 40 0d f0 01 00 00 00 00 00 00 00 00 00 00 00"
                + "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
                + "00 10 00 00 00 00 00 5a 08 07 06 05 04 03 02 01"
                + "07 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(Golden.dirtyBuffer(64), 0).clear();
        sqe.opcode(NvmOpcode.READ.code())
                .flags(0x40)
                .cid(0xF00D)
                .nsid(1)
                .slba(0x0102030405060708L)
                .nlb(7);
        sqe.sgl().set(SglDescriptor.ID_TCP_TRANSPORT, 0, 4096);
        assertEquals(hex(golden), hex(sqe.toBytes()));

        sqe.wrap(Golden.wrap(golden), 0);
        assertEquals(NvmOpcode.READ, NvmOpcode.of(sqe.opcode()));
        assertEquals(0xF00D, sqe.cid());
        assertEquals(1, sqe.nsid());
        assertEquals(0x0102030405060708L, sqe.slba());
        assertEquals(7, sqe.nlb());
        assertEquals(0x05060708, sqe.cdw10());
        assertEquals(0x01020304, sqe.cdw11());
        assertEquals(7, sqe.cdw12());
        assertEquals(4096, sqe.sgl().dataLength());
    }

    @Test
    void commandDwordsByNumber() {
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(Golden.buffer(64), 0);
        for (int n = 10; n <= 15; n++) {
            sqe.cdw(n, 0x11111111 * (n - 9));
        }
        assertEquals(0x11111111, sqe.cdw10());
        assertEquals(0x22222222, sqe.cdw11());
        assertEquals(0x33333333, sqe.cdw12());
        assertEquals(0x44444444, sqe.cdw13());
        assertEquals(0x55555555, sqe.cdw14());
        assertEquals(0x66666666, sqe.cdw15());
        assertEquals(0x66, sqe.toBytes()[63]);
        assertEquals(0x11, sqe.toBytes()[40]);
        assertThrows(IllegalArgumentException.class, () -> sqe.cdw(9));
        assertThrows(IllegalArgumentException.class, () -> sqe.cdw(16, 0));
    }

    @Test
    void unsignedFieldsDoNotSignExtend() {
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(Golden.buffer(64), 0);
        sqe.opcode(0xFF).cid(0xFFFF).nsid(0xFFFFFFFF);
        assertEquals(0xFF, sqe.opcode());
        assertEquals(0xFFFF, sqe.cid());
        assertEquals(0xFFFFFFFFL, sqe.nsid() & 0xFFFFFFFFL);
    }

    @Test
    void wrapRejectsBigEndianAndShortBuffers() {
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        assertThrows(
                IllegalArgumentException.class,
                () -> sqe.wrap(ByteBuffer.allocate(64).order(ByteOrder.BIG_ENDIAN), 0));
        assertThrows(IllegalArgumentException.class, () -> sqe.wrap(Golden.buffer(63), 0));
        assertThrows(IllegalArgumentException.class, () -> sqe.wrap(Golden.buffer(64), 1));
        assertThrows(IllegalArgumentException.class, () -> sqe.wrap(Golden.buffer(64), -1));
    }

    @Test
    void sglViewFollowsRewrap() {
        byte[] a = ADMIN_CONNECT_SQE.clone();
        byte[] b = new byte[64];
        b[39] = 0x5A;
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(Golden.wrap(a), 0);
        assertEquals(0x01, sqe.sgl().identifier());
        sqe.wrap(Golden.wrap(b), 0);
        assertEquals(0x5A, sqe.sgl().identifier());
    }
}

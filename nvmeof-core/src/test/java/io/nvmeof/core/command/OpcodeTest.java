package io.nvmeof.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Opcode enums, nvmeof-protocol.md §3.1, §4.1, §2.1; data direction nvmeof-protocol.md §1.1. */
class OpcodeTest {
    @Test
    void adminOpcodes() {
        assertEquals(0x02, AdminOpcode.GET_LOG_PAGE.code());
        assertEquals(0x06, AdminOpcode.IDENTIFY.code());
        assertEquals(0x08, AdminOpcode.ABORT.code());
        assertEquals(0x09, AdminOpcode.SET_FEATURES.code());
        assertEquals(0x0A, AdminOpcode.GET_FEATURES.code());
        assertEquals(0x0C, AdminOpcode.ASYNC_EVENT_REQUEST.code());
        assertEquals(0x18, AdminOpcode.KEEP_ALIVE.code());
        assertEquals(0x7F, AdminOpcode.FABRICS.code());
        for (AdminOpcode op : AdminOpcode.values()) {
            assertSame(op, AdminOpcode.of(op.code()));
        }
        assertNull(AdminOpcode.of(0x03));
        assertNull(AdminOpcode.of(0xFF));
        assertSame(AdminOpcode.FABRICS, AdminOpcode.of(0xFFFFFF7F), "only the low byte counts");
    }

    @Test
    void nvmOpcodes() {
        assertEquals(0x00, NvmOpcode.FLUSH.code());
        assertEquals(0x01, NvmOpcode.WRITE.code());
        assertEquals(0x02, NvmOpcode.READ.code());
        assertEquals(0x05, NvmOpcode.COMPARE.code());
        assertEquals(0x08, NvmOpcode.WRITE_ZEROES.code());
        assertEquals(0x09, NvmOpcode.DATASET_MANAGEMENT.code());
        assertEquals(0x0C, NvmOpcode.VERIFY.code());
        for (NvmOpcode op : NvmOpcode.values()) {
            assertSame(op, NvmOpcode.of(op.code()));
        }
        assertNull(NvmOpcode.of(0x03));
        assertNull(NvmOpcode.of(0x80));
    }

    @Test
    void fabricsCommandTypes() {
        assertEquals(0x7F, FabricsCommandType.OPCODE);
        assertEquals(0x00, FabricsCommandType.PROPERTY_SET.code());
        assertEquals(0x01, FabricsCommandType.CONNECT.code());
        assertEquals(0x04, FabricsCommandType.PROPERTY_GET.code());
        assertEquals(0x05, FabricsCommandType.AUTHENTICATION_SEND.code());
        assertEquals(0x06, FabricsCommandType.AUTHENTICATION_RECEIVE.code());
        assertEquals(0x08, FabricsCommandType.DISCONNECT.code());
        for (FabricsCommandType t : FabricsCommandType.values()) {
            assertSame(t, FabricsCommandType.of(t.code()));
        }
        assertNull(FabricsCommandType.of(0x02));
        assertNull(FabricsCommandType.of(0xC0));
    }

    @Test
    void dataDirectionFromLowTwoBits() {
        assertSame(DataDirection.HOST_TO_CONTROLLER, NvmOpcode.WRITE.direction());
        assertSame(DataDirection.CONTROLLER_TO_HOST, NvmOpcode.READ.direction());
        assertSame(DataDirection.HOST_TO_CONTROLLER, NvmOpcode.COMPARE.direction());
        assertSame(DataDirection.NONE, NvmOpcode.WRITE_ZEROES.direction());
        assertSame(DataDirection.HOST_TO_CONTROLLER, NvmOpcode.DATASET_MANAGEMENT.direction());
        assertSame(DataDirection.NONE, NvmOpcode.FLUSH.direction());
        assertSame(DataDirection.CONTROLLER_TO_HOST, AdminOpcode.IDENTIFY.direction());
        assertSame(DataDirection.CONTROLLER_TO_HOST, AdminOpcode.GET_LOG_PAGE.direction());
        assertSame(DataDirection.HOST_TO_CONTROLLER, AdminOpcode.SET_FEATURES.direction());
        assertSame(DataDirection.NONE, AdminOpcode.KEEP_ALIVE.direction());
        // Fabrics commands take their direction from FCTYPE (nvmeof-protocol.md §1.1).
        assertSame(DataDirection.HOST_TO_CONTROLLER, FabricsCommandType.CONNECT.direction());
        assertSame(DataDirection.NONE, FabricsCommandType.PROPERTY_SET.direction());
        assertSame(DataDirection.NONE, FabricsCommandType.PROPERTY_GET.direction());
        assertSame(DataDirection.CONTROLLER_TO_HOST, FabricsCommandType.AUTHENTICATION_RECEIVE.direction());
        assertSame(DataDirection.BIDIRECTIONAL, DataDirection.of(0x7F));
        assertSame(DataDirection.BIDIRECTIONAL, DataDirection.of(0x03));
    }

    @Test
    void dataDirectionOfACommandReadsFctypeForFabrics() {
        SubmissionQueueEntry sqe = new SubmissionQueueEntry()
                .wrap(ByteBuffer.allocate(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN), 0);
        sqe.opcode(NvmOpcode.READ.code());
        assertSame(DataDirection.CONTROLLER_TO_HOST, DataDirection.of(sqe));
        sqe.opcode(FabricsCommandType.OPCODE);
        sqe.fctype(FabricsCommandType.CONNECT.code());
        assertSame(DataDirection.HOST_TO_CONTROLLER, DataDirection.of(sqe), "Connect: FCTYPE 01h, not opcode 7Fh");
        sqe.fctype(FabricsCommandType.PROPERTY_GET.code());
        assertSame(DataDirection.NONE, DataDirection.of(sqe));
        assertTrue(DataDirection.BIDIRECTIONAL.hostToController() && DataDirection.BIDIRECTIONAL.controllerToHost());
        assertTrue(DataDirection.HOST_TO_CONTROLLER.hostToController());
        assertFalse(DataDirection.HOST_TO_CONTROLLER.controllerToHost());
        assertFalse(DataDirection.NONE.hostToController() || DataDirection.NONE.controllerToHost());
    }
}

package io.nvmeof.core.wire;

import static io.nvmeof.core.wire.Golden.hex;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import org.junit.jupiter.api.Test;

class CompletionQueueEntryTest {
    /** nvmeof-protocol.md §5.5: success response to the admin Connect with CNTLID 1 (SQHD 1, SQID 0), here for CID 0x0011. */
    static final byte[] CONNECT_SUCCESS = hex("01 00 00 00 00 00 00 00 01 00 00 00 11 00 00 00");

    @Test
    void connectSuccessMatchesGoldenBytes() {
        CompletionQueueEntry cqe = new CompletionQueueEntry();
        cqe.wrap(Golden.dirtyBuffer(16), 0);
        cqe.dw0(1).dw1(0).sqhd(1).sqid(0).cid(0x11).status(Status.SUCCESS);
        assertEquals(hex(CONNECT_SUCCESS), hex(cqe.toBytes()));
    }

    @Test
    void readsGoldenFieldsBack() {
        CompletionQueueEntry cqe = new CompletionQueueEntry();
        cqe.wrap(Golden.wrap(CONNECT_SUCCESS.clone()), 0);
        assertEquals(1, cqe.dw0() & 0xFFFF, "CNTLID in DW0 bits 15:0");
        assertEquals(0, cqe.dw1());
        assertEquals(1, cqe.sqhd());
        assertEquals(0, cqe.sqid());
        assertEquals(0x11, cqe.cid());
        assertTrue(Status.isSuccess(cqe.status()));
    }

    @Test
    void statusFieldIsTheWireValue() {
        // Connect Invalid Parameters + DNR is 0x8304 on the wire (nvmeof-protocol.md §1.2): bytes 14-15 = 04 83.
        CompletionQueueEntry cqe = new CompletionQueueEntry();
        cqe.wrap(Golden.buffer(16), 0);
        cqe.dw0((1 << 16) | 256).cid(0xFFFF).status(Status.dnr(Status.CONNECT_INVALID_PARAMETERS));
        assertEquals("00 01 01 00 00 00 00 00 00 00 00 00 ff ff 04 83", hex(cqe.toBytes()));
        assertEquals(0x8304, cqe.status());
        assertEquals(0xFFFF, cqe.cid());
    }

    @Test
    void propertyGetCapResult64SpansDw0AndDw1() {
        // An 8-byte property value: low half in DW0, high half in DW1 (nvmeof-protocol.md §2.3).
        long cap = 0x000008200F0003FFL;
        CompletionQueueEntry cqe = new CompletionQueueEntry();
        cqe.wrap(Golden.buffer(16), 0);
        cqe.result64(cap);
        assertEquals(0x0F0003FF, cqe.dw0());
        assertEquals(0x00000820, cqe.dw1());
        assertEquals("ff 03 00 0f 20 08 00 00", hex(java.util.Arrays.copyOf(cqe.toBytes(), 8)));
        assertEquals(cap, cqe.result64());
    }

    @Test
    void sixteenBitFieldsAreUnsigned() {
        CompletionQueueEntry cqe = new CompletionQueueEntry();
        cqe.wrap(Golden.buffer(16), 0);
        cqe.sqhd(0xFFFF).sqid(0x8001).cid(0xFFFE).status(0xFFFE);
        assertEquals(0xFFFF, cqe.sqhd());
        assertEquals(0x8001, cqe.sqid());
        assertEquals(0xFFFE, cqe.cid());
        assertEquals(0xFFFE, cqe.status());
    }
}

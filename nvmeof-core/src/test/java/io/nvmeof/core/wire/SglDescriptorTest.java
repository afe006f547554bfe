package io.nvmeof.core.wire;

import static io.nvmeof.core.wire.Golden.hex;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** SGL descriptors, nvmeof-protocol.md §1.3. */
class SglDescriptorTest {
    private static SglDescriptor dirty() {
        SglDescriptor sgl = new SglDescriptor();
        sgl.wrap(Golden.dirtyBuffer(16), 0);
        return sgl;
    }

    @Test
    void inCapsuleOffsetDescriptor() {
        SglDescriptor sgl = dirty().set(SglDescriptor.ID_IN_CAPSULE, 0, 1024);
        assertEquals("00 00 00 00 00 00 00 00 00 04 00 00 00 00 00 01", hex(sgl.toBytes()));
        assertEquals(SglDescriptor.TYPE_DATA_BLOCK, sgl.type());
        assertEquals(SglDescriptor.SUBTYPE_OFFSET, sgl.subtype());
        assertFalse(sgl.isKeyed());
    }

    @Test
    void tcpTransportDescriptor() {
        SglDescriptor sgl = dirty().set(SglDescriptor.ID_TCP_TRANSPORT, 0, 131072);
        assertEquals("00 00 00 00 00 00 00 00 00 00 02 00 00 00 00 5a", hex(sgl.toBytes()));
        assertEquals(SglDescriptor.TYPE_TRANSPORT_DATA_BLOCK, sgl.type());
        assertEquals(SglDescriptor.SUBTYPE_TRANSPORT_SPECIFIC, sgl.subtype());
        assertEquals(131072, sgl.dataLength());
    }

    @Test
    void unkeyedLengthIsUnsigned32() {
        SglDescriptor sgl = dirty().set(SglDescriptor.ID_TCP_TRANSPORT, 0x1122334455667788L, 0xFFFFFFF0);
        assertEquals("88 77 66 55 44 33 22 11 f0 ff ff ff 00 00 00 5a", hex(sgl.toBytes()));
        assertEquals(0xFFFFFFF0L, sgl.dataLength());
        assertEquals(0x1122334455667788L, sgl.address());
    }

    @Test
    void keyedDescriptor() {
        // Keyed data block, address: 24-bit LENGTH at bytes 8..10, KEY at 11..14, identifier 0x40.
        SglDescriptor sgl = dirty().setKeyed(SglDescriptor.ID_KEYED, 0x00007F0012345000L, 0x123456, 0xCAFEBABE);
        assertEquals("00 50 34 12 00 7f 00 00 56 34 12 be ba fe ca 40", hex(sgl.toBytes()));
        assertTrue(sgl.isKeyed());
        assertEquals(SglDescriptor.TYPE_KEYED_DATA_BLOCK, sgl.type());
        assertEquals(SglDescriptor.SUBTYPE_ADDRESS, sgl.subtype());
        assertEquals(0x123456, sgl.keyedLength());
        assertEquals(0xCAFEBABE, sgl.key());
        assertEquals(0x00007F0012345000L, sgl.address());
    }

    @Test
    void keyedInvalidateDescriptor() {
        SglDescriptor sgl = dirty().setKeyed(SglDescriptor.ID_KEYED_INVALIDATE, 0, 0xFFFFFF, 1);
        assertEquals("00 00 00 00 00 00 00 00 ff ff ff 01 00 00 00 4f", hex(sgl.toBytes()));
        assertEquals(SglDescriptor.SUBTYPE_INVALIDATE, sgl.subtype());
        assertEquals(0xFFFFFF, sgl.keyedLength(), "the 24-bit maximum, 16 MiB - 1");
        assertEquals(1, sgl.key());
    }

    @Test
    void keyedLengthRejectsMoreThan24Bits() {
        SglDescriptor sgl = dirty();
        assertThrows(IllegalArgumentException.class, () -> sgl.keyedLength(1 << 24));
        assertThrows(IllegalArgumentException.class, () -> sgl.keyedLength(-1));
    }

    @Test
    void keyedLengthDoesNotReadTheKeyByte() {
        // Byte 11 is the low byte of KEY; a 24-bit read must not include it.
        SglDescriptor sgl = new SglDescriptor();
        sgl.wrap(Golden.wrap(hex("00 00 00 00 00 00 00 00 00 10 00 ff ff ff ff 4f")), 0);
        assertEquals(4096, sgl.keyedLength());
        assertEquals(-1, sgl.key());
    }
}

package io.nvmeof.core.wire;

import static io.nvmeof.core.wire.Golden.hex;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nvmeof.core.command.Nqn;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Connect data, nvmeof-protocol.md §2.2; HOSTID byte order nvmeof-protocol.md §0. */
class ConnectDataTest {
    static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:5eed0000-0000-4000-8000-000000000001";
    static final String SUB_NQN = "nqn.2024-01.io.nvmeof:test";
    static final UUID HOST_ID = UUID.fromString("00112233-4455-6677-8899-aabbccddeeff");

    private static ConnectData fresh(ByteBuffer buffer) {
        ConnectData data = new ConnectData();
        data.wrap(buffer, 0);
        return data;
    }

    @Test
    void goldenLayout() {
        ConnectData data = fresh(Golden.dirtyBuffer(1024));
        data.clear();
        data.hostId(HOST_ID).cntlid(ConnectData.CNTLID_DYNAMIC).subNqn(SUB_NQN).hostNqn(HOST_NQN);
        byte[] b = data.toBytes();
        // HOSTID: textual order, byte 0 = the first two hex digits.
        assertEquals("00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff", hex(Arrays.copyOfRange(b, 0, 16)));
        assertEquals("ff ff", hex(Arrays.copyOfRange(b, 16, 18)));
        byte[] sub = SUB_NQN.getBytes(StandardCharsets.US_ASCII);
        assertEquals(hex(sub), hex(Arrays.copyOfRange(b, 256, 256 + sub.length)));
        byte[] host = HOST_NQN.getBytes(StandardCharsets.US_ASCII);
        assertEquals(hex(host), hex(Arrays.copyOfRange(b, 512, 512 + host.length)));
        // NUL terminated and zero padded to the end of each 256-byte field; reserved areas zero.
        for (int i = 256 + sub.length; i < 512; i++) {
            assertEquals(0, b[i], "SUBNQN padding at " + i);
        }
        for (int i = 512 + host.length; i < 1024; i++) {
            assertEquals(0, b[i], "HOSTNQN padding / reserved at " + i);
        }
        for (int i = 18; i < 256; i++) {
            assertEquals(0, b[i], "reserved at " + i);
        }
    }

    @Test
    void readsBack() {
        ConnectData data = fresh(Golden.buffer(1024));
        data.hostId(HOST_ID).cntlid(7).subNqn(Nqn.DISCOVERY).hostNqn(HOST_NQN);
        ConnectData reader = fresh(Golden.wrap(data.toBytes()));
        assertEquals(HOST_ID, reader.hostId());
        assertEquals(7, reader.cntlid());
        assertEquals(Nqn.DISCOVERY, reader.subNqn());
        assertEquals(HOST_NQN, reader.hostNqn());
    }

    @Test
    void hostIdFromRawBytes() {
        byte[] b = new byte[1024];
        byte[] id = hex("5e ed 00 00 00 00 40 00 80 00 00 00 00 00 00 01");
        System.arraycopy(id, 0, b, 0, 16);
        assertEquals(
                UUID.fromString("5eed0000-0000-4000-8000-000000000001"),
                fresh(Golden.wrap(b)).hostId());
    }

    @Test
    void dynamicCntlidIsFfff() {
        assertEquals(0xFFFF, ConnectData.CNTLID_DYNAMIC);
        byte[] b = new byte[1024];
        b[16] = (byte) 0xFF;
        b[17] = (byte) 0xFF;
        assertEquals(0xFFFF, fresh(Golden.wrap(b)).cntlid());
    }

    @Test
    void shorterNqnOverwritesLongerOne() {
        ConnectData data = fresh(Golden.buffer(1024));
        data.subNqn(HOST_NQN).subNqn("nqn.x");
        assertEquals("nqn.x", data.subNqn());
        byte[] b = data.toBytes();
        for (int i = 256 + 5; i < 512; i++) {
            assertEquals(0, b[i], "stale byte at " + i);
        }
    }

    @Test
    void maximumLengthNqnFitsAndLongerIsRejected() {
        String max = "nqn." + "a".repeat(ConnectData.NQN_MAX_LENGTH - 4);
        assertEquals(223, max.length());
        ConnectData data = fresh(Golden.buffer(1024));
        data.hostNqn(max);
        assertEquals(max, data.hostNqn());
        assertEquals(0, data.toBytes()[512 + 223]);
        String tooLong = max + "a";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> data.subNqn(tooLong));
        assertEquals(true, e.getMessage().contains("223"), e.getMessage());
        // counted in UTF-8 bytes, not characters: 112 two-byte characters are 224 bytes
        assertThrows(IllegalArgumentException.class, () -> data.hostNqn("é".repeat(112)));
        assertEquals(max, data.hostNqn(), "a rejected NQN must not half-overwrite the field");
    }

    @Test
    void nqnWithoutNulIsNull() {
        byte[] b = new byte[1024];
        Arrays.fill(b, 256, 512, (byte) 'a');
        Arrays.fill(b, 512, 768, (byte) 'b');
        ConnectData data = fresh(Golden.wrap(b));
        assertNull(data.subNqn());
        assertNull(data.hostNqn());
    }

    @Test
    void nqnFieldDoesNotRunIntoTheNextField() {
        // SUBNQN fills all 256 bytes without NUL; the HOSTNQN that follows starts with NUL. Still null, not "".
        byte[] b = new byte[1024];
        Arrays.fill(b, 256, 512, (byte) 'a');
        assertNull(fresh(Golden.wrap(b)).subNqn());
        assertEquals("", fresh(Golden.wrap(b)).hostNqn());
    }
}

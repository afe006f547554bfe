package io.nvmeof.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class AnaStateTest {
    @Test
    void codesAndIoStatuses() {
        assertEquals(0x01, AnaState.OPTIMIZED.code());
        assertEquals(0x02, AnaState.NON_OPTIMIZED.code());
        assertEquals(0x03, AnaState.INACCESSIBLE.code());
        assertEquals(0x04, AnaState.PERSISTENT_LOSS.code());
        assertEquals(0x0F, AnaState.CHANGE.code());
        for (AnaState s : AnaState.values()) {
            assertEquals(s, AnaState.of(s.code()));
            assertEquals(s, AnaState.parse(s.configName()));
        }
        assertNull(AnaState.of(0));
        assertNull(AnaState.of(5));
        assertTrue(AnaState.NON_OPTIMIZED.accessible());
        assertFalse(AnaState.CHANGE.accessible());
        assertEquals(0x0602, AnaState.PERSISTENT_LOSS.ioStatus(), "SCT 3, SC 01h, no DNR");
        assertEquals(0x0604, AnaState.INACCESSIBLE.ioStatus(), "SCT 3, SC 02h");
        assertEquals(0x0606, AnaState.CHANGE.ioStatus(), "SCT 3, SC 03h");
        assertEquals("Asymmetric Access Inaccessible", Status.name(Status.ANA_INACCESSIBLE));
        assertThrows(IllegalArgumentException.class, () -> AnaState.parse(null));
    }
}

package io.nvmeof.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** Feature identifiers (nvmeof-protocol.md §3.4), log page identifiers (§3.3) and CNS values (§3.2). */
class AdminIdentifierTest {
    @Test
    void featureIds() {
        assertEquals(0x06, FeatureId.VOLATILE_WRITE_CACHE.code());
        assertEquals(0x07, FeatureId.NUMBER_OF_QUEUES.code());
        assertEquals(0x0B, FeatureId.ASYNC_EVENT_CONFIGURATION.code());
        assertEquals(0x0F, FeatureId.KEEP_ALIVE_TIMER.code());
        assertEquals(0x81, FeatureId.HOST_IDENTIFIER.code());
        for (FeatureId f : FeatureId.values()) {
            assertSame(f, FeatureId.of(f.code()));
        }
        assertEquals(0x01, FeatureId.ARBITRATION.code());
        assertEquals(0x0A, FeatureId.WRITE_ATOMICITY_NORMAL.code());
        assertNull(FeatureId.of(0x0E));
        assertSame(FeatureId.NUMBER_OF_QUEUES, FeatureId.of(0x80000307), "CDW10: only bits 7:0 are the FID");
    }

    @Test
    void logPageIds() {
        assertEquals(0x01, LogPageId.ERROR_INFORMATION.code());
        assertEquals(0x02, LogPageId.SMART_HEALTH_INFORMATION.code());
        assertEquals(0x04, LogPageId.CHANGED_NAMESPACE_LIST.code());
        assertEquals(0x05, LogPageId.COMMANDS_SUPPORTED_AND_EFFECTS.code());
        assertEquals(0x70, LogPageId.DISCOVERY.code());
        assertEquals(0xC0, LogPageId.VENDOR_PERF_STATS.code());
        for (LogPageId l : LogPageId.values()) {
            assertSame(l, LogPageId.of(l.code()));
        }
        assertEquals(0x00, LogPageId.SUPPORTED_LOG_PAGES.code());
        assertEquals(0x03, LogPageId.FIRMWARE_SLOT_INFORMATION.code());
        assertEquals(0x0C, LogPageId.ASYMMETRIC_NAMESPACE_ACCESS.code());
        assertNull(LogPageId.of(0x06));
        assertSame(LogPageId.DISCOVERY, LogPageId.of(0x00048070), "CDW10: only bits 7:0 are the LID");
    }

    @Test
    void identifyCns() {
        assertEquals(0x00, IdentifyCns.NAMESPACE.code());
        assertEquals(0x01, IdentifyCns.CONTROLLER.code());
        assertEquals(0x02, IdentifyCns.ACTIVE_NAMESPACE_LIST.code());
        assertEquals(0x03, IdentifyCns.NAMESPACE_IDENTIFICATION_DESCRIPTORS.code());
        assertEquals(0x06, IdentifyCns.IO_COMMAND_SET_CONTROLLER.code());
        for (IdentifyCns c : IdentifyCns.values()) {
            assertSame(c, IdentifyCns.of(c.code()));
        }
        assertEquals(0x05, IdentifyCns.IO_COMMAND_SET_NAMESPACE.code());
        assertEquals(0x07, IdentifyCns.IO_COMMAND_SET_ACTIVE_NAMESPACE_LIST.code());
        assertEquals(0x08, IdentifyCns.IO_COMMAND_SET_INDEPENDENT_NAMESPACE.code());
        assertEquals(0x1C, IdentifyCns.IO_COMMAND_SET.code());
        assertNull(IdentifyCns.of(0x04));
        assertNull(IdentifyCns.of(0x10));
        assertSame(IdentifyCns.CONTROLLER, IdentifyCns.of(0x00120001), "CDW10: only bits 7:0 are the CNS");
    }
}

package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.target.config.AnaStateConfig;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ConfigFileTest {
    @Test
    void readsAFullConfig() {
        TargetConfig cfg = ConfigFile.parse("""
                {
                  "memoryBudget": "2G",
                  "discoveryKatoMillis": 30000,
                  "listeners": [ { "listen": "tcp://127.0.0.1:14420", "maxQueueSize": 256, "inCapsuleDataSize": "8k" },
                                 { "listen": "tcp://[::1]" } ],
                  "subsystems": [
                    { "nqn": "nqn.2024-01.io.nvmeof:a", "hosts": ["nqn.2014-08.org.nvmexpress:uuid:1"],
                      "serial": "SN1", "model": "M1",
                      "namespaces": [ { "size": "1T" },
                                      { "nsid": 7, "size": "64M", "blockSize": 512, "readOnly": true,
                                        "uuid": "11111111-2222-4333-8444-555555555555" } ] },
                    { "nqn": "nqn.2024-01.io.nvmeof:b", "namespaces": [ { "size": 1048576 } ] }
                  ]
                }""");
        assertEquals(2L << 30, cfg.memoryBudgetBytes());
        assertEquals(30000, cfg.discoveryKatoMillis());
        ListenerConfig l0 = cfg.listeners().get(0);
        assertEquals("tcp", l0.transport());
        assertEquals("127.0.0.1", l0.address());
        assertEquals(14420, l0.port());
        assertEquals(256, l0.maxQueueSize());
        assertEquals(8192, l0.inCapsuleDataSize());
        ListenerConfig l1 = cfg.listeners().get(1);
        assertEquals("::1", l1.address());
        assertEquals(4420, l1.port());
        SubsystemConfig a = cfg.subsystems().get(0);
        assertFalse(a.allowAnyHost(), "a host list without allowAnyHost restricts access");
        assertEquals("SN1", a.serial());
        NamespaceConfig n1 = a.namespaces().get(0);
        assertEquals(1, n1.nsid());
        assertEquals(1L << 40, n1.sizeBytes());
        assertEquals(4096, n1.blockSize());
        NamespaceConfig n7 = a.namespaces().get(1);
        assertEquals(7, n7.nsid());
        assertEquals(512, n7.blockSize());
        assertTrue(n7.readOnly());
        assertEquals(UUID.fromString("11111111-2222-4333-8444-555555555555"), n7.uuid());
        assertTrue(cfg.subsystems().get(1).allowAnyHost(), "no host list means any host");
    }

    @Test
    void namesTheUnknownKey() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ConfigFile.parse("""
                { "listeners": [ { "listen": "tcp://127.0.0.1:1" } ],
                  "subsystems": [ { "nqn": "nqn.x:y", "namespaces": [ { "size": "1G", "blocksize": 512 } ] } ] }"""));
        assertTrue(e.getMessage().contains("blocksize"), e.getMessage());
        assertTrue(e.getMessage().contains("$.subsystems[0].namespaces[0]"), e.getMessage());
    }

    @Test
    void rejectsBadValuesWithTheirPlace() {
        assertMessage(
                "{ \"listeners\": [ { \"listen\": \"tcp://127.0.0.1:1\" } ], \"subsystems\": [ { \"nqn\": \"nqn.x:y\","
                        + " \"namespaces\": [ { \"size\": \"lots\" } ] } ] }",
                "subsystems[0].namespaces[0].size");
        assertMessage(
                "{ \"listeners\": [ { \"listen\": \"tcp://127.0.0.1:1\" } ], \"subsystems\": [ { \"nqn\": \"nqn.x:y\","
                        + " \"namespaces\": [ { \"size\": \"1G\", \"blockSize\": 1024 } ] } ] }",
                "block size must be 512 or 4096");
        assertMessage("{ \"listeners\": [ { \"listen\": \"tcp://127.0.0.1:99999\" } ] }", "bad port");
        assertMessage("{ \"listeners\": [ { \"listen\": \"127.0.0.1:4420\" } ] }", "tcp://0.0.0.0:4420");
        assertMessage("{ \"subsystems\": [] }", "no listeners");
        // An NQN without the "nqn." prefix is accepted (with a warning), as nvmet accepts it.
        assertEquals(
                "disk1",
                ConfigFile.parse("{ \"listeners\": [ { \"listen\": \"tcp://1.2.3.4\" } ], \"subsystems\": [ {"
                                + " \"nqn\": \"disk1\" } ] }")
                        .subsystems()
                        .get(0)
                        .nqn());
        assertMessage("{ \"listeners\": [ ", "not valid JSON");
        assertMessage(
                "{ \"listeners\": [ { \"listen\": \"tcp://a\" } ], \"subsystems\": [ { \"nqn\": \"nqn.a:b\" },"
                        + " { \"nqn\": \"nqn.a:b\" } ] }",
                "used twice");
        assertMessage("{ \"memoryBudget\": \"-1G\", \"listeners\": [ { \"listen\": \"tcp://a\" } ] }", "memoryBudget");
    }

    @Test
    void readsAnaGroupsAndStates() {
        TargetConfig cfg = ConfigFile.parse("""
                { "listeners": [ { "listen": "tcp://127.0.0.1:14420" }, { "listen": "tcp://127.0.0.1:14421" } ],
                  "subsystems": [ { "nqn": "nqn.2024-01.io.nvmeof:a",
                      "namespaces": [ { "size": "1G" }, { "size": "1G", "anaGroup": 2 } ],
                      "ana": [ { "listener": 2, "group": 1, "state": "non-optimized" },
                               { "listener": 1, "group": 2, "state": "Inaccessible" } ] } ] }""");
        SubsystemConfig a = cfg.subsystems().get(0);
        assertEquals(1, a.namespaces().get(0).anaGroup(), "default group 1");
        assertEquals(2, a.namespaces().get(1).anaGroup());
        assertEquals(
                java.util.List.of(
                        new AnaStateConfig(2, 1, AnaState.NON_OPTIMIZED),
                        new AnaStateConfig(1, 2, AnaState.INACCESSIBLE)),
                a.anaStates());
    }

    @Test
    void readsListenersPerSubsystem() {
        TargetConfig cfg = ConfigFile.parse("""
                { "listeners": [ { "listen": "tcp://127.0.0.1:14420" }, { "listen": "tcp://127.0.0.1:14421" } ],
                  "subsystems": [ { "nqn": "nqn.2024-01.io.nvmeof:a", "listeners": [ 2 ] },
                                  { "nqn": "nqn.2024-01.io.nvmeof:b" } ] }""");
        assertEquals(java.util.List.of(2), cfg.subsystems().get(0).listeners());
        assertEquals(null, cfg.subsystems().get(1).listeners(), "no list: every listener");
        String head = "{ \"listeners\": [ { \"listen\": \"tcp://127.0.0.1:1\" } ], \"subsystems\": [ { \"nqn\": "
                + "\"nqn.x:y\", ";
        assertMessage(head + "\"listeners\": [ 2 ] } ] }", "subsystems[0].listeners: 2 is not a listener number");
        assertMessage(head + "\"listeners\": [ 0 ] } ] }", "numbered 1..1");
    }

    @Test
    void rejectsBadAnaSettings() {
        String head = "{ \"listeners\": [ { \"listen\": \"tcp://127.0.0.1:1\" } ], \"subsystems\": [ { \"nqn\": "
                + "\"nqn.x:y\", ";
        assertMessage(head + "\"namespaces\": [ { \"size\": \"1G\", \"anaGroup\": 0 } ] } ] }", "anaGroup is 1..128");
        assertMessage(head + "\"namespaces\": [ { \"size\": \"1G\", \"anaGroup\": 129 } ] } ] }", "1..128");
        assertMessage(
                head + "\"ana\": [ { \"listener\": 1, \"group\": 1, \"state\": \"fast\" } ] } ] }",
                "subsystems[0].ana[0]: ANA state must be one of");
        assertMessage(head + "\"ana\": [ { \"listener\": 1, \"group\": 1 } ] } ] }", "\"state\" are required");
        assertMessage(
                head + "\"ana\": [ { \"listener\": 2, \"group\": 1, \"state\": \"optimized\" } ] } ] }",
                "names listener 2, but there are only 1");
        assertMessage(
                head + "\"ana\": [ { \"listener\": 1, \"group\": 300, \"state\": \"optimized\" } ] } ] }",
                "an ANA group ID is 1..128");
        assertMessage(
                head + "\"ana\": [ { \"listener\": 1, \"group\": 1, \"state\": \"optimized\" },"
                        + " { \"listener\": 1, \"group\": 1, \"state\": \"change\" } ] } ] }",
                "two states on listener 1");
        assertMessage(
                head + "\"ana\": [ { \"listener\": 1, \"group\": 1, \"state\": \"optimized\", \"x\": 1 } ] } ] }",
                "unknown key 'x'");
    }

    private static void assertMessage(String json, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ConfigFile.parse(json));
        assertTrue(e.getMessage().contains(expected), "expected '" + expected + "' in: " + e.getMessage());
    }
}

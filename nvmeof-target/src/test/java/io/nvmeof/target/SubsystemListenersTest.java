package io.nvmeof.target;

import static io.nvmeof.target.BringUpTest.nqn;
import static io.nvmeof.target.DiscoveryTest.await;
import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Listeners per subsystem (SPDK's semantics): a subsystem is reachable, and listed in the discovery log, only on the
 * listeners it was added to; and every change of subsystems, hosts and listeners reaches a connected discovery
 * controller as the discovery log change notice on its outstanding Asynchronous Event Request.
 */
class SubsystemListenersTest {
    private static final String ANY = "nqn.2024-01.io.nvmeof:any"; // from the config: every listener
    private static final String ONLY2 = "nqn.2024-01.io.nvmeof:only2"; // the config names listener 2
    private static final String LIVE = "nqn.2024-01.io.nvmeof:live"; // added at run time, no listener yet
    private static final int DISCOVERY_LOG_CHANGED = 0x0070F002;

    private static final PortInfo PORT2 = new PortInfo(
            PortInfo.TRTYPE_TCP,
            PortInfo.ADRFAM_IPV4,
            "127.0.0.1",
            "4421",
            2,
            128,
            16384,
            0x00100001,
            0,
            PortInfo.TREQ_SQFLOW_DISABLE_SUPPORTED,
            new byte[0]);

    private final NvmeTarget target = NvmeTarget.create(new TargetConfig(
            List.of(),
            List.of(
                    new SubsystemConfig(ANY, true, List.of(), List.of(NamespaceConfig.of(1, 1 << 20)), null, null),
                    new SubsystemConfig(ONLY2, true, List.of(), List.of(NamespaceConfig.of(1, 1 << 20)), null, null)
                            .withListeners(List.of(2))),
            1L << 30,
            0));
    private final List<InJvmHost> hosts = new ArrayList<>();

    @AfterEach
    void tearDown() {
        hosts.forEach(InJvmHost::close);
        target.close();
    }

    private InJvmHost host(PortInfo port) {
        InJvmHost h = new InJvmHost(target.acceptorFor(port), port, InJvmHost.HOST_NQN);
        hosts.add(h);
        return h;
    }

    /** Discovery log entries as (PORTID, SUBNQN) strings, the discovery subsystem's own entries left out. */
    private static List<String> nvmEntries(InJvmHost discovery) {
        ByteBuffer header = check(discovery.admin(InJvmHost.getLogPage(0x70, 0, 0, 1024, true)))
                .dataBuffer();
        int n = (int) header.getLong(8);
        ByteBuffer all = check(discovery.admin(InJvmHost.getLogPage(0x70, 0, 0, 1024 * (n + 1), false)))
                .dataBuffer();
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int e = 1024 * (i + 1);
            if (all.get(e + 2) == 2) {
                out.add(all.getShort(e + 4) + " " + nqn(all, e + 256));
            }
        }
        return out;
    }

    /** Runs {@code change}, then checks the held AER completed with the discovery log change notice; re-arms it. */
    private FakeRequest expectNotice(InJvmHost discovery, FakeRequest aer, Runnable change) {
        change.run();
        assertEquals(DISCOVERY_LOG_CHANGED, await(aer).dw0());
        nvmEntries(discovery); // reading the log (RAE 0) unmasks the next notice
        return discovery.admin.submit(InJvmHost.asyncEventRequest());
    }

    @Test
    void aSubsystemIsListedAndReachableOnlyOnItsListeners() {
        target.acceptorFor(InJvmQueue.TCP_PORT); // PORTID 1
        InJvmHost discovery = host(PORT2);
        check(discovery.connectAdmin(Nqn.DISCOVERY, 0));
        discovery.enable();
        assertEquals(List.of("1 " + ANY, "2 " + ANY, "2 " + ONLY2), nvmEntries(discovery));

        assertEquals(
                Status.dnr(Status.CONNECT_INVALID_HOST),
                host(InJvmQueue.TCP_PORT).connectAdmin(ONLY2, 0).status(),
                "not added to PORTID 1: refused as SPDK does");
        host(PORT2).bringUp(ONLY2, 1);
        host(InJvmQueue.TCP_PORT).bringUp(ANY, 1);
    }

    @Test
    void everyChangeReachesAConnectedDiscoveryControllerAndTheLogFollows() throws Exception {
        target.acceptorFor(InJvmQueue.TCP_PORT);
        target.acceptorFor(PORT2);
        InJvmHost discovery = host(InJvmQueue.TCP_PORT);
        check(discovery.connectAdmin(Nqn.DISCOVERY, 0));
        discovery.enable();
        check(discovery.admin(InJvmHost.setFeatures(0x0B, 0x80000000))); // discovery log change notices, as Linux
        nvmEntries(discovery);
        FakeRequest aer = discovery.admin.submit(InJvmHost.asyncEventRequest());

        // a subsystem added with no listener: a change, but not listed anywhere yet
        aer = expectNotice(
                discovery,
                aer,
                () -> target.addSubsystem(
                        new SubsystemConfig(LIVE, false, List.of(), List.of(NamespaceConfig.of(1, 1 << 20)), null, null)
                                .withListeners(List.of())));
        assertFalse(nvmEntries(discovery).toString().contains(LIVE));
        // the host allowed: still on no listener
        aer = expectNotice(discovery, aer, () -> target.setHostAllowed(LIVE, InJvmHost.HOST_NQN, true));
        assertEquals(
                Status.dnr(Status.CONNECT_INVALID_HOST),
                host(InJvmQueue.TCP_PORT).connectAdmin(LIVE, 0).status());
        // added to PORTID 1: listed there only, and reachable there
        aer = expectNotice(discovery, aer, () -> assertTrue(target.addSubsystemListener(LIVE, 1)));
        assertFalse(target.addSubsystemListener(LIVE, 1), "already there");
        List<String> log = nvmEntries(discovery);
        assertTrue(log.contains("1 " + LIVE) && !log.contains("2 " + LIVE), log.toString());
        InJvmHost connected = host(InJvmQueue.TCP_PORT).bringUp(LIVE, 1);
        assertEquals(
                Status.dnr(Status.CONNECT_INVALID_HOST),
                host(PORT2).connectAdmin(LIVE, 0).status());

        // removed from PORTID 1: its controller there is torn down, the entry goes
        aer = expectNotice(discovery, aer, () -> assertTrue(target.removeSubsystemListener(LIVE, 1)));
        connected.admin.closed.get(5, TimeUnit.SECONDS);
        assertEquals(0, target.subsystem(LIVE).controllers().size());
        assertFalse(nvmEntries(discovery).toString().contains(LIVE));
        assertFalse(target.removeSubsystemListener(LIVE, 1), "not there any more");
        assertTrue(target.listenerInUse(1), "ANY is on every listener");

        // a subsystem on every listener that leaves one keeps the others
        aer = expectNotice(discovery, aer, () -> assertTrue(target.removeSubsystemListener(ANY, 1)));
        log = nvmEntries(discovery);
        assertTrue(log.contains("2 " + ANY) && !log.contains("1 " + ANY), log.toString());

        // the host's access removed, then the subsystem: notices both times
        aer = expectNotice(discovery, aer, () -> assertTrue(target.setHostAllowed(LIVE, InJvmHost.HOST_NQN, false)));
        aer = expectNotice(discovery, aer, () -> assertTrue(target.removeSubsystem(ONLY2)));
        assertFalse(nvmEntries(discovery).toString().contains(ONLY2));
        // a real listener opened and closed: notices both times; its PORTID leaves the subsystems it was added to
        int[] portId = new int[1];
        aer = expectNotice(discovery, aer, () -> {
            try {
                portId[0] = target.addListener(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384))
                        .portInfo()
                        .portId();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        log = nvmEntries(discovery);
        assertFalse(log.contains(portId[0] + " " + ANY), "ANY left 'every listener' when it left PORTID 1");
        aer = expectNotice(discovery, aer, () -> assertTrue(target.addSubsystemListener(ANY, portId[0])));
        log = nvmEntries(discovery);
        assertTrue(log.contains(portId[0] + " " + ANY), log.toString());
        expectNotice(discovery, aer, () -> assertTrue(target.removeListener(portId[0])));
        assertFalse(target.subsystem(ANY).reachableOn(portId[0]));
        assertFalse(nvmEntries(discovery).toString().contains(portId[0] + " "));
    }
}

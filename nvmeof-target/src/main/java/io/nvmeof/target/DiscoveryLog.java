package io.nvmeof.target;

import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueChannel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The discovery log of one {@link NvmeTarget} (nvmeof-protocol.md §3.3, §3.7): its generation counter GENCTR, bumped
 * whenever what the log lists changes, with a discovery log change notice to the connected discovery controllers
 * (§3.6), and the page for one host. Owned by the target; it keeps only GENCTR and reads the ports and subsystems it
 * is given.
 */
final class DiscoveryLog {
    private final Subsystem discovery;
    /** GENCTR of the discovery log. */
    private final AtomicLong generation = new AtomicLong(1);

    DiscoveryLog(Subsystem discovery) {
        this.discovery = discovery;
    }

    /**
     * The discovery log for {@code hostNqn}: per port, the discovery subsystem itself (SUBTYPE 3) and each NVM
     * subsystem reachable on that port that the host may use (SUBTYPE 2). A wildcard port address is given as the
     * address the host reached us on ({@code channel}'s local address).
     */
    ByteBuffer page(String hostNqn, QueueChannel channel, List<PortInfo> ports, List<Subsystem> subsystems) {
        long gen = generation.get();
        String local = hostOf(channel.localAddress());
        List<LogPages.DiscoveryEntry> entries = new ArrayList<>();
        for (PortInfo p : ports) {
            String address = isWildcard(p.address()) && local != null ? local : p.address();
            entries.add(new LogPages.DiscoveryEntry(p, address, LogPages.SUBTYPE_CURRENT_DISCOVERY, Nqn.DISCOVERY));
            for (Subsystem s : subsystems) {
                if (s.allows(hostNqn) && s.reachableOn(p.portId())) {
                    entries.add(new LogPages.DiscoveryEntry(p, address, LogPages.SUBTYPE_NVM, s.nqn()));
                }
            }
        }
        return LogPages.discovery(gen, entries);
    }

    /** GENCTR now. */
    long generation() {
        return generation.get();
    }

    /** What the log lists changed: bumps GENCTR and tells every connected discovery controller. */
    void changed() {
        generation.incrementAndGet();
        for (Controller c : discovery.controllers()) {
            c.discoveryChanged();
        }
    }

    private static String hostOf(SocketAddress address) {
        if (address instanceof InetSocketAddress isa && isa.getAddress() != null) {
            return isa.getAddress().getHostAddress();
        }
        return null;
    }

    private static boolean isWildcard(String address) {
        return address.equals("0.0.0.0") || address.equals("::") || address.equals("0:0:0:0:0:0:0:0");
    }
}

package io.nvmeof.transport.tcp;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.NettyRuntime;
import java.util.EnumMap;
import java.util.Map;

/**
 * The event loops of the host side: one group per JVM per engine and mode (the default, which polls briefly and then
 * sleeps, or busy-polling), created on the first {@link TcpTransport#connect} that needs it, sized to the number of
 * cores, with daemon threads named {@code nvme-tcp-host-<engine>[-busy]-*}. Each connection is registered with one loop
 * of the group for its whole life; that thread is its queue's thread. Netty starts a loop's thread only when the first
 * connection lands on it, so a busy-polling group spins exactly as many cores as it has connections (up to its size).
 *
 * <p>The groups are never shut down: their threads are daemons and idle sleeping ones cost nothing, and a group that
 * outlives every queue avoids a start/stop race between one initiator closing its last queue and another opening
 * one. A busy-polling thread stops spinning 100 ms after its last I/O event, so an idle group costs nothing either.
 */
final class HostEventLoops {
    private static final Map<IoEngine, EventLoopGroup> SLEEPING = new EnumMap<>(IoEngine.class);
    private static final Map<IoEngine, EventLoopGroup> BUSY = new EnumMap<>(IoEngine.class);

    private HostEventLoops() {}

    static synchronized EventLoopGroup group(IoEngine engine, boolean busyPoll) {
        Map<IoEngine, EventLoopGroup> groups = busyPoll ? BUSY : SLEEPING;
        EventLoopGroup g = groups.get(engine);
        if (g == null) {
            g = new MultiThreadIoEventLoopGroup(
                    NettyRuntime.availableProcessors(),
                    new EventLoopThreads("nvme-tcp-host-" + engine.id + (busyPoll ? "-busy" : "")),
                    engine.factory(busyPoll));
            groups.put(engine, g);
        }
        return g;
    }
}

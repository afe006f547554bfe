package io.nvmeof.transport.tcp;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.NettyRuntime;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The event loops of the host side: one group per JVM (per I/O flavour), created on the first
 * {@link TcpTransport#connect}, sized to the number of cores, with daemon threads named {@code nvme-tcp-host-*}. Each
 * connection is registered with one loop of the group for its whole life; that thread is its queue's thread.
 *
 * <p>The group is never shut down: its threads are daemons and idle ones cost nothing, and a group that outlives
 * every queue avoids a start/stop race between one initiator closing its last queue and another opening one.
 */
final class HostEventLoops {
    private static EventLoopGroup epoll;
    private static EventLoopGroup nio;

    private HostEventLoops() {
    }

    static synchronized EventLoopGroup group(boolean useEpoll) {
        if (useEpoll) {
            if (epoll == null) {
                epoll = new MultiThreadIoEventLoopGroup(NettyRuntime.availableProcessors(),
                        new DefaultThreadFactory("nvme-tcp-host-epoll", true), EpollIoHandler.newFactory());
            }
            return epoll;
        }
        if (nio == null) {
            nio = new MultiThreadIoEventLoopGroup(NettyRuntime.availableProcessors(),
                    new DefaultThreadFactory("nvme-tcp-host-nio", true), NioIoHandler.newFactory());
        }
        return nio;
    }
}

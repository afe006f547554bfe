package io.nvmeof.transport.tcp;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;

/**
 * Marks the end of each socket read: the first handler of an NVMe/TCP pipeline (before TLS, if any) passes every read
 * on, then fires {@link #END_OF_READ} behind it, once the handlers after it have dealt with everything that read
 * carried. Stateless, shared by all connections.
 *
 * <p>Why. Netty's event loop reads a ready socket several times in a row (up to 64 KiB each) before it fires
 * {@code channelReadComplete}, and the NVMe/TCP handlers flush their answers at {@code channelReadComplete}. A peer
 * that sends a burst larger than one read (32 in-capsule 4 KiB writes are 133,376 bytes) then gets no completion
 * until the whole burst has been read and processed, and sits idle meanwhile; the two sides take turns instead of
 * working at the same time. The handlers flush what is pending at each {@link #END_OF_READ}, so the peer gets the
 * first answers while the rest of its burst is being read. A burst that fits in one read is flushed once, as before.
 */
@ChannelHandler.Sharable
final class ReadBoundary extends ChannelInboundHandlerAdapter {
    /** The user event fired after each socket read has gone through the pipeline. */
    static final Object END_OF_READ = new Object() {
        @Override
        public String toString() {
            return "END_OF_READ";
        }
    };

    static final ReadBoundary INSTANCE = new ReadBoundary();

    /** The handler's name in the pipeline. */
    static final String NAME = "nvme-tcp-read-boundary";

    private ReadBoundary() {}

    /** Puts the shared instance first in {@code pipeline}, unless it is there already. */
    static void addFirst(ChannelPipeline pipeline) {
        if (pipeline.get(NAME) == null) {
            pipeline.addFirst(NAME, INSTANCE);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ctx.fireChannelRead(msg);
        ctx.fireUserEventTriggered(END_OF_READ);
    }
}

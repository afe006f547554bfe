package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** Sends a C2HTermReq or H2CTermReq and closes the connection after it (nvmeof-protocol.md §5.7). */
final class TermReqSender {
    /** If the peer does not read, the TermReq may never leave; close anyway after this long. */
    private static final long CLOSE_TIMEOUT_MILLIS = 1000;

    private TermReqSender() {}

    /**
     * Writes a TermReq of {@code type} carrying up to 128 bytes of the offending header taken from
     * {@code header[index, index + length)} (the caller keeps ownership of {@code header}), then closes the channel
     * once the write is done. Cold path: allocates freely.
     */
    static void send(ChannelHandlerContext ctx, int type, int fes, int fei, ByteBuf header, int index, int length) {
        int copied = Math.max(0, Math.min(length, TermReqPdu.MAX_COPIED_HEADER));
        ByteBuf out = ctx.alloc().buffer(TermReqPdu.HLEN + copied);
        new TermReqPdu().wrap(out, 0).set(type, fes, fei, copied);
        if (copied > 0) {
            out.setBytes(TermReqPdu.HLEN, header, index, copied);
        }
        out.writerIndex(TermReqPdu.HLEN + copied);
        ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
        ScheduledFuture<?> timeout = ctx.executor()
                .schedule(
                        () -> {
                            ctx.channel().close();
                        },
                        CLOSE_TIMEOUT_MILLIS,
                        TimeUnit.MILLISECONDS);
        ctx.channel().closeFuture().addListener(f -> timeout.cancel(false));
    }
}

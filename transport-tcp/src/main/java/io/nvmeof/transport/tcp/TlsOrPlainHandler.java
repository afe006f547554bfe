package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import java.util.function.Consumer;

/**
 * On a listener where TLS is allowed but not required (TREQ "not required"), tells the two kinds of host apart by the
 * first byte they send: 0x16 starts a TLS handshake record, an NVMe/TCP connection starts with an ICReq (PDU type
 * 0x00). It then puts the TLS handler or the NVMe/TCP handlers in its place and passes the bytes on.
 */
final class TlsOrPlainHandler extends ChannelInboundHandlerAdapter {
    private final BcTlsPskHandler tls;
    private final Consumer<ChannelPipeline> plain;

    TlsOrPlainHandler(BcTlsPskHandler tls, Consumer<ChannelPipeline> plain) {
        this.tls = tls;
        this.plain = plain;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        // Held back: the handlers chosen later start on their own.
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf buf = (ByteBuf) msg;
        if (!buf.isReadable()) {
            buf.release();
            return;
        }
        ChannelPipeline pipeline = ctx.pipeline();
        if (buf.getUnsignedByte(buf.readerIndex()) == BcTlsPskHandler.TLS_HANDSHAKE) {
            pipeline.replace(this, "nvme-tls", tls);
        } else {
            pipeline.remove(this);
            plain.accept(pipeline);
        }
        pipeline.fireChannelRead(buf);
    }
}

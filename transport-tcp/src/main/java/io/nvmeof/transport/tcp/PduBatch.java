package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;

/**
 * Gathers the PDUs a connection writes into one pooled buffer, which goes to Netty as one message: on a target the
 * CapsuleResps, the headers of C2HData and R2T, ICResp and data digests; on a host the CapsuleCmd and H2CData
 * headers and data digests. Data never go into it: they are written after it, as views of their own buffers. A burst
 * of 32 completions or commands is then one message and one iovec in the {@code writev}, instead of one per PDU, each
 * allocated, queued and released on its own.
 *
 * <p>It sits in the pipeline just before the decoder, so every message of the connection passes through it: before
 * any other message (a C2HData's data, a TermReq from the decoder or the handler) and before every flush, the PDUs
 * gathered so far go first. The wire order is therefore the order in which the PDUs were written. Before another
 * message the PDUs go as a retained slice and the batch stays, so that the next PDU header (a read's C2HData after
 * the previous read's data, a CapsuleCmd after the previous write's in-capsule data) goes on in the same buffer; at a
 * flush, or when it is full, the batch itself goes with the bytes not yet sliced.
 *
 * <p>Ownership: the batch is this handler's until it is handed to Netty (each slice holds a reference of its own);
 * if the connection goes before that, {@link #handlerRemoved} releases this handler's reference. One per
 * connection, used on its event loop only.
 */
final class PduBatch extends ChannelOutboundHandlerAdapter {
    /**
     * The batch's size: 73 CapsuleResps with header digests (28 bytes each) or 26 CapsuleCmds without data (76 bytes)
     * fit in one ({@link #room} would give anything longer a batch of its own size; no PDU header is). 2 KiB rather
     * than 4: with a pooled allocator without thread caches (the allocation tests), 4 KiB batches made the arena
     * create and drop its page bookkeeping about once per command (48 heap bytes per command against 16).
     */
    static final int CAPACITY = 2048;

    private ChannelHandlerContext ctx;
    /** The buffer the PDUs go into; null until the first PDU after a hand-over of the whole batch. */
    private ByteBuf batch;
    /** Where the batch's bytes not yet handed over (as a slice) begin. */
    private int sliced;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /**
     * The buffer to append {@code length} bytes to, at its writerIndex; the caller writes them and moves the
     * writerIndex past them. A batch without room for them is handed to Netty first and a new one started.
     */
    ByteBuf room(int length) {
        if (batch != null && batch.capacity() - batch.writerIndex() < length) {
            handOver();
        }
        if (batch == null) {
            batch = ctx.alloc().directBuffer(Math.max(CAPACITY, length));
            sliced = 0;
        }
        return batch;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        handOverSlice();
        ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        handOver();
        ctx.flush();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        ByteBuf b = batch;
        if (b != null) {
            batch = null;
            b.release(); // never handed to Netty: the connection closed first
        }
    }

    /**
     * The PDUs gathered since the last hand-over go to Netty as a retained slice; the batch stays for more. The bytes
     * count as handed over before the write: a flush that the write sets off (an {@code EmbeddedChannel} runs its
     * pending tasks inside a write; a handler may flush on a writability change) must not hand them over again.
     */
    private void handOverSlice() {
        ByteBuf b = batch;
        if (b != null && b.writerIndex() > sliced) {
            int start = sliced;
            sliced = b.writerIndex();
            ctx.write(b.retainedSlice(start, sliced - start), ctx.voidPromise());
        }
    }

    /** The batch goes to Netty with the bytes not yet sliced, or is released if there are none. */
    private void handOver() {
        ByteBuf b = batch;
        if (b != null) {
            batch = null;
            if (b.writerIndex() > sliced) {
                b.readerIndex(sliced);
                ctx.write(b, ctx.voidPromise());
            } else {
                b.release(); // everything went as slices, which hold the memory until Netty has written them
            }
        }
    }
}

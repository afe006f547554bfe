package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;

/**
 * One complete, header-validated PDU as {@link NvmeTcpPduDecoder} hands it on.
 *
 * <p><b>Ownership.</b> {@link #buffer()} is a retained slice of the decoder's cumulation (no copy): index 0 is the
 * first byte of the common header and its length is PLEN. The handler that receives the PDU owns that reference and
 * must {@link #release()} it before returning from {@code channelRead}, or {@link #takeBuffer() take} it and
 * release it later itself (the target keeps a CapsuleCmd's or an H2CData's buffer as the command's write data).
 *
 * <p><b>Reuse.</b> To keep the receive path allocation-free, a decoder reuses one instance for every PDU it emits:
 * the object (not the buffer) is valid only inside the {@code channelRead} call that delivers it. Do not put a
 * handler that queues messages (e.g. FlowControlHandler) between the decoder and its consumer.
 */
public final class NvmeTcpPdu {
    private ByteBuf buffer;
    private int type;
    private int flags;
    private int hlen;
    private int dataIndex;
    private int dataLength;
    private boolean dataDigestValid;

    void set(ByteBuf buffer, int type, int flags, int hlen, int dataIndex, int dataLength, boolean dataDigestValid) {
        this.buffer = buffer;
        this.type = type;
        this.flags = flags;
        this.hlen = hlen;
        this.dataIndex = dataIndex;
        this.dataLength = dataLength;
        this.dataDigestValid = dataDigestValid;
    }

    /** The whole PDU (PLEN bytes, index 0 = common header). Released by {@link #release()}. */
    public ByteBuf buffer() {
        return buffer;
    }

    /** TYPE (nvmeof-protocol.md §5.3). */
    public int type() {
        return type;
    }

    /** FLAGS (nvmeof-protocol.md §5.2). */
    public int flags() {
        return flags;
    }

    public boolean hasFlag(int flag) {
        return (flags & flag) != 0;
    }

    public int hlen() {
        return hlen;
    }

    /** Index in {@link #buffer()} of the first data byte (PDO), meaningful when {@link #dataLength()} &gt; 0. */
    public int dataIndex() {
        return dataIndex;
    }

    /** Data bytes in the PDU: PLEN − PDO − DDGST (nvmeof-protocol.md §5.2); for a TermReq, the copied header length. */
    public int dataLength() {
        return dataLength;
    }

    /** False if a data digest was present and did not match (nvmeof-protocol.md §5.8); true otherwise. */
    public boolean dataDigestValid() {
        return dataDigestValid;
    }

    /**
     * Takes the buffer reference away from this PDU: the caller now owns it and must release it exactly once;
     * {@link #release()} then does nothing. The target uses it to keep write data (in-capsule, or a whole transfer in
     * one H2CData) where the decoder put it instead of copying it.
     */
    ByteBuf takeBuffer() {
        ByteBuf b = buffer;
        buffer = null;
        return b;
    }

    /** Releases the buffer reference (once), unless {@link #takeBuffer()} took it. */
    public void release() {
        ByteBuf b = buffer;
        buffer = null;
        if (b != null) {
            b.release();
        }
    }

    @Override
    public String toString() {
        return PduHeader.typeName(type) + "[flags=0x" + Integer.toHexString(flags) + " hlen=" + hlen + " data="
                + dataLength + "]";
    }
}

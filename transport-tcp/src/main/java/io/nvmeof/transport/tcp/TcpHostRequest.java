package io.nvmeof.transport.tcp;

import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.util.DirectBuffers;
import java.nio.ByteBuffer;

/**
 * The host side's state for one command ID on one queue: a reusable slot in {@link NvmeTcpHostHandler}'s CID-indexed
 * array, touched only on the queue's event loop.
 *
 * <pre>
 *  FREE --send: CapsuleCmd written--&gt; SENT --CapsuleResp, or C2HData with SUCCESS--&gt; FREE (onResponse)
 *                                      |  R2T: H2CData PDUs written, {@link #sent} advances
 *                                      |  C2HData: data copied, {@link #received} advances
 *                                      +--queue closed--&gt; FREE (onTransportError)
 * </pre>
 * The whole data description is copied out of the {@link HostCommand} when the command is sent, so the hot path never
 * calls back into the initiator's object except for the final callback.
 */
final class TcpHostRequest {
    enum State {
        FREE,
        SENT
    }

    final int cid;
    State state = State.FREE;
    HostCommand command;
    ByteBuffer buffer;
    int offset;
    int length;
    /** The direct buffer's native address (copies and CRCs through a re-pointed {@link DirectView}), or 0. */
    long address;

    boolean hostToController;
    boolean inCapsule;
    /** Host-to-controller bytes already sent in H2CData (the end of the last R2T answered). */
    long sent;
    /** Controller-to-host bytes received so far; the next C2HData must start here (nvmeof-protocol.md §5.10). */
    long received;
    /** C2HData with LAST_PDU was seen; no more data may come for this command. */
    boolean lastPdu;
    /** A C2HData failed its data digest: the command completes with Data Transfer Error (nvmeof-protocol.md §5.8). */
    boolean digestError;

    // A duplicate of the last data buffer seen on this CID, for ByteBuffer-based copies and CRCs without touching the
    // caller's position and limit. Made once per distinct buffer; an initiator that reuses a buffer per CID makes it
    // once. It keeps that buffer reachable until another one replaces it.
    private ByteBuffer viewSource;
    private ByteBuffer view;

    TcpHostRequest(int cid) {
        this.cid = cid;
    }

    /** Takes the command's data description (on the event loop, when the command is sent). */
    void bind(HostCommand command, boolean hostToController) {
        this.command = command;
        this.length = command.dataLength();
        this.buffer = length > 0 ? command.dataBuffer() : null;
        this.offset = length > 0 ? command.dataOffset() : 0;
        this.address = buffer != null ? DirectBuffers.address(buffer) : 0L;
        this.hostToController = hostToController;
        this.inCapsule = false;
        this.sent = 0;
        this.received = 0;
        this.lastPdu = false;
        this.digestError = false;
        this.state = State.SENT;
    }

    /** Back to FREE; returns the command to call back. */
    HostCommand reset() {
        HostCommand c = command;
        command = null;
        buffer = null;
        address = 0L;
        state = State.FREE;
        return c;
    }

    /**
     * The command's data [at, at + len) (offsets into the data, not the buffer) as a ByteBuffer from position 0 or
     * {@code at}: through {@code direct} re-pointed at the native address when there is one (no allocation), else a
     * duplicate of the caller's buffer. Valid until the next call.
     */
    ByteBuffer data(DirectView direct, int at, int len) {
        ByteBuffer v = address != 0L ? direct.at(address + offset + at, len) : null;
        return v != null ? v : view(offset + at, len);
    }

    /** The data buffer with position {@code index} and limit {@code index + len} (absolute buffer indexes). */
    ByteBuffer view(int index, int len) {
        if (viewSource != buffer) {
            view = buffer.duplicate();
            viewSource = buffer;
        }
        view.clear();
        view.limit(index + len).position(index);
        return view;
    }
}

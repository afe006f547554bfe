package io.nvmeof.conformance;

import io.nvmeof.core.command.DataDirection;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Builds one {@link Cmd}: the SQE bytes (nvmeof-protocol.md §1.2), its SGL descriptor (§1.3) and the data around it.
 * Every field can be set to any value; nothing is checked.
 */
final class Sqe {
    private final ByteBuffer b =
            ByteBuffer.allocate(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    private final Cmd.Queue queue;
    private String label;
    private byte[] inCapsule;
    private byte[] writeData;
    private int readLength;
    private boolean patchCntlid;
    private int timeout = Cmd.DEFAULT_TIMEOUT_MILLIS;

    private Sqe(Cmd.Queue queue, int opcode, String label) {
        this.queue = queue;
        this.label = label;
        b.put(0, (byte) opcode);
        b.put(1, (byte) SubmissionQueueEntry.FLAGS_SGL);
        sgl(SglDescriptor.ID_TCP_TRANSPORT, 0, 0); // no data: what Linux sends (nvmeof-protocol.md §5.10)
    }

    static Sqe admin(int opcode, String label) {
        return new Sqe(Cmd.Queue.ADMIN, opcode, label);
    }

    static Sqe io(int opcode, String label) {
        return new Sqe(Cmd.Queue.IO, opcode, label);
    }

    static Sqe on(Cmd.Queue queue, int opcode, String label) {
        return new Sqe(queue, opcode, label);
    }

    Sqe flags(int flags) {
        b.put(1, (byte) flags);
        return this;
    }

    Sqe nsid(int nsid) {
        b.putInt(SubmissionQueueEntry.NSID_OFFSET, nsid);
        return this;
    }

    /** Byte 4: the fabrics command type (opcode 7Fh), which shares its place with NSID. */
    Sqe fctype(int fctype) {
        b.put(SubmissionQueueEntry.FCTYPE_OFFSET, (byte) fctype);
        return this;
    }

    Sqe cdw(int n, int value) {
        b.putInt(n * 4, value);
        return this;
    }

    Sqe u8(int offset, int value) {
        b.put(offset, (byte) value);
        return this;
    }

    Sqe u16(int offset, int value) {
        b.putShort(offset, (short) value);
        return this;
    }

    Sqe u32(int offset, int value) {
        b.putInt(offset, value);
        return this;
    }

    Sqe u64(int offset, long value) {
        b.putLong(offset, value);
        return this;
    }

    /** SGL1 descriptor: ADDRESS, LENGTH, identifier byte (type in bits 7:4, subtype in 3:0). */
    Sqe sgl(int identifier, long address, int length) {
        b.putLong(SubmissionQueueEntry.SGL1_OFFSET + SglDescriptor.ADDRESS_OFFSET, address);
        b.putInt(SubmissionQueueEntry.SGL1_OFFSET + SglDescriptor.LENGTH_OFFSET, length);
        b.put(SubmissionQueueEntry.SGL1_OFFSET + SglDescriptor.IDENTIFIER_OFFSET, (byte) identifier);
        return this;
    }

    Sqe inCapsule(byte[] data) {
        this.inCapsule = data;
        return this;
    }

    Sqe writeData(byte[] data) {
        this.writeData = data;
        return this;
    }

    Sqe readLength(int length) {
        this.readLength = length;
        return this;
    }

    Sqe patchCntlid() {
        this.patchCntlid = true;
        return this;
    }

    Sqe timeout(int millis) {
        this.timeout = millis;
        return this;
    }

    /**
     * The data transfer of an opcode as the spec's opcode bits 1:0 say (nvmeof-protocol.md §3.1): host to controller
     * goes in the capsule when it fits in {@code inCapsuleMax} (else by R2T), controller to host up to the length.
     */
    Sqe data(SglVariant sgl, byte[] hostData, int length, int inCapsuleMax) {
        int opcode = b.get(0) & 0xFF;
        DataDirection dir = DataDirection.of(opcode == 0x7F ? b.get(SubmissionQueueEntry.FCTYPE_OFFSET) : opcode);
        boolean toController = dir.hostToController();
        sgl.apply(this, length, toController, hostData, inCapsuleMax);
        if (!label.contains(" sgl=")) {
            label = label + " sgl=" + sgl; // allow-list rules can match SGL variants by label
        }
        if (dir.controllerToHost() || dir == DataDirection.NONE) {
            readLength = Math.max(readLength, sgl.takes(length));
        }
        return this;
    }

    Cmd build() {
        return new Cmd(queue, label, b.array().clone(), inCapsule, writeData, readLength, patchCntlid, false, timeout);
    }
}

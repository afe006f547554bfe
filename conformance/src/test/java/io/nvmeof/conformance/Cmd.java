package io.nvmeof.conformance;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One generated command: the 64 SQE bytes exactly as sent (the raw host only writes the CID), the data the host offers
 * and the data it is ready to take. Immutable once built; the generator owns the arrays.
 *
 * @param queue where it goes: the admin queue or I/O queue 1 of the sequence's controller
 * @param label what the generator meant (for reports and {@code label=} allow-list rules), e.g. {@code read slba=cap}
 * @param sqe 64 bytes, little-endian; bytes 2–3 (CID) are overwritten when sent
 * @param inCapsule data sent in the CapsuleCmd PDU after the SQE, or null
 * @param writeData data the host sends in H2CData PDUs when the target asks with R2T (missing bytes are zeros), or
 *     null (then an R2T is answered with zeros up to the SGL length)
 * @param readLength the most C2HData bytes the host takes (the SGL length for a read; 0 when none are expected)
 * @param patchCntlid Connect data bytes 16–17 get the CNTLID the admin Connect returned (an I/O queue Connect)
 * @param fusedWithNext this is the first of a fused pair: the runner sends it and the next command back to back
 * @param timeoutMillis how long the host waits for the completion before the outcome is {@code NO_RESPONSE}
 */
public record Cmd(
        Queue queue,
        String label,
        byte[] sqe,
        byte[] inCapsule,
        byte[] writeData,
        int readLength,
        boolean patchCntlid,
        boolean fusedWithNext,
        int timeoutMillis) {

    public enum Queue {
        ADMIN,
        IO
    }

    /** How long the host waits for a completion: 1.5 s (nvmet under TCG answers in milliseconds), or {@code -Dconformance.timeoutMillis}. */
    public static final int DEFAULT_TIMEOUT_MILLIS = Integer.getInteger("conformance.timeoutMillis", 1500);

    public int opcode() {
        return sqe[0] & 0xFF;
    }

    public int flags() {
        return sqe[1] & 0xFF;
    }

    public int nsid() {
        return le().getInt(4);
    }

    /** Command dword {@code n} (10..15 are the command-specific ones; 2, 3 too). */
    public int cdw(int n) {
        return le().getInt(n * 4);
    }

    /** The fabrics command type (byte 4) when the opcode is 7Fh. */
    public int fctype() {
        return sqe[4] & 0xFF;
    }

    /** Fabrics Connect, Property Get and Property Set also go by opcode 7Fh; true for every fabrics command. */
    public boolean isFabrics() {
        return opcode() == 0x7F;
    }

    public Cmd withFusedWithNext() {
        return new Cmd(queue, label, sqe, inCapsule, writeData, readLength, patchCntlid, true, timeoutMillis);
    }

    public Cmd withTimeout(int millis) {
        return new Cmd(queue, label, sqe, inCapsule, writeData, readLength, patchCntlid, fusedWithNext, millis);
    }

    private ByteBuffer le() {
        return ByteBuffer.wrap(sqe).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public String toString() {
        return queue + " " + label;
    }
}

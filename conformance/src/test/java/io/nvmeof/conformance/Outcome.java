package io.nvmeof.conformance;

/**
 * What one target answered to one command: the CQE fields that the comparison looks at, the data it sent, and what
 * became of the connection.
 *
 * @param fate the connection after the command
 * @param status the CQE status field (bits 15:1; bit 0, the phase tag, is always 0 on fabrics)
 * @param dw0 CQE dword 0 (command specific)
 * @param dw1 CQE dword 1 (command specific; Property Get of an 8-byte property)
 * @param data the C2HData bytes received (offset 0..length), never null
 * @param fes the C2HTermReq's fatal error status when {@code fate} is {@code TERMINATED}
 */
public record Outcome(Fate fate, int status, int dw0, int dw1, byte[] data, int fes) {

    /** What became of the connection the command went on (nvmeof-protocol.md §5.7). */
    public enum Fate {
        /** A completion arrived and the connection stays up. */
        KEPT,
        /** The target sent a C2HTermReq (and closed). */
        TERMINATED,
        /** The target closed (FIN or RST) without a completion. */
        CLOSED,
        /** Neither a completion nor a close within the command's timeout. */
        NO_RESPONSE,
        /**
         * An Asynchronous Event Request without a completion within its wait, as expected: it stays outstanding and
         * the connection stays usable (a later completion for it is skipped).
         */
        OUTSTANDING,
        /** The target sent a PDU the binding does not allow here (wrong type, CID, offsets). */
        PROTOCOL,
        /** The command was not sent: its connection was already gone. */
        NOT_SENT
    }

    private static final byte[] NONE = new byte[0];

    public static Outcome completed(int status, int dw0, int dw1, byte[] data) {
        return new Outcome(Fate.KEPT, status, dw0, dw1, data, 0);
    }

    public static Outcome failed(Fate fate, int fes) {
        return new Outcome(fate, 0, 0, 0, NONE, fes);
    }

    public boolean completed() {
        return fate == Fate.KEPT;
    }

    /** The fate as the report prints it, e.g. {@code TERMINATED(fes=0x01)}. */
    public String fateText() {
        return fate == Fate.TERMINATED ? String.format("TERMINATED(fes=%02x)", fes) : fate.name();
    }
}

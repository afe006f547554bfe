package io.nvmeof.core.command;

import io.nvmeof.core.wire.SubmissionQueueEntry;

/**
 * The data transfer direction of a command, from bits 1:0 of its opcode, or of FCTYPE for a fabrics command
 * (nvmeof-protocol.md §1.1, §2.1). Every transport and the loop transport take a command's direction from
 * {@link #of(SubmissionQueueEntry)}, on the host and on the target side alike.
 */
public enum DataDirection {
    NONE,
    HOST_TO_CONTROLLER,
    CONTROLLER_TO_HOST,
    BIDIRECTIONAL;

    private static final DataDirection[] BY_BITS = values();

    /** The direction of an opcode (admin or I/O) or of a fabrics command type. */
    public static DataDirection of(int opcodeOrFctype) {
        return BY_BITS[opcodeOrFctype & 0x3];
    }

    /** The direction of a command: its opcode's bits 1:0, or its FCTYPE's for a fabrics command (opcode 7Fh). */
    public static DataDirection of(SubmissionQueueEntry sqe) {
        int opcode = sqe.opcode();
        return of(opcode == FabricsCommandType.OPCODE ? sqe.fctype() : opcode);
    }

    /** Bit 0: data moves from the host to the controller (a write-like command, or a bidirectional one). */
    public boolean hostToController() {
        return (ordinal() & 0x1) != 0;
    }

    /** Bit 1: data moves from the controller to the host (a read-like command, or a bidirectional one). */
    public boolean controllerToHost() {
        return (ordinal() & 0x2) != 0;
    }
}

package io.nvmeof.initiator;

import io.nvmeof.core.command.Status;

/**
 * The controller completed a command with an error status (nvmeof-protocol.md §1.2, §1.4), e.g. LBA Out of Range or
 * Compare Failure. Carries the status, the opcode and the command's fields so the message says what failed:
 * {@code "Read (opc 0x02) nsid 1 slba 100 nlb 8 failed: LBA Out of Range (sct=0x0 sc=0x80 dnr)"}.
 */
public class NvmeStatusException extends NvmeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final int opcode;
    private final String command;

    /**
     * @param status  the 16-bit wire status (nvmeof-protocol.md §1.2)
     * @param opcode  the command's opcode (0x7F for fabrics commands)
     * @param command a readable description of the command, e.g. "Read (opc 0x02) nsid 1 slba 100 nlb 8"
     */
    public NvmeStatusException(int status, int opcode, String command) {
        super(command + " failed: " + Status.toString(status));
        this.status = status;
        this.opcode = opcode;
        this.command = command;
    }

    /** The exception for this status: {@link ReservationConflictException} for Reservation Conflict, else this class. */
    public static NvmeStatusException of(int status, int opcode, String command) {
        if (Status.is(status, Status.RESERVATION_CONFLICT)) {
            return new ReservationConflictException(status, opcode, command);
        }
        return new NvmeStatusException(status, opcode, command);
    }

    /** The status field as on the wire, phase bit included (nvmeof-protocol.md §1.2); decode with {@link Status}. */
    public int status() {
        return status;
    }

    /** Status Code Type, bits 11:9 (nvmeof-protocol.md §1.2). */
    public int sct() {
        return Status.sct(status);
    }

    /** Status Code, bits 8:1 (nvmeof-protocol.md §1.2). */
    public int sc() {
        return Status.sc(status);
    }

    /** Do Not Retry (nvmeof-protocol.md §1.2): retrying the same command will fail the same way. */
    public boolean dnr() {
        return Status.isDnr(status);
    }

    public int opcode() {
        return opcode;
    }

    /** The description of the failed command. */
    public String command() {
        return command;
    }
}

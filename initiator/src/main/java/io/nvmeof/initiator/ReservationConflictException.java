package io.nvmeof.initiator;

/**
 * The controller refused a command with Reservation Conflict (generic status 83h, NVMe Base 2.0, Reservations,
 * §8.19): another host holds a reservation that excludes this one, or a reservation command named a key or action
 * that does not match the namespace's registrations.
 */
public final class ReservationConflictException extends NvmeStatusException {
    private static final long serialVersionUID = 1L;

    public ReservationConflictException(int status, int opcode, String command) {
        super(status, opcode, command);
    }
}

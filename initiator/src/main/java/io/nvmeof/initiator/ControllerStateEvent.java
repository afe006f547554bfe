package io.nvmeof.initiator;

/**
 * One change of a {@link Controller}'s state.
 *
 * @param controller the controller
 * @param previous   the state before (null for the first event, {@link ControllerState#CONNECTING})
 * @param state      the state now
 * @param reason     why, in words: e.g. "connecting", "connected", "I/O queue 2 closed: Connection reset",
 *                   "Keep Alive got no answer within 5000 ms", "reconnected (attempt 3)", "ctrl_loss_tmo 30 s passed"
 * @param cause      the failure that caused it, or null (for CONNECTING, LIVE and an orderly DELETED)
 */
public record ControllerStateEvent(
        Controller controller, ControllerState previous, ControllerState state, String reason, NvmeException cause) {
    @Override
    public String toString() {
        return (previous == null ? "" : previous + " -> ") + state + " (" + reason + ")";
    }
}

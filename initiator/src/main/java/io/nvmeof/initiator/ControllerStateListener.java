package io.nvmeof.initiator;

/**
 * Told each change of a {@link Controller}'s {@link ControllerState}, with the reason. Register with
 * {@link Controller#addStateListener} or {@link ConnectOptions.Builder#stateListener} (which also sees
 * {@link ControllerState#CONNECTING} and the first {@link ControllerState#LIVE}).
 *
 * <p>Called on the controller's own state thread, one event at a time, in the order the changes happened; never on a
 * queue's thread. A listener may call the controller (but waiting there for I/O delays the next events). An exception
 * it throws is logged and ignored.
 */
@FunctionalInterface
public interface ControllerStateListener {
    void stateChanged(ControllerStateEvent event);
}

package io.nvmeof.initiator;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link ControllerStateListener} that keeps every event it is told, in order, for a test to read from its own
 * thread while the controller's state thread adds to it (the list is copy-on-write).
 */
final class StateEventLog implements ControllerStateListener {
    private final List<ControllerStateEvent> events = new CopyOnWriteArrayList<>();

    @Override
    public void stateChanged(ControllerStateEvent event) {
        events.add(event);
    }

    ControllerStateEvent get(int index) {
        return events.get(index);
    }

    ControllerStateEvent last() {
        return events.get(events.size() - 1);
    }

    /** The states so far, in order. */
    List<ControllerState> states() {
        List<ControllerState> s = new ArrayList<>();
        for (ControllerStateEvent e : events) {
            s.add(e.state());
        }
        return s;
    }

    /** How many times the controller went from {@link ControllerState#RECONNECTING} to {@link ControllerState#LIVE}. */
    int reconnects() {
        int n = 0;
        for (ControllerStateEvent e : events) {
            if (e.previous() == ControllerState.RECONNECTING && e.state() == ControllerState.LIVE) {
                n++;
            }
        }
        return n;
    }
}

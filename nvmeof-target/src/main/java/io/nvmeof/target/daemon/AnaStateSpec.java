package io.nvmeof.target.daemon;

import io.nvmeof.core.command.AnaState;
import io.nvmeof.target.config.AnaStateConfig;
import java.util.Locale;

/** Parses the daemon's {@code --ana-state listener=P,group=G,state=S} option (one ANA group state on one listener). */
final class AnaStateSpec {
    private AnaStateSpec() {}

    static AnaStateConfig parse(String spec) {
        Integer listener = null;
        Integer group = null;
        AnaState state = null;
        for (String part : spec.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            String key = (eq < 0 ? p : p.substring(0, eq)).toLowerCase(Locale.ROOT);
            String value = eq < 0 ? "" : p.substring(eq + 1).trim();
            switch (key) {
                case "listener":
                    listener = number(key, value);
                    break;
                case "group":
                    group = number(key, value);
                    break;
                case "state":
                    state = AnaState.parse(value);
                    break;
                default:
                    throw new IllegalArgumentException(
                            "unknown ANA setting '" + key + "' (use listener=P,group=G,state=S)");
            }
        }
        if (listener == null || group == null || state == null) {
            throw new IllegalArgumentException("--ana-state needs listener=, group= and state=, e.g. "
                    + "--ana-state listener=2,group=1,state=non-optimized");
        }
        return new AnaStateConfig(listener, group, state);
    }

    private static int number(String key, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("ANA setting '" + key + "' must be a number: '" + value + "'");
        }
    }
}

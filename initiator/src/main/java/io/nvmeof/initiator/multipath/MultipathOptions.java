package io.nvmeof.initiator.multipath;

import io.nvmeof.initiator.ConnectOptions;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link MultipathNamespace} connects and behaves.
 *
 * @param connect          the options of every path's controller (one host identity for all of them)
 * @param policy           the path selection policy; null: the URI's {@code iopolicy=} (default numa)
 * @param reconnectDelay   the time between reconnect attempts of a path: its controller's own reconnect
 *                         ({@code reconnect_delay}) and, once a controller is lost for good ({@code ctrl_loss_tmo}),
 *                         the path's new connections; null: the URI's {@code reconnect_delay} (Linux default 10 s)
 * @param noPathTimeout    how long a command waits for a usable path while none is, counted from its first path
 *                         error (or from its submission when no path was usable then); null: the URI's command
 *                         timeout. Then it fails with the last path error
 */
public record MultipathOptions(
        ConnectOptions connect, IoPolicy policy, Duration reconnectDelay, Duration noPathTimeout) {
    public MultipathOptions {
        Objects.requireNonNull(connect, "connect");
        if (reconnectDelay != null && (reconnectDelay.isNegative() || reconnectDelay.isZero())) {
            throw new IllegalArgumentException("reconnectDelay must be positive: " + reconnectDelay);
        }
        if (noPathTimeout != null && noPathTimeout.isNegative()) {
            throw new IllegalArgumentException("noPathTimeout must not be negative: " + noPathTimeout);
        }
    }

    /** Default connect options, and the URI's policy, reconnect delay and command timeout (as no-path timeout). */
    public static MultipathOptions defaults() {
        return new MultipathOptions(ConnectOptions.defaults(), null, null, null);
    }

    public MultipathOptions withPolicy(IoPolicy p) {
        return new MultipathOptions(connect, p, reconnectDelay, noPathTimeout);
    }

    public MultipathOptions withReconnectDelay(Duration d) {
        return new MultipathOptions(connect, policy, d, noPathTimeout);
    }

    public MultipathOptions withNoPathTimeout(Duration d) {
        return new MultipathOptions(connect, policy, reconnectDelay, d);
    }

    public MultipathOptions withConnect(ConnectOptions c) {
        return new MultipathOptions(c, policy, reconnectDelay, noPathTimeout);
    }
}

package io.nvmeof.perf.jmh;

import io.netty.channel.embedded.EmbeddedChannel;

/**
 * Two {@link EmbeddedChannel}s joined back to back, a host's and a controller's, standing in for one TCP connection:
 * {@link #exchange} hands what each side wrote to the other side as a socket read, until neither has anything left.
 * Used to bring a queue up through the real handlers on both sides without a socket. Owns neither channel.
 */
final class EmbeddedLink {
    private final EmbeddedChannel host;
    private final EmbeddedChannel controller;

    EmbeddedLink(EmbeddedChannel host, EmbeddedChannel controller) {
        this.host = host;
        this.controller = controller;
    }

    /** Moves messages both ways until both sides are quiet; fails if they never are. */
    void exchange() {
        for (int round = 0; round < 1000; round++) {
            host.runPendingTasks();
            controller.runPendingTasks();
            boolean moved = move(host, controller) | move(controller, host);
            if (!moved) {
                return;
            }
        }
        throw new IllegalStateException("the two ends kept writing to each other");
    }

    /** Every message {@code from} wrote, read by {@code to} (one read each, then the burst's end). */
    private static boolean move(EmbeddedChannel from, EmbeddedChannel to) {
        boolean moved = false;
        for (Object m; (m = from.readOutbound()) != null; ) {
            to.writeOneInbound(m);
            moved = true;
        }
        if (moved) {
            to.flushInbound();
        }
        return moved;
    }
}

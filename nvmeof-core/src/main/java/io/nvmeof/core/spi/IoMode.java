package io.nvmeof.core.spi;

import java.util.Locale;

/**
 * How a transport waits for I/O: which kernel interface its event loops use, and whether they sleep or busy-poll.
 *
 * @param engine   "auto" (the best available), or a transport-specific name: for TCP "epoll", "io_uring", "nio"
 * @param busyPoll spin on the queue's thread instead of sleeping (fio's {@code --hipri}): lowest latency, one core
 *                 busy per event-loop thread
 */
public record IoMode(String engine, boolean busyPoll) {
    public static final IoMode DEFAULT = new IoMode("auto", false);

    public IoMode {
        engine = engine == null || engine.isBlank() ? "auto" : engine.toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return engine + (busyPoll ? "+busy-poll" : "");
    }
}

package io.nvmeof.target.namespace;

import java.util.concurrent.atomic.LongAdder;

/**
 * The SMART / Health counters of one {@link RamNamespace} (nvmeof-protocol.md §3.3): read and write commands and their
 * bytes since the target started. Bumped by the namespace from every queue thread without a lock; read by the log
 * pages (sums, so a reader sees each counter at some moment, not all four at one).
 */
public final class NamespaceCounters {
    private final LongAdder readCommands = new LongAdder();
    private final LongAdder writeCommands = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();

    /** One read (or compare) of {@code bytes}. */
    void read(long bytes) {
        readCommands.increment();
        bytesRead.add(bytes);
    }

    /** One write of {@code bytes}. */
    void written(long bytes) {
        writeCommands.increment();
        bytesWritten.add(bytes);
    }

    public long readCommands() {
        return readCommands.sum();
    }

    public long writeCommands() {
        return writeCommands.sum();
    }

    public long bytesRead() {
        return bytesRead.sum();
    }

    public long bytesWritten() {
        return bytesWritten.sum();
    }
}

package io.nvmeof.core.spi;

/** Implemented by the target core: creates the command handler for a newly accepted queue (connection / QP). */
@FunctionalInterface
public interface QueueAcceptor {
    /** Called on the queue's own thread before any command arrives on it. */
    QueueHandler accept(QueueChannel channel);
}

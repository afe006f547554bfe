package io.nvmeof.core.spi;

/**
 * Called by a transport exactly once for each segment handed to {@link TargetRequest#addData}, when it no longer needs
 * the memory (sent, or dropped because the queue closed). May be called on any thread.
 */
@FunctionalInterface
public interface DataRelease {
    /** A release that does nothing, for memory that lives forever (e.g. a shared zero page). */
    DataRelease NONE = () -> {};

    void release();
}

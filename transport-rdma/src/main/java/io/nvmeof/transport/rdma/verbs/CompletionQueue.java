package io.nvmeof.transport.rdma.verbs;

import java.time.Duration;

/**
 * A completion queue, polled by the thread that owns its connection(s). A connection's own CQ belongs to the
 * connection; a CQ from {@link ProtectionDomain#createCompletionQueue} can be shared by many QPs (each completion
 * names its QP in {@link WorkCompletion#qpNumber}) and is destroyed by {@link #close()} after the last of them.
 */
public interface CompletionQueue extends AutoCloseable {
    /**
     * Moves up to {@code out.length} completions into the caller's preallocated {@code out} array (the entries are
     * overwritten, not replaced) and returns how many. Never blocks; allocation-free.
     */
    int poll(WorkCompletion[] out);

    /**
     * Sleeps until a completion may be available or {@code timeout} passes (ibv_req_notify_cq + ibv_get_cq_event).
     * Returns true if woken by a completion event. Callers poll again afterwards; spurious wake-ups are allowed.
     */
    boolean await(Duration timeout) throws InterruptedException;

    /** Completions it holds at once, at least (ibv_create_cq's cqe): what its QPs may have outstanding together. */
    int capacity();

    /** Destroys a CQ made by {@link ProtectionDomain#createCompletionQueue}; a connection's own CQ goes with it. */
    @Override
    default void close() {}
}

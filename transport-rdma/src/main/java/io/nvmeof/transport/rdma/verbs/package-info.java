/**
 * The small verbs interface NVMe/RDMA needs (nvmeof-protocol.md §6), with two providers: DiSNI over a real RNIC or
 * Soft-RoCE, and a software RNIC in Java that works between processes on one host through shared memory.
 *
 * <p>It mirrors libibverbs/librdmacm closely enough that the DiSNI provider is a thin mapping, and no further:
 * a {@link io.nvmeof.transport.rdma.verbs.RdmaProvider} opens connections through connection management with private
 * data on connect, accept and reject; each {@link io.nvmeof.transport.rdma.verbs.RdmaConnection} has one reliable
 * connected {@link io.nvmeof.transport.rdma.verbs.QueuePair} whose work completions land in one
 * {@link io.nvmeof.transport.rdma.verbs.CompletionQueue}, polled by the thread that owns the queue; memory is
 * registered in a {@link io.nvmeof.transport.rdma.verbs.ProtectionDomain} as
 * {@link io.nvmeof.transport.rdma.verbs.MemoryRegion}s with an lkey, an rkey and access flags.
 *
 * <p>Errors behave as on hardware: a bad rkey, an access outside a region, a missing access flag, a QP in the wrong
 * state or a receive queue with nothing posted (RNR) surface as {@link io.nvmeof.transport.rdma.verbs.WorkCompletion}
 * statuses, not exceptions; a QP that had an error moves to the error state and flushes its outstanding work.
 * Exceptions are for misuse of the API and for connection management failures.
 */
package io.nvmeof.transport.rdma.verbs;

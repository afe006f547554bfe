package io.nvmeof.transport.rdma.verbs;

import java.io.IOException;
import java.nio.ByteBuffer;

/** A protection domain: memory registered here may be used by the QPs created in it. */
public interface ProtectionDomain {
    int ACCESS_LOCAL_WRITE = 1;
    int ACCESS_REMOTE_WRITE = 2;
    int ACCESS_REMOTE_READ = 4;

    /**
     * Registers {@code buffer} (a direct buffer; the whole capacity) with the given access flags (ibv_reg_mr). Cold path:
     * registration is slow on real hardware; register once and reuse.
     *
     * @throws IllegalArgumentException for a heap buffer
     * @throws IOException              if the device refuses (e.g. out of resources)
     */
    MemoryRegion register(ByteBuffer buffer, int access) throws IOException;

    /**
     * A direct buffer of {@code size} bytes that this provider can register (the software RNIC needs memory it can
     * share with peers: a memory-mapped file; DiSNI takes any direct buffer).
     */
    ByteBuffer allocate(int size) throws IOException;

    /**
     * A completion queue of {@code entries} entries that QPs of this PD can share (ibv_create_cq with its own
     * completion channel; pass it to {@link ConnectionRequest#accept(QueuePairAttributes, CompletionQueue,
     * SharedReceiveQueue, java.util.function.Consumer, ByteBuffer)}). Cold path.
     */
    CompletionQueue createCompletionQueue(int entries) throws IOException;

    /**
     * A shared receive queue holding up to {@code maxWr} posted buffers of this PD (ibv_create_srq). Cold path.
     *
     * @throws UnsupportedOperationException if the provider has no SRQ (the caller posts receives per QP instead)
     */
    SharedReceiveQueue createSharedReceiveQueue(int maxWr) throws IOException;
}

package io.nvmeof.transport.rdma.verbs;

import java.nio.ByteBuffer;

/**
 * A registered memory region (ibv_mr). {@link #address()} is what a peer puts in a keyed SGL descriptor with
 * {@link #rkey()} (nvmeof-protocol.md §1.3); local work requests name memory by (region, offset, length).
 */
public interface MemoryRegion extends AutoCloseable {
    /** The remote address of byte 0 of the region (a virtual address on real hardware). */
    long address();

    int length();

    int lkey();

    int rkey();

    /** ProtectionDomain.ACCESS_* flags. */
    int access();

    /** The registered memory (a view starting at byte 0; absolute indexing). */
    ByteBuffer buffer();

    /** ibv_dereg_mr: later accesses with its keys fail with protection errors. */
    @Override
    void close();
}

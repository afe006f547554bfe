package io.nvmeof.core.spi;

import java.nio.ByteBuffer;

/**
 * Told about the target core's long-lived data memory (namespace RAM chunks) so a transport can prepare it for direct
 * data movement: the RDMA transport registers each chunk as a memory region, so read data is RDMA-Written straight from
 * namespace memory and write data RDMA-Read straight into it (zero copy).
 *
 * <p>A {@link TargetListener} that wants this returns an observer from {@link TargetListener#memoryObserver()}; the
 * target attaches it to its memory source, which calls {@link #attached} once, then {@link #allocated} for every piece
 * of memory that exists or is allocated later, and {@link #freeing} exactly once per successful {@code allocated} (when
 * the memory is about to be freed, or when the observer is detached). Memory that went through {@code allocated} reaches
 * the transport with a {@link DataRelease} that implements {@link RegisteredMemory}; its
 * {@link RegisteredMemory#registration(int) registration(slot)} is the handle this observer returned.
 *
 * <p>Calls come on any thread (the queue thread that first wrote a chunk, the thread that freed it), serialized per
 * memory source, never on the I/O path of a chunk already allocated. None of them may block for long.
 */
public interface MemoryObserver {
    /** The slot this observer's handles are stored under: pass it to {@link RegisteredMemory#registration(int)}. */
    default void attached(int slot) {}

    /**
     * {@code memory} (a direct buffer; its whole capacity, byte 0 = index 0 of every buffer the core later hands out
     * for it) was allocated and no transport has seen it yet.
     *
     * @return a handle stored with the memory and returned by {@link RegisteredMemory#registration}, or null if the
     * observer cannot use this memory (the transport then copies)
     */
    Object allocated(ByteBuffer memory);

    /**
     * {@code memory} is about to be freed (no transport holds it any more), or the observer is being detached. Called
     * once for each non-null handle, before the memory goes away.
     */
    void freeing(ByteBuffer memory, Object handle);
}

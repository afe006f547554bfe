package io.nvmeof.core.spi;

/**
 * Implemented by the {@link DataRelease} of memory that {@link MemoryObserver}s were told about (a namespace chunk), so
 * a transport finds its preparation of that memory (e.g. an RDMA memory region) without a lookup table or allocation:
 * {@code if (release instanceof RegisteredMemory m) handle = m.registration(slot)}.
 *
 * <p>The handle describes the memory whose byte 0 is absolute index 0 of the {@code ByteBuffer} passed with the
 * release, so {@code offset} in {@link TargetRequest#addData} / {@link TargetRequest#addDestination} is also the offset
 * into the registered memory.
 */
public interface RegisteredMemory {
    /** The handle the observer in {@code slot} returned from {@link MemoryObserver#allocated}, or null. */
    Object registration(int slot);
}

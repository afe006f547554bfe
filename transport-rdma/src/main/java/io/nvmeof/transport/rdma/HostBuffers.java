package io.nvmeof.transport.rdma;

import io.nvmeof.core.util.DirectBuffers;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * The host buffers registered by {@link RdmaHostQueue#allocateBuffer}, process-wide: a buffer registered through one
 * queue is named directly (keyed SGL, no copy) by every queue in the same protection domain, so an initiator can
 * allocate through its admin queue and use the buffer on any I/O queue. A command's buffer matches an entry when it
 * is the very buffer, or (for slices and duplicates) when its native address range lies inside the entry's.
 *
 * <p>The lookup is a scan of a copy-on-write array: no lock, no allocation. Entries are removed, and their regions
 * deregistered, when the allocating queue frees them or closes.
 */
final class HostBuffers {
    /** One registered buffer: its native base address (0 if unknown: then only the same object matches). */
    record Entry(ByteBuffer buffer, long base, int length, MemoryRegion region, ProtectionDomain pd, Object owner) {}

    private static volatile Entry[] entries = new Entry[0];

    /** Host bytes copied through the registered pool (callers' own buffers), all host queues of this process. */
    static final LongAdder COPIED = new LongAdder();
    /** Host bytes moved straight between registered buffers and the controller. */
    static final LongAdder ZERO_COPY = new LongAdder();
    /** Host bytes put into a capsule (host→controller data up to the in-capsule size on I/O queues). */
    static final LongAdder IN_CAPSULE = new LongAdder();

    private HostBuffers() {}

    static synchronized void add(Entry e) {
        Entry[] old = entries;
        Entry[] next = Arrays.copyOf(old, old.length + 1);
        next[old.length] = e;
        entries = next;
    }

    /** Removes and deregisters {@code buffer} if {@code owner} registered it; false if it did not. */
    static boolean remove(ByteBuffer buffer, Object owner) {
        Entry gone = null;
        synchronized (HostBuffers.class) {
            Entry[] old = entries;
            for (int i = 0; i < old.length; i++) {
                if (old[i].buffer == buffer && old[i].owner == owner) {
                    gone = old[i];
                    Entry[] next = new Entry[old.length - 1];
                    System.arraycopy(old, 0, next, 0, i);
                    System.arraycopy(old, i + 1, next, i, old.length - i - 1);
                    entries = next;
                    break;
                }
            }
        }
        if (gone == null) {
            return false;
        }
        gone.region.close();
        return true;
    }

    /** Removes and deregisters every buffer {@code owner} registered. */
    static void removeAll(Object owner) {
        Entry[] removed;
        synchronized (HostBuffers.class) {
            Entry[] old = entries;
            removed = Arrays.stream(old).filter(e -> e.owner == owner).toArray(Entry[]::new);
            if (removed.length == 0) {
                return;
            }
            entries = Arrays.stream(old).filter(e -> e.owner != owner).toArray(Entry[]::new);
        }
        for (Entry e : removed) {
            e.region.close();
        }
    }

    /**
     * The remote address of byte {@code offset} of {@code b} if {@code [offset, offset+length)} of it lies in a buffer
     * registered in {@code pd}, with the region in {@code regionOut[0]}; else -1. Allocation-free.
     */
    static long find(ByteBuffer b, int offset, int length, ProtectionDomain pd, MemoryRegion[] regionOut) {
        Entry[] es = entries;
        if (es.length == 0) {
            return -1;
        }
        for (Entry e : es) {
            if (e.buffer == b && e.pd == pd) {
                regionOut[0] = e.region;
                return e.region.address() + offset;
            }
        }
        if (!b.isDirect()) {
            return -1;
        }
        long a = address(b);
        if (a == 0) {
            return -1;
        }
        long start = a + offset;
        for (Entry e : es) {
            if (e.pd == pd && e.base != 0 && start >= e.base && start + length <= e.base + e.length) {
                regionOut[0] = e.region;
                return e.region.address() + (start - e.base);
            }
        }
        return -1;
    }

    static int count() {
        return entries.length;
    }

    static long address(ByteBuffer b) {
        return DirectBuffers.address(b);
    }
}

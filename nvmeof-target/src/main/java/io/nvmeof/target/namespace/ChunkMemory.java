package io.nvmeof.target.namespace;

import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.MemoryObserver;
import io.nvmeof.core.spi.RegisteredMemory;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * The target's namespace memory as {@link MemoryObserver}s see it: one per target, shared by all its namespaces. It
 * tells every attached observer about each chunk allocated ({@code allocated}, before any transport can see the chunk)
 * and freed ({@code freeing}, after the last reference went and before the memory is freed), and stores each
 * observer's handle in the chunk under the observer's slot, so a transport finds its memory region for a chunk with an
 * array read ({@link RegisteredMemory}).
 *
 * <p>It also owns one zero buffer for reads of unwritten blocks, registered like a chunk, so a transport can send those
 * zeroes without a copy too.
 *
 * <p>Everything here is a cold path (chunk allocation and freeing, attach and detach), serialized by this object's
 * monitor, so handles are never stored into a chunk that is being freed and every handle gets exactly one
 * {@code freeing}. The I/O path only reads the handle array.
 */
public final class ChunkMemory {
    private static final Logger LOG = System.getLogger("io.nvmeof.target.memory");
    /** At most this many observers at once (listeners of one target that want the memory). */
    public static final int MAX_OBSERVERS = 8;

    private final MemoryObserver[] observers = new MemoryObserver[MAX_OBSERVERS];
    private final Set<Registered> live = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Registered zeroes;
    private final ByteBuffer zeroView;

    public ChunkMemory() {
        ByteBuffer z = ByteBuffer.allocateDirect(RamNamespace.CHUNK_SIZE);
        this.zeroes = new ZeroMemory(z);
        this.zeroView = z.asReadOnlyBuffer();
        live.add(zeroes);
    }

    /** Memory the observers are told about: a chunk or the zero buffer. */
    abstract static class Registered implements DataRelease, RegisteredMemory {
        final ByteBuffer buffer;
        /** Handles by observer slot; written under the ChunkMemory monitor, read by queue threads. */
        final Object[] handles = new Object[MAX_OBSERVERS];

        Registered(ByteBuffer buffer) {
            this.buffer = buffer;
        }

        @Override
        public final Object registration(int slot) {
            return slot >= 0 && slot < MAX_OBSERVERS ? handles[slot] : null;
        }
    }

    private static final class ZeroMemory extends Registered {
        ZeroMemory(ByteBuffer buffer) {
            super(buffer);
        }

        @Override
        public void release() {
            // lives as long as the target
        }
    }

    /** A read-only view of {@link RamNamespace#CHUNK_SIZE} zero bytes. */
    ByteBuffer zeroBuffer() {
        return zeroView;
    }

    /** The release (and registration) to pass with {@link #zeroBuffer()}. */
    DataRelease zeroRelease() {
        return zeroes;
    }

    /**
     * Attaches {@code observer}: it gets a slot ({@link MemoryObserver#attached}) and {@code allocated} for every live
     * chunk and the zero buffer. Returns the slot.
     *
     * @throws IllegalStateException if {@link #MAX_OBSERVERS} are attached already
     */
    public synchronized int attach(MemoryObserver observer) {
        int slot = -1;
        for (int i = 0; i < MAX_OBSERVERS; i++) {
            if (observers[i] == observer) {
                return i;
            }
            if (observers[i] == null && slot < 0) {
                slot = i;
            }
        }
        if (slot < 0) {
            throw new IllegalStateException("more than " + MAX_OBSERVERS + " memory observers");
        }
        observers[slot] = observer;
        observer.attached(slot);
        for (Registered r : live) {
            register(observer, slot, r);
        }
        return slot;
    }

    /** Detaches {@code observer}: {@code freeing} for every handle it still has; no further calls. */
    public synchronized void detach(MemoryObserver observer) {
        for (int slot = 0; slot < MAX_OBSERVERS; slot++) {
            if (observers[slot] == observer) {
                for (Registered r : live) {
                    unregister(observer, slot, r);
                }
                observers[slot] = null;
            }
        }
    }

    /** Observers attached now (for tests and diagnostics). */
    public synchronized int observerCount() {
        int n = 0;
        for (MemoryObserver o : observers) {
            n += o != null ? 1 : 0;
        }
        return n;
    }

    /** Chunks (and the zero buffer) the observers know about now. */
    public synchronized int liveCount() {
        return live.size();
    }

    /** A chunk was allocated and is not yet visible to any other thread. */
    synchronized void allocated(Registered r) {
        live.add(r);
        for (int slot = 0; slot < MAX_OBSERVERS; slot++) {
            if (observers[slot] != null) {
                register(observers[slot], slot, r);
            }
        }
    }

    /** A chunk's last reference went; its memory is freed after this returns. */
    synchronized void freeing(Registered r) {
        if (!live.remove(r)) {
            return;
        }
        for (int slot = 0; slot < MAX_OBSERVERS; slot++) {
            if (observers[slot] != null) {
                unregister(observers[slot], slot, r);
            }
        }
    }

    private static void register(MemoryObserver o, int slot, Registered r) {
        try {
            r.handles[slot] = o.allocated(r.buffer);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "memory observer " + o + " failed on a chunk; the transport will copy", e);
            r.handles[slot] = null;
        }
    }

    private static void unregister(MemoryObserver o, int slot, Registered r) {
        Object h = r.handles[slot];
        r.handles[slot] = null;
        if (h != null) {
            try {
                o.freeing(r.buffer, h);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "memory observer " + o + " failed to let go of a chunk", e);
            }
        }
    }
}

package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.MemoryObserver;
import io.nvmeof.core.spi.RegisteredMemory;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * The target listener's {@link MemoryObserver}: registers the target core's namespace memory in the connections'
 * protection domain, so read data is RDMA-Written straight from namespace chunks and write data RDMA-Read straight
 * into them (zero copy). The registration is local only (LOCAL_WRITE: the target reads and writes that memory with its
 * own work requests; the host never names it).
 *
 * <p>The verbs interface gives a protection domain only with a connection, so memory announced before the first
 * connection is registered when that connection arrives ({@link #usePd}); the providers share one PD per process (the
 * software RNIC) or per device (DiSNI), and a connection in another PD finds no region and copies through a bounce
 * buffer. Lookups on the I/O path ({@link #region}) read two volatile fields and allocate nothing.
 */
final class TargetMemoryRegistrations implements MemoryObserver {
    private static final Logger LOG = System.getLogger(TargetMemoryRegistrations.class.getName());

    /** The handle stored with each piece of core memory. */
    static final class Handle {
        final ByteBuffer memory;
        volatile ProtectionDomain pd;
        volatile MemoryRegion region;

        Handle(ByteBuffer memory) {
            this.memory = memory;
        }
    }

    private volatile int slot = -1;
    private ProtectionDomain pd;
    private final Set<Handle> live = Collections.newSetFromMap(new IdentityHashMap<>());
    private boolean closed;
    private long registrations;

    @Override
    public void attached(int slot) {
        this.slot = slot;
    }

    @Override
    public synchronized Object allocated(ByteBuffer memory) {
        if (closed) {
            return null;
        }
        Handle h = new Handle(memory);
        live.add(h);
        if (pd != null) {
            register(h, pd);
        }
        return h;
    }

    @Override
    public synchronized void freeing(ByteBuffer memory, Object handle) {
        Handle h = (Handle) handle;
        live.remove(h);
        deregister(h);
    }

    /** The first connection's PD: register everything announced so far in it. Later PDs are ignored (copy). */
    synchronized void usePd(ProtectionDomain connectionPd) {
        if (pd != null || closed) {
            return;
        }
        pd = connectionPd;
        for (Handle h : live) {
            register(h, pd);
        }
    }

    /** The registration of {@code release}'s memory in {@code connectionPd}, or null (then the transport copies). */
    MemoryRegion region(Object release, ProtectionDomain connectionPd) {
        int s = slot;
        if (s < 0 || !(release instanceof RegisteredMemory)) {
            return null;
        }
        Object o = ((RegisteredMemory) release).registration(s);
        if (!(o instanceof Handle)) {
            return null;
        }
        Handle h = (Handle) o;
        return h.pd == connectionPd ? h.region : null;
    }

    /** Deregisters everything (listener closed); later announcements are refused. */
    synchronized void close() {
        closed = true;
        for (Handle h : live) {
            deregister(h);
        }
        live.clear();
    }

    synchronized long registrations() {
        return registrations;
    }

    synchronized int liveRegions() {
        int n = 0;
        for (Handle h : live) {
            n += h.region != null ? 1 : 0;
        }
        return n;
    }

    private void register(Handle h, ProtectionDomain pd) {
        try {
            h.region = pd.register(h.memory, ProtectionDomain.ACCESS_LOCAL_WRITE);
            h.pd = pd;
            registrations++;
        } catch (Exception e) {
            LOG.log(
                    Level.WARNING,
                    "cannot register " + h.memory.capacity() + " bytes of namespace memory; data for it is"
                            + " copied: " + e);
        }
    }

    private static void deregister(Handle h) {
        MemoryRegion mr = h.region;
        h.region = null;
        h.pd = null;
        if (mr != null) {
            try {
                mr.close();
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "deregistering namespace memory failed: " + e);
            }
        }
    }
}

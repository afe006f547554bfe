package io.nvmeof.initiator;

import io.nvmeof.core.host.CommandIdAllocator;
import io.nvmeof.core.spi.HostQueue;
import java.util.concurrent.TimeUnit;

/**
 * The host side of one queue (admin or I/O) on top of a transport {@link HostQueue}: a fixed array of reusable
 * {@link CommandSlot}s, one per command ID (CID = slot index, nvmeof-protocol.md §1.1), like the CID-indexed arrays of
 * the Linux host and SPDK (docs/ARCHITECTURE.md).
 *
 * <p>Which slots are free is the core's {@link CommandIdAllocator} (a lock-free free list, one compare-and-set to take
 * a CID and one to give it back; an empty list is the back-pressure): {@link #tryAcquire()} never waits,
 * {@link #acquire} waits at most the command timeout. Neither allocates unless a caller has to wait.
 *
 * <p>A slot whose command timed out stays taken until the controller answers it or the queue closes, so its CID is
 * never reused while the controller may still answer it.
 *
 * <p><b>Reconnects.</b> The queue outlives its connections: {@link #transport} is the latest connection and
 * {@link #live} the one commands go out on, null while the controller reconnects (the gate). Slots keep their
 * commands across a reconnect (parked, see {@link CommandSlot}); {@link #goLive} sends them on the new connection.
 * The I/O queue's own Connect goes in {@link #connectSlot} (CID 0 on a new connection, where nothing else is in
 * flight yet), so it needs no free slot.
 */
final class CommandQueue {
    final Controller controller;
    /** The latest connection (open or not). */
    volatile HostQueue transport;
    /** The connection commands may go out on; null while gated (reconnecting). */
    volatile HostQueue live;

    final int qid;
    final CommandSlot[] slots;
    /** The recovery's Connect of this I/O queue on a new connection. */
    final CommandSlot connectSlot;

    private final CommandIdAllocator cids;

    /** Set once when the queue is closed or failed: the reason later submissions fail. */
    volatile NvmeException closedCause;

    CommandQueue(Controller controller, HostQueue transport, int qid, int size) {
        this.controller = controller;
        this.transport = transport;
        this.live = transport;
        this.qid = qid;
        this.slots = new CommandSlot[size];
        for (int i = 0; i < size; i++) {
            slots[i] = new CommandSlot(this, i);
        }
        this.connectSlot = new CommandSlot(this, 0, false);
        this.cids = new CommandIdAllocator(size);
    }

    int size() {
        return slots.length;
    }

    /** A free slot, or null if every slot is in use. Never waits. */
    CommandSlot tryAcquire() {
        int cid = cids.tryAcquire();
        return cid == CommandIdAllocator.NONE ? null : slots[cid];
    }

    /**
     * A free slot, waiting up to {@code timeoutNanos} for one.
     *
     * @throws NvmeTimeoutException   if none became free in time
     * @throws NvmeTransportException if the queue is closed
     * @throws NvmeException          if the caller is this queue's own thread, which cannot wait for itself
     */
    CommandSlot acquire(long timeoutNanos) throws NvmeException {
        NvmeException closed = closedCause;
        if (closed != null) {
            throw closed;
        }
        int cid = cids.tryAcquire();
        if (cid != CommandIdAllocator.NONE) {
            return slots[cid];
        }
        if (transport.inQueueThread()) {
            // Slots are freed on this very thread: waiting here would wait for ever.
            throw new NvmeException("every command slot of queue " + qid + " is in use and the caller is that queue's "
                    + "own thread, which cannot wait: use the try* forms inside callbacks");
        }
        try {
            cid = cids.acquire(timeoutNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NvmeException("interrupted while waiting for a free command slot on queue " + qid);
        }
        if (cid == CommandIdAllocator.NONE) {
            closed = closedCause;
            if (closed != null) {
                throw closed;
            }
            throw new NvmeTimeoutException("no free command slot on queue " + qid + " within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (all " + slots.length + " in flight)");
        }
        return slots[cid];
    }

    /** Gives a slot back. */
    void release(CommandSlot slot) {
        cids.release(slot.index);
    }

    /** Slots currently free (a snapshot, for tests and diagnostics). */
    int freeSlots() {
        return cids.available();
    }

    /** Fails commands whose deadline has passed; called from the controller's timer thread. */
    void checkTimeouts(long nowNanos) {
        for (CommandSlot s : slots) {
            s.checkTimeout(nowNanos);
        }
        connectSlot.checkTimeout(nowNanos);
    }

    // ---- reconnects ----

    /** Closes the gate: commands submitted from now on park (or fail), until {@link #goLive}. */
    void gate() {
        live = null;
    }

    /** Closes the current connection (its commands get their transport error); the queue and its slots stay. */
    void disconnect() {
        gate();
        transport.close();
    }

    /** Makes {@code connection} the queue's connection (gated until {@link #goLive}). */
    void attach(HostQueue connection) {
        transport = connection;
    }

    /** Opens the gate on the attached connection and sends every parked command on it, in CID order. */
    void goLive() {
        live = transport;
        for (CommandSlot s : slots) {
            s.resumeParked();
        }
    }

    /** Fails every parked command (of namespace {@code nsid}, or all with 0); returns how many. */
    int failParked(int nsid, NvmeException cause) {
        int n = 0;
        for (CommandSlot s : slots) {
            if ((nsid == 0 || s.parkedNsid() == nsid) && s.failParked(cause)) {
                n++;
            }
        }
        return n;
    }

    /**
     * Marks the queue closed (later submissions fail with {@code cause}, callers waiting for a slot are woken) and
     * closes the transport queue.
     */
    void close(NvmeException cause) {
        if (closedCause == null) {
            closedCause = cause;
        }
        cids.close();
        live = null;
        transport.close();
        failParked(0, cause);
    }

    String name() {
        return qid == 0 ? "admin queue" : "I/O queue " + qid;
    }
}

package io.nvmeof.initiator;

import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.Transport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The queues of one {@link Controller}: the admin queue and the I/O queues, each a {@link CommandQueue} over a
 * transport {@link HostQueue}. Opens them, picks the I/O queue of the calling thread, scans their deadlines for the
 * timer and closes them. A queue that closes on its own fails the controller.
 *
 * <p>The queues are written only by the connecting thread during bring-up; every other thread reads them through
 * volatile fields, so {@link Controller#close()} sees every queue opened so far even when bring-up failed halfway.
 */
final class ControllerQueues {
    private final Controller controller;
    private volatile CommandQueue admin;
    private volatile CommandQueue[] io = new CommandQueue[0];

    ControllerQueues(Controller controller) {
        this.controller = controller;
    }

    /**
     * Connects queue {@code options.qid()} at transport level and makes it the admin queue (QID 0) or the next I/O
     * queue. The fabrics Connect is the caller's.
     */
    CommandQueue open(Transport transport, HostQueueOptions options) throws NvmeException {
        int qid = options.qid();
        HostQueue hq;
        try {
            hq = transport.connect(options);
        } catch (IOException e) {
            throw new NvmeTransportException(
                    "cannot connect " + (qid == 0 ? "the admin queue" : "I/O queue " + qid) + " to "
                            + controller.uri().transport() + "://" + controller.hostPort() + ": " + e.getMessage(),
                    e);
        } catch (UnsupportedOperationException e) {
            throw new NvmeTransportException(
                    "the " + transport.name() + " transport cannot connect to controllers yet: " + e.getMessage(), e);
        }
        CommandQueue q = new CommandQueue(controller, hq, qid, options.queueSize());
        hq.onClose(cause -> controller.recovery().queueClosed(q, hq, cause));
        if (qid == 0) {
            admin = q;
        } else {
            CommandQueue[] more = Arrays.copyOf(io, io.length + 1);
            more[io.length] = q;
            io = more; // visible to close() if a later queue fails
        }
        return q;
    }

    /**
     * A reconnect: connects I/O queue {@code q} again at transport level and attaches the new connection to it, still
     * gated (its commands stay parked until {@link #goLiveAll}). The fabrics Connect is the caller's, in
     * {@link CommandQueue#connectSlot}.
     */
    void reopen(CommandQueue q, Transport transport, HostQueueOptions options) throws NvmeException {
        HostQueue hq = connect(transport, options);
        hq.onClose(cause -> controller.recovery().queueClosed(q, hq, cause));
        q.attach(hq);
    }

    private HostQueue connect(Transport transport, HostQueueOptions options) throws NvmeException {
        int qid = options.qid();
        try {
            return transport.connect(options);
        } catch (IOException e) {
            throw new NvmeTransportException(
                    "cannot connect " + (qid == 0 ? "the admin queue" : "I/O queue " + qid) + " to "
                            + controller.uri().transport() + "://" + controller.hostPort() + ": " + e.getMessage(),
                    e);
        } catch (UnsupportedOperationException e) {
            throw new NvmeTransportException(
                    "the " + transport.name() + " transport cannot connect to controllers yet: " + e.getMessage(), e);
        }
    }

    /**
     * A new admin queue for a reconnect, gated: only the reconnect thread's commands go out on it until
     * {@link #goLiveAll}. The old one (already disconnected) is dropped.
     */
    CommandQueue reopenAdmin(Transport transport, HostQueueOptions options) throws NvmeException {
        HostQueue hq = connect(transport, options);
        CommandQueue q = new CommandQueue(controller, hq, 0, options.queueSize());
        q.gate();
        hq.onClose(cause -> controller.recovery().queueClosed(q, hq, cause));
        CommandQueue old = admin;
        admin = q;
        if (old != null) {
            old.close(new NvmeTransportException("the admin queue was replaced by a reconnect"));
        }
        return q;
    }

    // ---- reconnects (ControllerRecovery) ----

    /** Every queue gated: new commands park (I/O) or fail (admin). */
    void gateAll() {
        CommandQueue a = admin;
        if (a != null) {
            a.gate();
        }
        for (CommandQueue q : io) {
            q.gate();
        }
    }

    /** Closes every connection; the queues and their parked commands stay. */
    void disconnectAll() {
        for (CommandQueue q : io) {
            q.disconnect();
        }
        CommandQueue a = admin;
        if (a != null) {
            a.disconnect();
        }
    }

    /** Opens every gate on the new connections; the parked commands go out. */
    void goLiveAll() {
        CommandQueue a = admin;
        if (a != null) {
            a.goLive();
        }
        for (CommandQueue q : io) {
            q.goLive();
        }
    }

    /** Fails the parked commands of namespace {@code nsid} (0: all); returns how many. */
    int failParked(int nsid, NvmeException cause) {
        int n = 0;
        for (CommandQueue q : io) {
            n += q.failParked(nsid, cause);
        }
        return n;
    }

    /** An I/O buffer from the transport ({@link Controller#allocateBuffer}): registered memory over NVMe/RDMA. */
    ByteBuffer allocateBuffer(int size) throws NvmeException {
        CommandQueue a = admin;
        if (controller.teardown().isClosed() || a == null) {
            throw new NvmeTransportException("the controller is closed");
        }
        try {
            return a.transport.allocateBuffer(size);
        } catch (IOException e) {
            throw new NvmeTransportException("cannot allocate a " + size + "-byte I/O buffer: " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new NvmeTransportException("cannot allocate an I/O buffer: " + e.getMessage(), e);
        }
    }

    /** The admin queue, or null before it is open. */
    CommandQueue admin() {
        return admin;
    }

    /** The I/O queues opened so far, by QID. */
    CommandQueue[] io() {
        return io;
    }

    /** The I/O queue for the calling thread: by thread ID, so one thread always uses one queue. */
    CommandQueue forCurrentThread() {
        CommandQueue[] qs = io;
        if (qs.length == 0) {
            throw new IllegalStateException("a discovery controller has no I/O queues");
        }
        return qs[(int) (Thread.currentThread().getId() % qs.length)];
    }

    /** I/O queue {@code index}, modulo the number of queues (like {@link #forCurrentThread()}, never out of range). */
    CommandQueue at(int index) {
        CommandQueue[] qs = io;
        if (qs.length == 0) {
            throw new IllegalStateException("a discovery controller has no I/O queues");
        }
        return qs[index % qs.length];
    }

    /** Fails the commands whose deadline has passed (the timer thread). */
    void checkTimeouts() {
        long now = System.nanoTime();
        CommandQueue a = admin;
        if (a != null) {
            a.checkTimeouts(now);
        }
        for (CommandQueue q : io) {
            q.checkTimeouts(now);
        }
    }

    /** Closes the I/O queues; their outstanding commands fail with {@code cause}. */
    void closeIo(NvmeException cause) {
        for (CommandQueue q : io) {
            q.close(cause);
        }
    }

    /** Closes the admin queue, if it was opened. */
    void closeAdmin(NvmeException cause) {
        CommandQueue a = admin;
        if (a != null) {
            a.close(cause);
        }
    }

    /** Closes the I/O queues, then the admin queue. */
    void closeAll(NvmeException cause) {
        closeIo(cause);
        closeAdmin(cause);
    }
}

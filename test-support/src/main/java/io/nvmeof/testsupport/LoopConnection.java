package io.nvmeof.testsupport;

import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.wire.CompletionQueueEntry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One loop queue: the host end (this {@link HostQueue}) and the target end ({@link #targetEnd}), each on a thread of
 * its own. Made and owned by its {@link LoopListener} until it closes; owns its two threads and the commands in flight.
 */
final class LoopConnection implements HostQueue {
    private static final AtomicInteger IDS = new AtomicInteger();

    final LoopListener listener;
    final HostQueueOptions options;
    final int id = IDS.incrementAndGet();
    final ExecutorService hostThread;
    final ExecutorService targetThread;
    volatile Thread hostThreadRef;
    volatile Thread targetThreadRef;
    final HostCommand[] inflight;
    final AtomicBoolean open = new AtomicBoolean(true);
    /** Set on the host thread by the close task; later host tasks fail their commands. */
    boolean hostClosed;
    /** Set on the target thread by the close task. */
    boolean targetClosed;

    volatile Consumer<Throwable> closeListener;
    volatile int maxInCapsule;
    volatile int connectedQid = -1;
    QueueHandler handler;
    final List<LoopRequest> held = new ArrayList<>();

    LoopConnection(LoopListener listener, HostQueueOptions options) {
        this.listener = listener;
        this.options = options;
        this.inflight = new HostCommand[options.queueSize()];
        this.hostThread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "loop-host-" + id + "-q" + options.qid());
            t.setDaemon(true);
            hostThreadRef = t;
            return t;
        });
        this.targetThread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "loop-target-" + id + "-q" + options.qid());
            t.setDaemon(true);
            targetThreadRef = t;
            return t;
        });
    }

    void start() throws IOException {
        try {
            handler = targetThread
                    .submit(() -> listener.acceptor.accept(targetEnd))
                    .get();
        } catch (Exception e) {
            throw new IOException("the target refused the loop connection: " + e, e);
        }
    }

    // ---- host side ----

    @Override
    public int qid() {
        return options.qid();
    }

    @Override
    public void maxInCapsuleData(int bytes) {
        maxInCapsule = bytes;
    }

    @Override
    public void submit(HostCommand command) {
        if (!open.get()) {
            throw new IllegalStateException("loop queue " + options.qid() + " is closed");
        }
        try {
            hostThread.execute(() -> send(command));
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("loop queue " + options.qid() + " is closed");
        }
    }

    /** Host thread: registers the command and hands a copy of it (and its data) to the target thread. */
    private void send(HostCommand command) {
        if (hostClosed) {
            command.onTransportError(new IOException("loop queue closed"));
            return;
        }
        int cid = command.command().cid();
        if (cid >= inflight.length || inflight[cid] != null) {
            throw new IllegalStateException("CID " + cid + " is out of range or in flight");
        }
        inflight[cid] = command;
        LoopRequest r = new LoopRequest(this, command);
        if (listener.paused) {
            synchronized (held) {
                held.add(r);
            }
            return;
        }
        deliver(r);
    }

    void releaseHeld() {
        List<LoopRequest> copy;
        synchronized (held) {
            copy = new ArrayList<>(held);
            held.clear();
        }
        for (LoopRequest r : copy) {
            deliver(r);
        }
    }

    private void deliver(LoopRequest r) {
        try {
            targetThread.execute(() -> {
                if (!targetClosed) {
                    handler.onCommand(r);
                }
            });
        } catch (RejectedExecutionException e) {
            // closing: the host side fails the command
        }
    }

    /** Target thread → host thread: the response. */
    void respond(LoopRequest r) {
        ByteBuffer cqe = ByteBuffer.allocate(CompletionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        cqe.put(0, r.response().buffer(), r.response().offset(), CompletionQueueEntry.LENGTH);
        try {
            hostThread.execute(() -> {
                if (hostClosed) {
                    return;
                }
                CompletionQueueEntry e = new CompletionQueueEntry();
                e.wrap(cqe, 0);
                HostCommand c = inflight[e.cid()];
                if (c == null) {
                    return;
                }
                inflight[e.cid()] = null;
                c.onResponse(e);
            });
        } catch (RejectedExecutionException e) {
            // closed meanwhile
        }
    }

    @Override
    public void onClose(Consumer<Throwable> listener) {
        this.closeListener = listener;
    }

    @Override
    public void execute(Runnable task) {
        try {
            hostThread.execute(task);
        } catch (RejectedExecutionException e) {
            // dropped after close
        }
    }

    @Override
    public boolean inQueueThread() {
        return Thread.currentThread() == hostThreadRef;
    }

    @Override
    public boolean isOpen() {
        return open.get();
    }

    @Override
    public void close() {
        close(null);
    }

    void close(Throwable cause) {
        if (!open.compareAndSet(true, false)) {
            return;
        }
        listener.connections.remove(this);
        try {
            targetThread.execute(() -> {
                targetClosed = true;
                if (handler != null) {
                    handler.onClose(cause);
                }
            });
        } catch (RejectedExecutionException e) {
            // already down
        }
        targetThread.shutdown();
        hostThread.execute(() -> {
            hostClosed = true;
            Throwable error = cause != null ? cause : new IOException("loop queue " + options.qid() + " closed");
            for (int i = 0; i < inflight.length; i++) {
                HostCommand c = inflight[i];
                if (c != null) {
                    inflight[i] = null;
                    c.onTransportError(error);
                }
            }
            synchronized (held) {
                held.clear();
            }
            Consumer<Throwable> l = closeListener;
            if (l != null) {
                l.accept(cause);
            }
        });
        hostThread.shutdown();
    }

    /** The target end of the connection, as the target core sees it. */
    final QueueChannel targetEnd = new QueueChannel() {
        @Override
        public PortInfo portInfo() {
            return listener.portInfo;
        }

        @Override
        public SocketAddress remoteAddress() {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), 40000 + id % 20000);
        }

        @Override
        public SocketAddress localAddress() {
            return listener.address;
        }

        @Override
        public void connected(int qid, int sqsize, boolean sqFlowControlDisabled) {
            connectedQid = qid;
        }

        @Override
        public void execute(Runnable task) {
            try {
                targetThread.execute(() -> {
                    if (!targetClosed) {
                        task.run();
                    }
                });
            } catch (RejectedExecutionException e) {
                // dropped after close, as QueueChannel allows
            }
        }

        @Override
        public boolean inQueueThread() {
            return Thread.currentThread() == targetThreadRef;
        }

        @Override
        public void close() {
            LoopConnection.this.close(new IOException("the target closed loop queue " + options.qid()));
        }

        @Override
        public boolean isOpen() {
            return open.get();
        }
    };
}

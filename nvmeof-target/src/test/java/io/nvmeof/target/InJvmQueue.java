package io.nvmeof.target;

import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One queue of the in-JVM test transport: its own thread (like an event loop), the core's handler, and
 * {@link #call(FakeRequest)} to run a command and wait for its completion.
 */
public final class InJvmQueue implements QueueChannel {
    private static final AtomicInteger IDS = new AtomicInteger();
    public static final PortInfo TCP_PORT = new PortInfo(
            PortInfo.TRTYPE_TCP,
            PortInfo.ADRFAM_IPV4,
            "127.0.0.1",
            "4420",
            1,
            128,
            16384,
            0x00100001,
            0,
            PortInfo.TREQ_SQFLOW_DISABLE_SUPPORTED,
            new byte[0]);

    private final PortInfo port;
    private final ExecutorService executor;
    private volatile Thread thread;
    private final QueueHandler handler;
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final AtomicInteger nextCid = new AtomicInteger();
    public final CompletableFuture<Throwable> closed = new CompletableFuture<>();
    public volatile int connectedQid = -1;
    public volatile int connectedSqsize = -1;
    public volatile boolean connectedFlowControlDisabled;
    private final int localPort = 40000 + IDS.incrementAndGet();

    public InJvmQueue(QueueAcceptor acceptor, PortInfo port) {
        this.port = port;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "injvm-queue-" + localPort);
            t.setDaemon(true);
            thread = t;
            return t;
        });
        try {
            this.handler = executor.submit(() -> acceptor.accept(this)).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs {@code request} on the queue thread and waits for its completion. */
    public FakeRequest call(FakeRequest request) {
        submit(request);
        try {
            return request.done.get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("no completion for " + request + ": " + e, e);
        }
    }

    /** Submits without waiting (AERs). */
    public FakeRequest submit(FakeRequest request) {
        request.attach(this);
        if (request.sqe().cid() == 0) {
            request.sqe().cid(nextCid.incrementAndGet() & 0xFFFF);
        }
        executor.execute(() -> handler.onCommand(request));
        return request;
    }

    @Override
    public PortInfo portInfo() {
        return port;
    }

    @Override
    public SocketAddress remoteAddress() {
        return new InetSocketAddress("127.0.0.1", localPort);
    }

    @Override
    public SocketAddress localAddress() {
        return new InetSocketAddress(port.address(), Integer.parseInt(port.serviceId()));
    }

    @Override
    public void connected(int qid, int sqsize, boolean sqFlowControlDisabled) {
        if (!inQueueThread()) {
            throw new AssertionError("connected() off the queue thread");
        }
        connectedQid = qid;
        connectedSqsize = sqsize;
        connectedFlowControlDisabled = sqFlowControlDisabled;
    }

    @Override
    public void execute(Runnable task) {
        if (open.get()) {
            executor.execute(task);
        }
    }

    @Override
    public boolean inQueueThread() {
        return Thread.currentThread() == thread;
    }

    @Override
    public void close() {
        if (open.compareAndSet(true, false)) {
            executor.execute(() -> {
                handler.onClose(null);
                closed.complete(null);
            });
            executor.shutdown();
        }
    }

    @Override
    public boolean isOpen() {
        return open.get();
    }

    public boolean awaitClosed(long millis) {
        try {
            closed.get(millis, TimeUnit.MILLISECONDS);
            return true;
        } catch (Exception e) {
            return false;
        }
    }
}

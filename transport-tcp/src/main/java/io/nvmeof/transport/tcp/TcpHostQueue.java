package io.nvmeof.transport.tcp;

import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.nvmeof.core.host.HostDataCheck;
import io.nvmeof.core.host.SubmissionList;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The {@link HostQueue} of one NVMe/TCP connection: what the initiator calls, from any thread. The connection itself
 * is the {@link NvmeTcpHostHandler} on the channel's event loop.
 *
 * <p><b>Threads.</b> {@link #submit} checks the data description ({@link HostDataCheck}), claims the CID in the
 * queue's {@link SubmissionList} (a CID in flight is refused at once), then on the event loop writes the CapsuleCmd
 * at once; from another thread it pushes the command on the list and, when the list was empty, schedules the
 * handler's drain task, which writes everything queued and flushes once. Callbacks run on the event loop.
 *
 * <p>Atomic operations per command on the host path (see docs/initiator.md): the claim (1); from another thread also
 * the push (1) and a share of the drain's getAndSet and of Netty's {@code execute}. The initiator adds its own three.
 */
public final class TcpHostQueue implements HostQueue {
    private static final System.Logger LOG = System.getLogger(TcpHostQueue.class.getName());

    /** Any fabrics command may carry 8 KiB in-capsule on any queue (NVME_TCP_ADMIN_CCSZ, nvmeof-protocol.md §5.10). */
    public static final int FABRICS_IN_CAPSULE_LIMIT = NvmeTcpPduDecoder.ADMIN_IN_CAPSULE_DATA_SIZE;
    /**
     * The decoder's own bound on one C2HData; the real bound is the command's length, checked by
     * {@link C2hDataReceiver#check} as soon as the header is in, before any of the data is passed on.
     */
    static final int MAX_C2H_DATA = Integer.MAX_VALUE - 1024;

    private final String peer;
    private final int qid;
    private final SubmissionList commands;
    private final NvmeTcpHostHandler handler;
    private final AtomicBoolean listenerCalled = new AtomicBoolean();
    private volatile Consumer<Throwable> listener;
    private volatile boolean closeDone;
    private volatile Throwable closeCause;
    private volatile int maxInCapsuleData;
    /** Tests: route every submit through the list, as from a foreign thread (EmbeddedChannel runs anywhere). */
    volatile boolean alwaysQueue;

    private TcpHostQueue(HostQueueOptions options) {
        this.peer = describe(options.address());
        this.qid = options.qid();
        this.commands = new SubmissionList(qid, options.queueSize());
        this.handler = new NvmeTcpHostHandler(this, options, commands, peer);
    }

    /**
     * Adds the host-side NVMe/TCP handlers to a new connection's pipeline: the {@link ReadBoundary} at its head (before
     * TLS, if any), then the {@link PduBatch} every write passes, the decoder and the connection's handler.
     */
    public static TcpHostQueue install(ChannelPipeline pipeline, HostQueueOptions options) {
        TcpHostQueue queue = new TcpHostQueue(options);
        ReadBoundary.addFirst(pipeline);
        pipeline.addLast("nvme-tcp-batch", queue.handler.batch);
        pipeline.addLast("nvme-tcp-decoder", queue.handler.decoder);
        pipeline.addLast("nvme-tcp-host", queue.handler);
        return queue;
    }

    /** Completes when ICResp was accepted; fails with an IOException saying why not. */
    public CompletableFuture<Void> ready() {
        return handler.ready();
    }

    @Override
    public void submit(HostCommand command) {
        if (handler.closed()) {
            throw new IllegalStateException("queue " + qid + " to " + peer + " is closed");
        }
        if (!handler.live()) {
            throw new IllegalStateException("queue " + qid + " to " + peer + " is not connected yet (no ICResp)");
        }
        HostDataCheck.check(command, Integer.MAX_VALUE); // caller errors: refused before the CID is taken
        if (!commands.claim(command)) {
            return; // a close raced with the claim and has failed the command
        }
        EventLoop loop = handler.loop();
        if (!alwaysQueue && loop.inEventLoop()) {
            try {
                handler.sendNow(command);
            } catch (RuntimeException e) {
                commands.release(command.command().cid());
                throw e;
            }
        } else if (commands.offer(command.command().cid())) {
            loop.execute(handler.drainTask);
        }
    }

    /** From the handler, on the event loop, once every command has been failed. */
    void closed(Throwable cause) {
        closeCause = cause;
        closeDone = true;
        notifyListener(listener);
    }

    private void notifyListener(Consumer<Throwable> l) {
        if (l != null && closeDone && listenerCalled.compareAndSet(false, true)) {
            try {
                l.accept(closeCause);
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "onClose listener failed on queue " + qid, t);
            }
        }
    }

    @Override
    public int qid() {
        return qid;
    }

    @Override
    public void maxInCapsuleData(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("maxInCapsuleData must be ≥ 0: " + bytes);
        }
        this.maxInCapsuleData = bytes;
    }

    int maxInCapsuleData() {
        return maxInCapsuleData;
    }

    @Override
    public void onClose(Consumer<Throwable> listener) {
        this.listener = listener;
        if (closeDone && listener != null) {
            // Closed already: tell it now, on the queue's thread as always.
            execute(() -> notifyListener(listener));
        }
    }

    @Override
    public void execute(Runnable task) {
        handler.loop().execute(task);
    }

    @Override
    public boolean inQueueThread() {
        return handler.loop().inEventLoop();
    }

    @Override
    public boolean isOpen() {
        return !handler.closed();
    }

    /**
     * Closes the queue: commands in flight get {@link HostCommand#onTransportError} ("queue closed"), the listener
     * gets null. From a thread that is not one of the group's event loops this waits (up to 10 s) until that is done;
     * from another event loop of the group it hands the close over and returns, since that loop may be waiting for
     * this one (two controllers failing at once from their queues' close callbacks, each closing a queue on the
     * other's loop, stalled both loops for the 10 s).
     */
    @Override
    public void close() {
        EventLoop loop = handler.loop();
        if (loop == null) {
            return;
        }
        if (loop.inEventLoop()) {
            handler.shutdown(null);
            return;
        }
        if (onAnyLoopOf(loop)) {
            loop.execute(() -> handler.shutdown(null));
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        loop.execute(() -> {
            handler.shutdown(null);
            done.countDown();
        });
        try {
            done.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the calling thread is an event loop of {@code loop}'s group (cold path: iterates the group). */
    private static boolean onAnyLoopOf(EventLoop loop) {
        io.netty.util.concurrent.EventExecutorGroup group = loop.parent();
        if (group == null) {
            return false;
        }
        for (io.netty.util.concurrent.EventExecutor e : group) {
            if (e.inEventLoop()) {
                return true;
            }
        }
        return false;
    }

    /** Whether header / data digests were negotiated (nvmeof-protocol.md §5.4); meaningful once {@link #ready()} completed. */
    public boolean headerDigest() {
        return handler.headerDigest();
    }

    public boolean dataDigest() {
        return handler.dataDigest();
    }

    /** MAXH2CDATA from the ICResp. */
    public int maxH2cData() {
        return handler.maxH2cData();
    }

    /** "127.0.0.1:4420" or "[::1]:4420", for messages. */
    static String describe(InetSocketAddress a) {
        String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    @Override
    public String toString() {
        return "TcpHostQueue[" + peer + " qid=" + qid + "]";
    }
}

package io.nvmeof.testsupport;

import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A tiny TCP forwarder for tests of what a host does when the network misbehaves: it listens on a free loopback port
 * and forwards every connection to a target. The faults:
 * <ul>
 *   <li>{@link #pause()} stops forwarding in both directions (bytes wait, as with a stalled target or a congested
 *       path) until {@link #resume()};</li>
 *   <li>{@link #cutConnections()} resets every connection, as a dead link does;</li>
 *   <li>{@link #blackholeConnections()} silently drops every byte of the connections open now, in both directions, and
 *       hides their closing from the other side, as a network partition does: the host sees nothing come back (its
 *       keep-alive expires), the target keeps its end open until its own keep-alive timer ends it. Connections made
 *       later are forwarded normally;</li>
 *   <li>{@link #delay(Duration)} holds every chunk of bytes that long before forwarding it (a slow path: past a
 *       command timeout when long enough);</li>
 *   <li>{@link #refuseConnections(boolean)} resets new connections at once (a target that is not back yet).</li>
 * </ul>
 * {@link #observe(CommandObserver)} shows a test every NVMe/TCP command a host sends through it before the target
 * gets it, so the test can act at an exact point of a command sequence; {@link #pdusFromTarget(int)} and
 * {@link #successC2hData()} count the PDUs the targets sent back.
 */
public final class TcpProxy implements AutoCloseable {
    private final ServerSocket server;
    private volatile InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private volatile long delayNanos;
    private volatile boolean refusing;
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final Object pauseLock = new Object();
    private volatile boolean paused;
    private volatile boolean closed;
    private volatile CommandObserver observer;
    private final AtomicLongArray fromTarget = new AtomicLongArray(256);
    private final AtomicLong successC2hData = new AtomicLong();

    /** Sees the commands a host sends through the proxy: see {@link #observe(CommandObserver)}. */
    public interface CommandObserver {
        /**
         * Called on the proxy's thread for one connection with each command capsule the host sent on it (queue
         * {@code qid}, from its Connect), before the capsule is forwarded; later bytes of that connection wait until
         * it returns. The SQE is a copy.
         */
        void sent(int qid, SubmissionQueueEntry command);
    }

    private TcpProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "tcp-proxy-accept-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    /** Starts a proxy on 127.0.0.1 (free port) forwarding to {@code target}. */
    public static TcpProxy start(InetSocketAddress target) throws IOException {
        return new TcpProxy(target);
    }

    /** The port the proxy listens on. */
    public int port() {
        return server.getLocalPort();
    }

    public void pause() {
        paused = true;
    }

    public void resume() {
        synchronized (pauseLock) {
            paused = false;
            pauseLock.notifyAll();
        }
    }

    /** Calls {@code observer} with every command capsule sent through the proxy from now on; null stops it. */
    public void observe(CommandObserver observer) {
        this.observer = observer;
    }

    /**
     * Drops every byte of the connections open now, in both directions, from now on, and keeps each side's close from
     * the other (see the class comment); new connections pass.
     */
    public void blackholeConnections() {
        for (Link l : links) {
            l.blackholed = true;
        }
    }

    /**
     * Forwards connections made from now on to {@code newTarget} (open ones are not touched): the address a host
     * knows now leads to another target, e.g. one whose namespaces differ.
     */
    public void retarget(InetSocketAddress newTarget) {
        this.target = newTarget;
    }

    /** Holds every chunk of bytes {@code d} before forwarding it, in both directions; zero: no delay. */
    public void delay(Duration d) {
        delayNanos = d.toNanos();
    }

    /** While true, new connections are reset as soon as they are accepted; open ones are not touched. */
    public void refuseConnections(boolean refuse) {
        refusing = refuse;
    }

    /** Connections accepted and forwarded so far. */
    public int acceptedConnections() {
        return accepted.get();
    }

    /** Connections refused so far ({@link #refuseConnections}). */
    public int refusedConnections() {
        return refused.get();
    }

    /** Resets every open connection (RST); new connections are still accepted. */
    public void cutConnections() {
        for (Socket s : sockets) {
            try {
                s.setSoLinger(true, 0);
                s.close();
            } catch (IOException e) {
                // already gone
            }
        }
        sockets.clear();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                if (refusing) {
                    refused.incrementAndGet();
                    client.setSoLinger(true, 0);
                    client.close();
                    continue;
                }
                accepted.incrementAndGet();
                Socket upstream = new Socket();
                upstream.connect(target, 5000);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                Link link = new Link();
                links.add(link);
                pump(client, upstream, "up", new CapsuleScanner(true), link);
                pump(upstream, client, "down", new CapsuleScanner(false), link);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    /** One forwarded connection's fault state. */
    private static final class Link {
        volatile boolean blackholed;
    }

    private void pump(Socket from, Socket to, String dir, CapsuleScanner capsules, Link link) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[65536];
                    try {
                        // Not closed through try-with-resources: closing a socket's stream closes the socket, and a
                        // blackholed link must keep the far side open.
                        InputStream in = from.getInputStream();
                        OutputStream out = to.getOutputStream();
                        int n;
                        while ((n = in.read(buf)) >= 0) {
                            synchronized (pauseLock) {
                                while (paused && !closed) {
                                    pauseLock.wait(100);
                                }
                            }
                            if (link.blackholed) {
                                continue; // dropped on the floor
                            }
                            long d = delayNanos;
                            if (d > 0) {
                                Thread.sleep(d / 1_000_000, (int) (d % 1_000_000));
                            }
                            if (capsules != null) {
                                capsules.scan(buf, n);
                            }
                            out.write(buf, 0, n);
                            out.flush();
                        }
                    } catch (IOException | InterruptedException e) {
                        // connection gone
                    } finally {
                        closeQuietly(from);
                        if (!link.blackholed || closed) {
                            closeQuietly(to); // a partition hides the close: the far side times out on its own
                        }
                    }
                },
                "tcp-proxy-" + dir + "-" + from.getPort());
        t.setDaemon(true);
        t.start();
    }

    /**
     * PDUs the targets sent through the proxy so far, on every connection, by PDU type (the common header's first
     * byte: 0x05 CapsuleResp, 0x07 C2HData, 0x09 R2T; nvmeof-protocol.md §5.2).
     */
    public long pdusFromTarget(int type) {
        return fromTarget.get(type & 0xFF);
    }

    /** C2HData PDUs the targets sent with the SUCCESS flag (no CapsuleResp follows; nvmeof-protocol.md §5.10). */
    public long successC2hData() {
        return successC2hData.get();
    }

    /**
     * Follows the PDUs of one byte stream (CH: type, flags, HLEN, PDO, PLEN; nvmeof-protocol.md §5.2). Host to target:
     * hands each CapsuleCmd's SQE to the observer; the Connect capsule tells the queue's QID. Target to host: counts
     * the PDUs by type. Digests and data are skipped with the rest of the PDU, as PLEN covers them.
     */
    private final class CapsuleScanner {
        private static final int CAPSULE_CMD = 0x04;
        private static final int C2H_DATA = 0x07;
        private static final int FLAG_SUCCESS = 0x08;
        private static final int COMMON_HEADER = 8;
        private final boolean hostToTarget;
        private final byte[] head = new byte[COMMON_HEADER + SubmissionQueueEntry.LENGTH];
        private int have;
        private long skip;
        private int qid = -1;

        CapsuleScanner(boolean hostToTarget) {
            this.hostToTarget = hostToTarget;
        }

        void scan(byte[] buf, int n) {
            int i = 0;
            while (i < n) {
                if (skip > 0) {
                    int k = (int) Math.min(skip, n - i);
                    skip -= k;
                    i += k;
                    continue;
                }
                int need = have < COMMON_HEADER || !capsuleCmd() ? COMMON_HEADER : head.length;
                int k = Math.min(need - have, n - i);
                System.arraycopy(buf, i, head, have, k);
                have += k;
                i += k;
                if (have < need) {
                    continue;
                }
                if (capsuleCmd() && have < head.length) {
                    continue; // a capsule: read on to the end of its SQE
                }
                long plen = ByteBuffer.wrap(head, 4, 4)
                                .order(ByteOrder.LITTLE_ENDIAN)
                                .getInt()
                        & 0xFFFFFFFFL;
                if (capsuleCmd()) {
                    capsule();
                } else if (!hostToTarget) {
                    fromTarget.incrementAndGet(head[0] & 0xFF);
                    if (head[0] == C2H_DATA && (head[1] & FLAG_SUCCESS) != 0) {
                        successC2hData.incrementAndGet();
                    }
                }
                skip = plen - have;
                have = 0;
            }
        }

        /** Whether the PDU whose header is in {@code head} is a CapsuleCmd of the host (the one kind scanned whole). */
        private boolean capsuleCmd() {
            return hostToTarget && head[0] == CAPSULE_CMD;
        }

        private void capsule() {
            ByteBuffer copy = ByteBuffer.allocate(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            copy.put(0, head, COMMON_HEADER, SubmissionQueueEntry.LENGTH);
            SubmissionQueueEntry sqe = new SubmissionQueueEntry().wrap(copy, 0);
            if (sqe.opcode() == FabricsCommandType.OPCODE && sqe.fctype() == FabricsCommandType.CONNECT.code()) {
                qid = sqe.connectQid();
            }
            CommandObserver o = observer;
            if (o != null) {
                o.sent(qid, sqe);
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // ignore
        }
    }

    @Override
    public void close() {
        closed = true;
        resume();
        try {
            server.close();
        } catch (IOException e) {
            // ignore
        }
        cutConnections();
    }
}

package io.nvmeof.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A tiny TCP forwarder for tests of what a host does when the network misbehaves: it listens on a free loopback port
 * and forwards every connection to a target. {@link #pause()} stops forwarding in both directions (bytes wait, as with
 * a stalled target or a congested path) until {@link #resume()}; {@link #cutConnections()} resets every connection,
 * as a dead link does.
 */
public final class TcpProxy implements AutoCloseable {
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object pauseLock = new Object();
    private volatile boolean paused;
    private volatile boolean closed;

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
                Socket upstream = new Socket();
                upstream.connect(target, 5000);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, "up");
                pump(upstream, client, "down");
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, String dir) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[65536];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buf)) >= 0) {
                            synchronized (pauseLock) {
                                while (paused && !closed) {
                                    pauseLock.wait(100);
                                }
                            }
                            out.write(buf, 0, n);
                            out.flush();
                        }
                    } catch (IOException | InterruptedException e) {
                        // connection gone
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                "tcp-proxy-" + dir + "-" + from.getPort());
        t.setDaemon(true);
        t.start();
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

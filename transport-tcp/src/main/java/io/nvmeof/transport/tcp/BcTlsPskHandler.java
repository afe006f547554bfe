package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.core.tls.PskHash;
import io.nvmeof.core.tls.TlsPsk;
import io.nvmeof.core.tls.TlsPskResolver;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsFatalAlertReceived;
import org.bouncycastle.tls.TlsProtocol;
import org.bouncycastle.tls.TlsServerProtocol;

/**
 * TLS 1.3 with an external PSK under the NVMe/TCP PDUs (NVMe/TCP Transport §3.6.2: the handshake runs right after the
 * TCP connect, before ICReq), as a Netty handler in front of the PDU codec, driving BouncyCastle's TLS engine in its
 * non-blocking mode ({@code offerInput}/{@code readOutput}).
 *
 * <p>Inbound: the TLS records of a read are offered to the engine; the handshake messages it answers go out at once,
 * and the application data it decrypts is passed on as one pooled buffer per read. Outbound: the PDUs written between
 * two flushes are gathered as plaintext in a per-connection array (the written buffers are released at once, which is
 * when a {@code SegmentByteBuf} hands its data back), and encrypted into one pooled buffer at the flush; zero copy
 * stops here. Promises of such writes complete when the encrypted buffer is written.
 *
 * <p>Before the handshake completes, nothing reaches the NVMe/TCP handlers: the host's {@code channelActive} (which
 * sends the ICReq) is held back until then, and the controller's handlers are only installed then ({@code
 * established}). A failed handshake closes the connection after the alert; the controller logs one line naming the
 * peer, the identity it offered and the reason, never a key. Owned by the connection's event loop.
 */
final class BcTlsPskHandler extends ChannelDuplexHandler {
    private static final System.Logger LOG = System.getLogger(BcTlsPskHandler.class.getName());
    /** A TLS record carries at most 16 KiB of plaintext plus 256 bytes of expansion. */
    private static final int RECORD = 16 * 1024 + 256;

    private static final long HANDSHAKE_TIMEOUT_SECONDS = 10;
    /** TLS ContentType handshake (RFC 8446 §5.1): the first byte a TLS client sends. */
    static final int TLS_HANDSHAKE = 0x16;

    private final boolean client;
    private final TlsProtocol protocol;
    private final NvmeTlsPeers.Server server;
    private final NvmeTlsPeers.Client clientPeer;
    private final Consumer<ChannelHandlerContext> established;
    private final byte[] input = new byte[RECORD];
    private final ArrayList<ChannelPromise> pendingPromises = new ArrayList<>(2);
    private byte[] plain = new byte[64 * 1024];
    private int plainLength;
    private boolean handshakeDone;
    private boolean up;
    private boolean failed;
    private boolean activeSeen;
    private boolean anyInput;
    /** Bytes of the first record held in {@code input} (controller), -1 once it went to the engine. */
    private int helloLength;

    private ScheduledFuture<?> handshakeTimer;
    private ChannelHandlerContext ctx;

    private BcTlsPskHandler(
            TlsPsk psk, PskHash binderHash, TlsPskResolver resolver, Consumer<ChannelHandlerContext> established) {
        this.client = psk != null;
        this.established = established;
        if (client) {
            this.protocol = new TlsClientProtocol();
            this.server = null;
            this.clientPeer = new NvmeTlsPeers.Client(psk, binderHash, () -> handshakeDone = true);
        } else {
            this.protocol = new TlsServerProtocol();
            this.server = new NvmeTlsPeers.Server(resolver, () -> handshakeDone = true);
            this.clientPeer = null;
        }
    }

    /** The host's handler: offers {@code psk}; the handlers behind it see {@code channelActive} once TLS is up. */
    static BcTlsPskHandler client(TlsPsk psk, PskHash binderHash) {
        return new BcTlsPskHandler(psk, binderHash, null, ctx -> ctx.fireChannelActive());
    }

    /**
     * The controller's handler: picks the PSK with {@code resolver}; {@code established} installs the NVMe/TCP
     * handlers once TLS is up.
     */
    static BcTlsPskHandler server(TlsPskResolver resolver, Consumer<ChannelHandlerContext> established) {
        return new BcTlsPskHandler(null, null, resolver, established);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            start(ctx);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start(ctx);
        // Held back until the handshake is done (the host handler sends its ICReq on channelActive).
    }

    private void start(ChannelHandlerContext ctx) {
        if (activeSeen) {
            return;
        }
        activeSeen = true;
        handshakeTimer = ctx.executor()
                .schedule(
                        () -> fail(ctx, new IOException("no TLS handshake within " + HANDSHAKE_TIMEOUT_SECONDS + " s")),
                        HANDSHAKE_TIMEOUT_SECONDS,
                        TimeUnit.SECONDS);
        try {
            if (client) {
                ((TlsClientProtocol) protocol).connect(clientPeer);
                writeOutput(ctx, null);
                ctx.flush();
            }
            // The controller accepts once the ClientHello is in (channelRead): its binder and suites pick the crypto.
        } catch (IOException e) {
            fail(ctx, e);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf buf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            if (failed) {
                return;
            }
            if (!client && !anyInput && buf.isReadable()) {
                anyInput = true;
                int first = buf.getUnsignedByte(buf.readerIndex());
                if (first != TLS_HANDSHAKE) {
                    fail(
                            ctx,
                            new IOException("the host did not start a TLS handshake (first byte 0x"
                                    + Integer.toHexString(first) + (first == 0 ? ", a plain ICReq" : "")
                                    + ") and this listener requires TLS"));
                    return;
                }
            }
            if (!client && helloLength >= 0) {
                // The first record (the ClientHello) is read whole before the engine sees it, for its PSK binder.
                int n = Math.min(buf.readableBytes(), input.length - helloLength);
                buf.readBytes(input, helloLength, n);
                helloLength += n;
                int binder = ClientHelloBinders.firstBinderLength(input, helloLength);
                if (binder < 0 && helloLength < input.length) {
                    return;
                }
                server.binderLength = Math.max(binder, 0);
                int held = helloLength;
                helloLength = -1;
                if (binder == 32
                        && !ClientHelloBinders.offers(input, held, CipherSuite.TLS_AES_128_GCM_SHA256)
                        && ClientHelloBinders.offers(input, held, CipherSuite.TLS_CHACHA20_POLY1305_SHA256)) {
                    server.crypto = NvmeTlsPeers.CHACHA_CRYPTO;
                }
                ((TlsServerProtocol) protocol).accept(server);
                protocol.offerInput(input, 0, held);
            }
            while (buf.isReadable()) {
                int n = Math.min(buf.readableBytes(), input.length);
                buf.readBytes(input, 0, n);
                protocol.offerInput(input, 0, n);
            }
        } catch (IOException e) {
            writeOutput(ctx, null);
            ctx.flush();
            fail(ctx, e);
            return;
        } finally {
            buf.release();
        }
        writeOutput(ctx, null);
        if (handshakeDone && !up) {
            up = true;
            handshakeTimer.cancel(false);
            ctx.flush();
            if (!client) {
                LOG.log(
                        System.Logger.Level.INFO,
                        () -> "TLS 1.3 (" + server.suite + ") from "
                                + ctx.channel().remoteAddress() + " with PSK identity '" + server.chosen + "'");
            }
            established.accept(ctx);
        }
        deliver(ctx);
    }

    /** Passes on what the engine decrypted, as one pooled buffer. */
    private void deliver(ChannelHandlerContext ctx) {
        int n = protocol.getAvailableInputBytes();
        if (n <= 0 || !up) {
            return;
        }
        ByteBuf out = ctx.alloc().directBuffer(n);
        ByteBuffer nio = out.internalNioBuffer(0, n);
        protocol.readInput(nio, n);
        out.writerIndex(n);
        ctx.fireChannelRead(out);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
        if (up) {
            ctx.fireChannelReadComplete();
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf buf)) {
            ctx.write(msg, promise);
            return;
        }
        try {
            if (failed) {
                promise.tryFailure(new IOException("the TLS session failed"));
                return;
            }
            int n = buf.readableBytes();
            if (plainLength + n > plain.length) {
                plain = Arrays.copyOf(plain, Math.max(plain.length * 2, plainLength + n));
            }
            buf.readBytes(plain, plainLength, n);
            plainLength += n;
        } finally {
            buf.release();
        }
        if (!promise.isVoid()) {
            pendingPromises.add(promise);
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (plainLength > 0 && up && !failed) {
            try {
                protocol.writeApplicationData(plain, 0, plainLength);
                plainLength = 0;
            } catch (IOException e) {
                fail(ctx, e);
                return;
            }
            ChannelPromise p = null;
            if (!pendingPromises.isEmpty()) {
                p = ctx.newPromise();
                ChannelPromise[] waiting = pendingPromises.toArray(new ChannelPromise[0]);
                pendingPromises.clear();
                p.addListener(f -> {
                    for (ChannelPromise w : waiting) {
                        if (f.isSuccess()) {
                            w.trySuccess();
                        } else {
                            w.tryFailure(f.cause());
                        }
                    }
                });
            }
            writeOutput(ctx, p);
        }
        ctx.flush();
    }

    /** Writes what the engine has produced (records, handshake messages, alerts) as one pooled buffer. */
    private void writeOutput(ChannelHandlerContext ctx, ChannelPromise promise) {
        int n = protocol.getAvailableOutputBytes();
        if (n <= 0) {
            if (promise != null) {
                promise.trySuccess();
            }
            return;
        }
        ByteBuf out = ctx.alloc().directBuffer(n);
        protocol.readOutput(out.internalNioBuffer(0, n), n);
        out.writerIndex(n);
        ctx.write(out, promise == null ? ctx.voidPromise() : promise);
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (up && !failed && !protocol.isClosed()) {
            try {
                flush(ctx);
                protocol.close(); // close_notify
                writeOutput(ctx, null);
                ctx.flush();
            } catch (IOException e) {
                // closing anyway
            }
        }
        ctx.close(promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        if (!up && !failed && client && activeSeen) {
            failed = true;
            ctx.fireExceptionCaught(
                    new IOException(
                            "TLS handshake with controller at " + ctx.channel().remoteAddress()
                                    + " failed: the controller closed the connection (it has no PSK for this identity, or another key)"));
        }
        if (!up && !failed && !client) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "TLS handshake from " + ctx.channel().remoteAddress() + " failed: the host closed the connection"
                            + offeredText());
        }
        failPending(new IOException("the connection closed"));
        plainLength = 0;
        ctx.fireChannelInactive();
    }

    private void failPending(IOException cause) {
        for (ChannelPromise p : pendingPromises) {
            p.tryFailure(cause);
        }
        pendingPromises.clear();
    }

    private String offeredText() {
        if (server == null || server.offered == null) {
            return "";
        }
        return " (identities offered: " + server.offered + ")";
    }

    /** A failed handshake or record: one log line (controller) or an exception the host sees, then close. */
    private void fail(ChannelHandlerContext ctx, IOException cause) {
        if (failed) {
            return;
        }
        failed = true;
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        String reason = describe(cause);
        String where = up ? "TLS session" : "TLS handshake";
        if (client) {
            IOException e = new IOException(
                    where + " with controller at " + ctx.channel().remoteAddress() + " failed: " + reason, cause);
            ctx.fireExceptionCaught(e);
        } else {
            String identity = server.chosen != null ? " (identity '" + server.chosen + "')" : offeredText();
            if (!up && server.chosen == null && server.offered != null) {
                reason = "no PSK configured for the identity the host offered";
            }
            LOG.log(
                    System.Logger.Level.WARNING,
                    where + " from " + ctx.channel().remoteAddress() + " failed: " + reason + identity);
        }
        failPending(cause);
        ctx.close();
    }

    private static String describe(IOException e) {
        if (e instanceof TlsFatalAlertReceived alert) {
            return "the peer sent alert " + AlertDescription.getText(alert.getAlertDescription());
        }
        if (e instanceof TlsFatalAlert alert) {
            String text = AlertDescription.getText(alert.getAlertDescription());
            if (alert.getAlertDescription() == AlertDescription.decrypt_error) {
                return text + " (the PSK binder does not verify: the two sides have different keys)";
            }
            return alert.getMessage() != null ? alert.getMessage() : text;
        }
        String m = e.getMessage();
        if (m != null && m.contains("decrypt_error")) {
            return m + " (the two sides have different keys)";
        }
        return String.valueOf(m);
    }
}

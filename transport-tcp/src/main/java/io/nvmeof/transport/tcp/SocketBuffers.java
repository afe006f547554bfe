package io.nvmeof.transport.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The kernel buffer sizes of NVMe/TCP sockets, SO_RCVBUF and SO_SNDBUF. A host queue's socket has them fixed at
 * {@value #HOST_DEFAULT} bytes by default (system property {@code io.nvmeof.tcp.socketBufferBytes}; 0 leaves both to
 * the kernel's autotuning), the size SPDK's socket layer sets (its posix sock default). A target's sockets keep the
 * kernel's autotuning by default ({@code io.nvmeof.tcp.targetSocketBufferBytes}, 0): fixed 2 MiB there made
 * SPDK's perf write into our target more slowly in 6 of 6 alternated pairs (1–23 %) and did not change its reads
 * measurably (perf/README.md, "Socket buffers and BBR").
 *
 * <p><b>Why fixed on the host.</b> Linux starts a socket's receive buffer small ({@code net.ipv4.tcp_rmem}'s middle
 * value, 128 KiB, of which about half is offered as window) and grows it with the bytes the application reads per
 * round trip. A queue's data comes in bursts: at queue depth 128, 128 C2HData PDUs of 4 KiB answer one batch of
 * commands, more than that window holds, so the sender is held by the receiver's window ("rwnd limited" in
 * {@code ss -i}), which delays the burst. With BBR as the sender's congestion control (the choice of many
 * tuned hosts, and of the machine measured; Linux's default, CUBIC, does not pace) those samples are not
 * application-limited, BBR leaves its start-up mode for good and paces every later burst with a timer, for the
 * rest of the connection. On loopback that cost our host against SPDK's target about a third of its IOPS at queue
 * depth 128, in the runs where it happened (perf/README.md, "Socket buffers and BBR"). With the buffers fixed the
 * window holds a whole burst from the first command on.
 *
 * <p><b>The kernel's caps.</b> Linux caps SO_RCVBUF at {@code net.core.rmem_max} and SO_SNDBUF at
 * {@code net.core.wmem_max} (208 KiB on a stock kernel) and turns autotuning off for a buffer that was set. A buffer
 * fixed below the asked size can hold the window smaller than autotuning would, so where a cap is lower than the size
 * asked for, that buffer is left to the kernel and the reason is logged once.
 *
 * <p>A target's receive buffer, when set, goes on the listening socket too: an accepted socket inherits it, and the
 * window scale its handshake offers is chosen from it.
 */
final class SocketBuffers {
    private static final System.Logger LOG = System.getLogger(SocketBuffers.class.getName());

    /** A host queue's buffers: the size asked for by default, SPDK's (2 MiB). */
    static final int HOST_DEFAULT = 2 << 20;

    static final String HOST_PROPERTY = "io.nvmeof.tcp.socketBufferBytes";

    /** A target's buffers: the kernel's autotuning by default. */
    static final int TARGET_DEFAULT = 0;

    static final String TARGET_PROPERTY = "io.nvmeof.tcp.targetSocketBufferBytes";

    static final Path RMEM_MAX = Path.of("/proc/sys/net/core/rmem_max");
    static final Path WMEM_MAX = Path.of("/proc/sys/net/core/wmem_max");
    /** The warning about a cap is logged once per process, not at every connection. */
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    /** The SO_RCVBUF to set, or 0 for the kernel's autotuning. */
    private final int receive;
    /** The SO_SNDBUF to set, or 0 for the kernel's autotuning. */
    private final int send;

    private SocketBuffers(int receive, int send) {
        this.receive = receive;
        this.send = send;
    }

    /**
     * A host queue's sizes, from {@code io.nvmeof.tcp.socketBufferBytes}, within this kernel's caps.
     *
     * @throws IllegalArgumentException naming the property, if it is not a byte count from 0 to 2^31-1
     */
    static SocketBuffers forHost() {
        return fromSystem(HOST_PROPERTY, HOST_DEFAULT);
    }

    /**
     * A target's sizes, from {@code io.nvmeof.tcp.targetSocketBufferBytes}, within this kernel's caps.
     *
     * @throws IllegalArgumentException naming the property, if it is not a byte count from 0 to 2^31-1
     */
    static SocketBuffers forTarget() {
        return fromSystem(TARGET_PROPERTY, TARGET_DEFAULT);
    }

    private static SocketBuffers fromSystem(String property, int defaultBytes) {
        int bytes = parse(property, System.getProperty(property), defaultBytes);
        return of(property, bytes, readCap(RMEM_MAX), readCap(WMEM_MAX));
    }

    /**
     * @param property the system property that asked for the size, named in messages
     * @param bytes    the size asked for, 0 for autotuning
     * @param rmemMax  the kernel's cap on SO_RCVBUF ({@code net.core.rmem_max}), or -1 where it cannot be read
     * @param wmemMax  the kernel's cap on SO_SNDBUF, or -1
     */
    static SocketBuffers of(String property, int bytes, long rmemMax, long wmemMax) {
        if (bytes < 0) {
            throw new IllegalArgumentException(
                    property + " must be 0 (the kernel's autotuning) or a byte count, not " + bytes);
        }
        int receive = fits(bytes, rmemMax) ? bytes : 0;
        int send = fits(bytes, wmemMax) ? bytes : 0;
        if (bytes > 0 && (receive == 0 || send == 0)) {
            warnOnce(property, bytes, rmemMax, wmemMax);
        }
        return new SocketBuffers(receive, send);
    }

    /** The SO_RCVBUF set on each socket, 0 if autotuned. */
    int receive() {
        return receive;
    }

    /** The SO_SNDBUF set on each socket, 0 if autotuned. */
    int send() {
        return send;
    }

    /** A host connection's options. */
    void applyTo(Bootstrap b) {
        if (receive > 0) {
            b.option(ChannelOption.SO_RCVBUF, receive);
        }
        if (send > 0) {
            b.option(ChannelOption.SO_SNDBUF, send);
        }
    }

    /** A listener's options: the receive buffer on the listening socket and on each accepted one, the send buffer. */
    void applyTo(ServerBootstrap b) {
        if (receive > 0) {
            b.option(ChannelOption.SO_RCVBUF, receive);
            b.childOption(ChannelOption.SO_RCVBUF, receive);
        }
        if (send > 0) {
            b.childOption(ChannelOption.SO_SNDBUF, send);
        }
    }

    private static boolean fits(int bytes, long cap) {
        return cap < 0 || bytes <= cap;
    }

    private static void warnOnce(String property, int bytes, long rmemMax, long wmemMax) {
        if (!WARNED.compareAndSet(false, true)) {
            return;
        }
        StringBuilder caps = new StringBuilder();
        if (!fits(bytes, rmemMax)) {
            caps.append("net.core.rmem_max is ").append(rmemMax);
        }
        if (!fits(bytes, wmemMax)) {
            caps.append(caps.length() > 0 ? " and " : "")
                    .append("net.core.wmem_max is ")
                    .append(wmemMax);
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "NVMe/TCP sockets keep the kernel's autotuned buffers where it caps them: " + property + " asks for "
                        + bytes + " bytes but " + caps + " (raise them to at least " + bytes
                        + " with sysctl -w, or set "
                        + property + "=0 to leave every buffer to the kernel)");
    }

    static int parse(String property, String value, int defaultBytes) {
        if (value == null) {
            return defaultBytes;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    property + " must be 0 (the kernel's autotuning) or a byte count, not '" + value + "'");
        }
    }

    /**
     * A {@code /proc/sys} value, or -1 where there is none (not Linux, or not readable). Read by lines: JDK 17's
     * {@code Files.readString} returns only the first byte of a {@code /proc} file, whose size is reported as 0.
     */
    static long readCap(Path file) {
        try {
            List<String> lines = Files.readAllLines(file);
            return lines.isEmpty() ? -1 : Long.parseLong(lines.get(0).trim());
        } catch (IOException | NumberFormatException | SecurityException e) {
            return -1;
        }
    }
}

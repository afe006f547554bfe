package io.nvmeof.core.spi;

import io.nvmeof.core.tls.SecureChannel;
import io.nvmeof.core.tls.TlsPskResolver;
import java.net.InetSocketAddress;

/**
 * What the target asks of one listening port.
 *
 * @param address            where to listen
 * @param portId             PORTID reported in discovery log entries
 * @param maxQueueSize       the largest I/O queue a host may connect (CAP.MQES + 1); the admin queue is always 32
 * @param inCapsuleDataSize  in-capsule data bytes accepted on I/O queues (IOCCSZ = (64 + this) / 16)
 * @param ioThreads          event-loop threads serving the queues (0: the transport's default)
 * @param digestsAllowed     whether header/data digests may be negotiated (TCP)
 * @param ioMode             event-loop engine and busy polling
 * @param secureChannel      TLS on this listener (TCP): none, allowed or required
 * @param pskResolver        the TLS PSK for an identity a client offers (used when {@code secureChannel} is not NONE)
 */
public record ListenerOptions(
        InetSocketAddress address,
        int portId,
        int maxQueueSize,
        int inCapsuleDataSize,
        int ioThreads,
        boolean digestsAllowed,
        IoMode ioMode,
        SecureChannel secureChannel,
        TlsPskResolver pskResolver) {
    public static final int DEFAULT_MAX_QUEUE_SIZE = 128;
    public static final int DEFAULT_IN_CAPSULE_DATA_SIZE = 16384;

    public ListenerOptions(
            InetSocketAddress address,
            int portId,
            int maxQueueSize,
            int inCapsuleDataSize,
            int ioThreads,
            boolean digestsAllowed,
            IoMode ioMode) {
        this(
                address,
                portId,
                maxQueueSize,
                inCapsuleDataSize,
                ioThreads,
                digestsAllowed,
                ioMode,
                SecureChannel.NONE,
                TlsPskResolver.NONE);
    }

    public ListenerOptions(
            InetSocketAddress address,
            int portId,
            int maxQueueSize,
            int inCapsuleDataSize,
            int ioThreads,
            boolean digestsAllowed) {
        this(address, portId, maxQueueSize, inCapsuleDataSize, ioThreads, digestsAllowed, IoMode.DEFAULT);
    }

    public ListenerOptions {
        ioMode = ioMode == null ? IoMode.DEFAULT : ioMode;
        secureChannel = secureChannel == null ? SecureChannel.NONE : secureChannel;
        pskResolver = pskResolver == null ? TlsPskResolver.NONE : pskResolver;
        if (maxQueueSize < 2 || maxQueueSize > 65536) {
            throw new IllegalArgumentException("maxQueueSize must be 2..65536: " + maxQueueSize);
        }
        if (inCapsuleDataSize < 0 || inCapsuleDataSize % 16 != 0) {
            throw new IllegalArgumentException(
                    "inCapsuleDataSize must be a non-negative multiple of 16: " + inCapsuleDataSize);
        }
    }

    public static ListenerOptions of(InetSocketAddress address) {
        return new ListenerOptions(
                address, 1, DEFAULT_MAX_QUEUE_SIZE, DEFAULT_IN_CAPSULE_DATA_SIZE, 0, true, IoMode.DEFAULT);
    }
}

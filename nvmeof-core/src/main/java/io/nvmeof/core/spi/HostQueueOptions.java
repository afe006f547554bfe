package io.nvmeof.core.spi;

import io.nvmeof.core.tls.TlsPsk;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * What an initiator asks of one host queue (one connection / QP).
 *
 * @param address        the controller's address
 * @param qid            0 admin, 1..N I/O (RDMA puts it in the CM private data, nvmeof-protocol.md §6.1; TCP binds it by Connect)
 * @param queueSize      entries in the queue (SQSIZE + 1); command IDs used on it are 0..queueSize-1
 * @param cntlid         the controller ID for I/O queues (RDMA private data), 0 for the admin queue
 * @param headerDigest   ask for header digests (NVMe/TCP, nvmeof-protocol.md §5.8)
 * @param dataDigest     ask for data digests (NVMe/TCP, nvmeof-protocol.md §5.8)
 * @param connectTimeout how long the transport may take to connect (TCP connect + ICReq/ICResp)
 * @param ioMode         event-loop engine and busy polling for this queue's thread
 * @param tlsPsk         TLS 1.3 with this PSK before ICReq (NVMe/TCP), or null for none
 */
public record HostQueueOptions(
        InetSocketAddress address,
        int qid,
        int queueSize,
        int cntlid,
        boolean headerDigest,
        boolean dataDigest,
        Duration connectTimeout,
        IoMode ioMode,
        TlsPsk tlsPsk) {
    public HostQueueOptions(
            InetSocketAddress address,
            int qid,
            int queueSize,
            int cntlid,
            boolean headerDigest,
            boolean dataDigest,
            Duration connectTimeout) {
        this(address, qid, queueSize, cntlid, headerDigest, dataDigest, connectTimeout, IoMode.DEFAULT, null);
    }

    public HostQueueOptions(
            InetSocketAddress address,
            int qid,
            int queueSize,
            int cntlid,
            boolean headerDigest,
            boolean dataDigest,
            Duration connectTimeout,
            IoMode ioMode) {
        this(address, qid, queueSize, cntlid, headerDigest, dataDigest, connectTimeout, ioMode, null);
    }

    public HostQueueOptions {
        ioMode = ioMode == null ? IoMode.DEFAULT : ioMode;
        if (address == null) {
            throw new IllegalArgumentException("a host queue needs an address");
        }
        if (qid < 0 || qid > 0xFFFE) {
            throw new IllegalArgumentException("qid must be 0..65534: " + qid);
        }
        if (queueSize < 2 || queueSize > 65536) {
            throw new IllegalArgumentException("queueSize must be 2..65536: " + queueSize);
        }
        if (connectTimeout == null || connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("connectTimeout must be positive");
        }
    }
}

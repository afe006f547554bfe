package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import io.nvmeof.transport.rdma.verbs.RdmaProviders;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * NVMe/RDMA (TRTYPE 1, nvmeof-protocol.md §6), target ({@link #listen}) and host ({@link #connect}) side, over a verbs
 * provider: DiSNI on a real RNIC or Soft-RoCE when it is available, else the software RNIC.
 *
 * <p>Choosing the provider: {@code IoMode.engine} of the listener or host queue options ("disni", "soft" or "auto"),
 * else the system property {@value #PROVIDER_PROPERTY}, else "auto" (the first available of disni, soft). A transport
 * made with {@link #RdmaTransport(RdmaProvider)} always uses that provider.
 *
 * <p>What it advertises (nvmeof-protocol.md §6.6, like nvmet-rdma): SGLS 0x00100005 (keyed SGL data blocks, in-capsule offset), MDTS 8
 * (1 MiB with 4 KiB pages; no command may move more), {@value #IN_CAPSULE_DATA_SIZE} bytes in-capsule on I/O queues
 * (IOCCSZ 260) and none on the admin queue, MQES from the listener options (at most {@value #MAX_QUEUE_SIZE} entries),
 * TSAS QPTYPE 1 / PRTYPE 1 / CMS 1.
 */
public final class RdmaTransport implements Transport {
    public static final String NAME = "rdma";
    /** System property naming the provider when the options say "auto": "disni", "soft" or "auto". */
    public static final String PROVIDER_PROPERTY = "nvmeof.rdma.provider";
    /** System property: "false" turns the target's zero copy (registered namespace memory) off, for comparison. */
    public static final String ZERO_COPY_PROPERTY = "nvmeof.rdma.zeroCopy";

    public static final int SGLS = 0x00100005;
    public static final int MDTS = 8;
    /** The largest transfer of one command: 2^MDTS × 4 KiB = 1 MiB. */
    public static final int MAX_TRANSFER = 1 << 20;

    public static final int IN_CAPSULE_DATA_SIZE = 4096;
    public static final int MAX_QUEUE_SIZE = 256;
    /** RDMA Reads the target keeps outstanding per queue at most (further limited by the host's offer). */
    public static final int MAX_READ_DEPTH = 16;

    private final RdmaProvider fixed;

    /** The ServiceLoader constructor: the provider is chosen per listener/queue (see the class comment). */
    public RdmaTransport() {
        this.fixed = null;
    }

    /** A transport that always uses {@code provider}. */
    public RdmaTransport(RdmaProvider provider) {
        this.fixed = provider;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int transportType() {
        return PortInfo.TRTYPE_RDMA;
    }

    @Override
    public boolean isAvailable() {
        if (fixed != null) {
            return fixed.isAvailable();
        }
        try {
            return !RdmaProviders.available().isEmpty();
        } catch (RuntimeException | java.util.ServiceConfigurationError e) {
            return false;
        }
    }

    @Override
    public String unavailableReason() {
        if (isAvailable()) {
            return null;
        }
        List<String> reasons = new ArrayList<>();
        for (RdmaProvider p : fixed != null ? List.of(fixed) : RdmaProviders.all()) {
            reasons.add(p.name() + ": " + p.unavailableReason());
        }
        return reasons.isEmpty()
                ? "no RDMA provider on the class path"
                : "no RDMA provider is available (" + String.join("; ", reasons) + ")";
    }

    /** The provider for {@code ioMode}: see the class comment. */
    public RdmaProvider provider(IoMode ioMode) throws IOException {
        if (fixed != null) {
            return fixed;
        }
        String engine = ioMode == null ? "auto" : ioMode.engine();
        if (engine.equals("auto")) {
            engine = System.getProperty(PROVIDER_PROPERTY, "auto").trim().toLowerCase(java.util.Locale.ROOT);
        }
        if (!engine.equals("auto")) {
            RdmaProvider p;
            try {
                p = RdmaProviders.find(engine);
            } catch (IllegalArgumentException e) {
                throw new IOException(e.getMessage(), e);
            }
            if (!p.isAvailable()) {
                throw new IOException("RDMA provider " + engine + " is not available: " + p.unavailableReason());
            }
            return p;
        }
        RdmaProvider soft = null;
        for (RdmaProvider p : RdmaProviders.available()) {
            if (p.name().equals("disni")) {
                return p;
            }
            if (soft == null) {
                soft = p;
            }
        }
        if (soft == null) {
            throw new IOException(unavailableReason());
        }
        return soft;
    }

    @Override
    public TargetListener listen(ListenerOptions options, QueueAcceptor acceptor) throws IOException {
        RdmaProvider p = provider(options.ioMode());
        boolean zeroCopy = !"false".equalsIgnoreCase(System.getProperty(ZERO_COPY_PROPERTY));
        return new RdmaTargetListener(p, options, acceptor, zeroCopy);
    }

    @Override
    public HostQueue connect(HostQueueOptions options) throws IOException {
        return RdmaHostQueue.connect(provider(options.ioMode()), options);
    }

    /**
     * Host data bytes copied through the host queues' registered pool since this process started: the one copy a
     * caller's own buffer costs (buffers from {@code allocateBuffer} cost none). All host queues of this process.
     */
    public static long hostCopiedBytes() {
        return HostBuffers.COPIED.sum();
    }

    /** Host data bytes moved straight between buffers from {@code allocateBuffer} and the controller (no copy). */
    public static long hostZeroCopyBytes() {
        return HostBuffers.ZERO_COPY.sum();
    }

    /** Host→controller data bytes sent in the capsule (at most the in-capsule size per command, I/O queues only). */
    public static long hostInCapsuleBytes() {
        return HostBuffers.IN_CAPSULE.sum();
    }

    /** What results over the provider {@code ioMode} selects are labelled with, e.g. "software RNIC (emulated)". */
    public String providerDescription(IoMode ioMode) throws IOException {
        return provider(ioMode).description();
    }

    /** Whether the provider {@code ioMode} selects is emulated (the software RNIC). */
    public boolean providerEmulated(IoMode ioMode) throws IOException {
        return provider(ioMode).isEmulated();
    }

    @Override
    public String toString() {
        return "NVMe/RDMA transport" + (fixed != null ? " over " + fixed.description() : "");
    }
}

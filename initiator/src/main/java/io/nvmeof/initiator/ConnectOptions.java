package io.nvmeof.initiator;

import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.Transport;
import java.time.Duration;

/**
 * What {@link Nvme#connect(NvmeUri, ConnectOptions)} needs beyond the URI. Everything has a default; build with
 * {@code ConnectOptions.builder()...build()}.
 *
 * @param hostIdentity   the host NQN and host ID (null: the URI's hostnqn, else {@link HostIdentity#defaults()})
 * @param connectTimeout how long each connection (TCP connect + ICReq/ICResp) may take; default 10 s, as the Linux
 *                       host waits for an ICResp (nvmeof-protocol.md §7.1 step 2)
 * @param transport      a transport instance to use instead of looking one up by the URI's scheme (null: {@link
 *                       Transport#find})
 * @param ioMode         the I/O queues' event-loop engine and busy polling (null: the URI's {@code engine=} and
 *                       {@code hipri=}); the admin queue never busy-polls
 */
public record ConnectOptions(HostIdentity hostIdentity, Duration connectTimeout, Transport transport, IoMode ioMode) {
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    public ConnectOptions(HostIdentity hostIdentity, Duration connectTimeout, Transport transport) {
        this(hostIdentity, connectTimeout, transport, null);
    }

    public ConnectOptions {
        if (connectTimeout == null) {
            connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("connectTimeout must be positive: " + connectTimeout);
        }
    }

    /** All defaults. */
    public static ConnectOptions defaults() {
        return new ConnectOptions(null, null, null);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builder of {@link ConnectOptions}. */
    public static final class Builder {
        private HostIdentity hostIdentity;
        private Duration connectTimeout;
        private Transport transport;
        private IoMode ioMode;

        private Builder() {}

        public Builder hostIdentity(HostIdentity identity) {
            this.hostIdentity = identity;
            return this;
        }

        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        public Builder transport(Transport t) {
            this.transport = t;
            return this;
        }

        /** Engine and busy polling for the I/O queues; overrides the URI's {@code engine=} and {@code hipri=}. */
        public Builder ioMode(IoMode mode) {
            this.ioMode = mode;
            return this;
        }

        public ConnectOptions build() {
            return new ConnectOptions(hostIdentity, connectTimeout, transport, ioMode);
        }
    }
}

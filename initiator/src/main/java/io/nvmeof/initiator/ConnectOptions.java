package io.nvmeof.initiator;

import io.nvmeof.core.spi.Transport;

import java.time.Duration;

/**
 * What {@link Nvme#connect(NvmeUri, ConnectOptions)} needs beyond the URI. Everything has a default; build with
 * {@code ConnectOptions.builder()...build()}.
 *
 * @param hostIdentity   the host NQN and host ID (null: the URI's hostnqn, else {@link HostIdentity#defaults()})
 * @param connectTimeout how long each connection (TCP connect + ICReq/ICResp) may take; default 10 s, as the Linux
 *                       host waits for an ICResp (§7.1 step 2)
 * @param transport      a transport instance to use instead of looking one up by the URI's scheme (null: {@link
 *                       Transport#find})
 */
public record ConnectOptions(HostIdentity hostIdentity, Duration connectTimeout, Transport transport) {
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

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

        private Builder() {
        }

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

        public ConnectOptions build() {
            return new ConnectOptions(hostIdentity, connectTimeout, transport);
        }
    }
}

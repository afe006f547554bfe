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
 * @param dhchap         the DH-HMAC-CHAP secrets (null: the URI's {@code dhchap_secret} and
 *                       {@code dhchap_ctrl_secret}, if any; docs/security.md)
 */
public record ConnectOptions(
        HostIdentity hostIdentity, Duration connectTimeout, Transport transport, IoMode ioMode, DhchapKeys dhchap) {
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    public ConnectOptions(HostIdentity hostIdentity, Duration connectTimeout, Transport transport) {
        this(hostIdentity, connectTimeout, transport, null, null);
    }

    public ConnectOptions(HostIdentity hostIdentity, Duration connectTimeout, Transport transport, IoMode ioMode) {
        this(hostIdentity, connectTimeout, transport, ioMode, null);
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
        private String dhchapSecret;
        private String dhchapCtrlSecret;

        private Builder() {}

        /** The host's DH-HMAC-CHAP secret, {@code DHHC-1:hh:BASE64:} (overrides the URI's {@code dhchap_secret}). */
        public Builder dhchapSecret(String secret) {
            this.dhchapSecret = secret;
            return this;
        }

        /** The controller's secret, for bidirectional authentication (overrides {@code dhchap_ctrl_secret}). */
        public Builder dhchapCtrlSecret(String secret) {
            this.dhchapCtrlSecret = secret;
            return this;
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

        /** Engine and busy polling for the I/O queues; overrides the URI's {@code engine=} and {@code hipri=}. */
        public Builder ioMode(IoMode mode) {
            this.ioMode = mode;
            return this;
        }

        public ConnectOptions build() {
            if (dhchapSecret == null && dhchapCtrlSecret != null) {
                throw new IllegalArgumentException("dhchapCtrlSecret needs dhchapSecret too");
            }
            return new ConnectOptions(
                    hostIdentity,
                    connectTimeout,
                    transport,
                    ioMode,
                    dhchapSecret == null ? null : DhchapKeys.parse(dhchapSecret, dhchapCtrlSecret));
        }
    }
}

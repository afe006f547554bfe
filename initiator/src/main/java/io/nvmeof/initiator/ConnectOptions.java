package io.nvmeof.initiator;

import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What {@link Nvme#connect(NvmeUri, ConnectOptions)} needs beyond the URI. Everything has a default; build with
 * {@code ConnectOptions.builder()...build()}. The reconnect times, when set here, override the URI's options of the
 * same (Linux) names; a negative duration is Linux's -1 ({@link NvmeUri#NEVER}).
 *
 * @param hostIdentity   the host NQN and host ID (null: the URI's hostnqn, else {@link HostIdentity#defaults()})
 * @param connectTimeout how long each connection (TCP connect + ICReq/ICResp) may take; default 10 s, as the Linux
 *                       host waits for an ICResp (nvmeof-protocol.md §7.1 step 2)
 * @param transport      a transport instance to use instead of looking one up by the URI's scheme (null: {@link
 *                       Transport#find})
 * @param ioMode         the I/O queues' event-loop engine and busy polling (null: the URI's {@code engine=} and
 *                       {@code hipri=}); the admin queue never busy-polls
 * @param keepAliveTmo   keep_alive_tmo (null: the URI's {@code kato}/{@code keep_alive_tmo})
 * @param reconnectDelay reconnect_delay (null: the URI's)
 * @param ctrlLossTmo    ctrl_loss_tmo; negative: reconnect for ever, zero: never (null: the URI's)
 * @param fastIoFailTmo  fast_io_fail_tmo; negative: off (null: the URI's)
 * @param stateListeners told every state change from {@link ControllerState#CONNECTING} on (never null)
 * @param dhchap         the DH-HMAC-CHAP secrets (null: the URI's {@code dhchap_secret} and
 *                       {@code dhchap_ctrl_secret}, if any; docs/security.md); a reconnect authenticates with the
 *                       same secrets
 */
public record ConnectOptions(
        HostIdentity hostIdentity,
        Duration connectTimeout,
        Transport transport,
        IoMode ioMode,
        Duration keepAliveTmo,
        Duration reconnectDelay,
        Duration ctrlLossTmo,
        Duration fastIoFailTmo,
        List<ControllerStateListener> stateListeners,
        DhchapKeys dhchap) {
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    public ConnectOptions(HostIdentity hostIdentity, Duration connectTimeout, Transport transport) {
        this(hostIdentity, connectTimeout, transport, null);
    }

    public ConnectOptions(HostIdentity hostIdentity, Duration connectTimeout, Transport transport, IoMode ioMode) {
        this(hostIdentity, connectTimeout, transport, ioMode, null, null, null, null, List.of(), null);
    }

    public ConnectOptions {
        if (connectTimeout == null) {
            connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("connectTimeout must be positive: " + connectTimeout);
        }
        if (keepAliveTmo != null && keepAliveTmo.isNegative()) {
            throw new IllegalArgumentException("keepAliveTmo must not be negative: " + keepAliveTmo);
        }
        if (reconnectDelay != null && (reconnectDelay.isNegative() || reconnectDelay.isZero())) {
            throw new IllegalArgumentException("reconnectDelay must be positive: " + reconnectDelay);
        }
        stateListeners = stateListeners == null ? List.of() : List.copyOf(stateListeners);
    }

    /** All defaults. */
    public static ConnectOptions defaults() {
        return new ConnectOptions(null, null, null);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** This with another host identity (the rest kept). */
    ConnectOptions withHostIdentity(HostIdentity host) {
        return new ConnectOptions(
                host,
                connectTimeout,
                transport,
                ioMode,
                keepAliveTmo,
                reconnectDelay,
                ctrlLossTmo,
                fastIoFailTmo,
                stateListeners,
                dhchap);
    }

    /** Builder of {@link ConnectOptions}. */
    public static final class Builder {
        private HostIdentity hostIdentity;
        private Duration connectTimeout;
        private Transport transport;
        private IoMode ioMode;
        private Duration keepAliveTmo;
        private Duration reconnectDelay;
        private Duration ctrlLossTmo;
        private Duration fastIoFailTmo;
        private final List<ControllerStateListener> stateListeners = new ArrayList<>();
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

        /** keep_alive_tmo (KATO): Keep Alive goes out every half of it; 0 disables it. Linux default 5 s. */
        public Builder keepAliveTmo(Duration kato) {
            this.keepAliveTmo = kato;
            return this;
        }

        /** reconnect_delay: the time between reconnect attempts. Linux default 10 s. */
        public Builder reconnectDelay(Duration delay) {
            this.reconnectDelay = delay;
            return this;
        }

        /**
         * ctrl_loss_tmo: how long to keep reconnecting before the controller is lost; negative ({@link
         * NvmeUri#NEVER}): for ever; zero: no reconnect, the first failure is final. Linux default 600 s.
         */
        public Builder ctrlLossTmo(Duration tmo) {
            this.ctrlLossTmo = tmo;
            return this;
        }

        /** fast_io_fail_tmo: after this long reconnecting, waiting and new commands fail; negative: off (default). */
        public Builder fastIoFailTmo(Duration tmo) {
            this.fastIoFailTmo = tmo;
            return this;
        }

        /** Adds a listener told every state change, from {@link ControllerState#CONNECTING} on. */
        public Builder stateListener(ControllerStateListener listener) {
            this.stateListeners.add(Objects.requireNonNull(listener));
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
                    keepAliveTmo,
                    reconnectDelay,
                    ctrlLossTmo,
                    fastIoFailTmo,
                    stateListeners,
                    dhchapSecret == null ? null : DhchapKeys.parse(dhchapSecret, dhchapCtrlSecret));
        }
    }
}

package io.nvmeof.target;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.core.tls.PskIdentity;
import io.nvmeof.core.tls.TlsPsk;
import io.nvmeof.core.tls.TlsPskResolver;
import io.nvmeof.target.config.TlsKeyConfig;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The target's TLS PSKs, per host (and optionally per subsystem), and the choice of PSK for the identity a host
 * offers in its ClientHello (NVMe/TCP Transport §3.6.1.3): the identity names the host and the subsystem; the host's
 * key for that subsystem (or its key for every subsystem) must have the identity's hash; a version 1 identity's
 * digest must be the key's, which also says which HkdfLabel encoding the host used; a version 0 identity uses the
 * key's configured derivation. Generated PSKs ("NVMe0G..", from DH-HMAC-CHAP secure concatenation) are not supported.
 *
 * <p>Thread-safe: the handshakes of every listener call {@link #resolve} on their event loops while the management
 * RPC adds and removes keys. An unknown identity is logged by the transport, with the identity and without any key.
 */
public final class TlsKeys implements TlsPskResolver {
    private static final System.Logger LOG = System.getLogger(TlsKeys.class.getName());
    /** Key: host NQN + ' ' + subsystem NQN, or host NQN + " *" for a key of every subsystem. */
    private final Map<String, TlsKeyConfig> keys = new ConcurrentHashMap<>();

    private static String slot(String hostNqn, String subsysNqn) {
        return hostNqn + " " + (subsysNqn == null ? "*" : subsysNqn);
    }

    /** Adds or replaces the key of {@code key.hostNqn()} for {@code key.subsysNqn()}. */
    public void put(TlsKeyConfig key) {
        keys.put(slot(key.hostNqn(), key.subsysNqn()), key);
    }

    /** Removes a host's key for one subsystem (null: its key for every subsystem); true if there was one. */
    public boolean remove(String hostNqn, String subsysNqn) {
        return keys.remove(slot(hostNqn, subsysNqn)) != null;
    }

    /** Whether any key is configured. */
    public boolean isEmpty() {
        return keys.isEmpty();
    }

    /** How many keys are configured. */
    public int size() {
        return keys.size();
    }

    @Override
    public TlsPsk resolve(String offered) {
        PskIdentity id;
        try {
            id = PskIdentity.parse(offered);
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (id.generated()) {
            LOG.log(System.Logger.Level.INFO, "generated PSKs (NVMe0G/NVMe1G, secure concatenation) are not supported");
            return null;
        }
        TlsKeyConfig key = keys.get(slot(id.hostNqn(), id.subsysNqn()));
        if (key == null) {
            key = keys.get(slot(id.hostNqn(), null));
        }
        if (key == null) {
            return null;
        }
        ConfiguredPsk psk = key.psk();
        if (psk.hash() != id.hash()) {
            return null;
        }
        PskDerivation derivation = id.version() == 1 ? PskDerivation.matchingDigest(psk, id) : key.derivation();
        if (derivation == null) {
            return null;
        }
        return psk.derive(id.hostNqn(), id.subsysNqn(), id.version(), derivation);
    }
}

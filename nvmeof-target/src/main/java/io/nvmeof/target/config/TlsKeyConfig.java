package io.nvmeof.target.config;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A host's TLS PSK (NVMe/TCP secure channel): the configured PSK in the interchange format, the host it belongs to
 * and, optionally, the one subsystem it is for. The target derives the TLS PSK for the identity a host offers from it.
 *
 * @param hostNqn    the host NQN
 * @param subsysNqn  the subsystem NQN it applies to, or null for every subsystem (and discovery)
 * @param psk        the configured PSK
 * @param derivation how a version 0 identity's TLS PSK is derived: {@link PskDerivation#RFC8446} (default) or
 *                   {@link PskDerivation#LIBNVME_COMPAT} for keys that nvme-cli before 2.16 put into a host's keyring;
 *                   a version 1 identity's digest says which one the host used
 */
public record TlsKeyConfig(String hostNqn, String subsysNqn, ConfiguredPsk psk, PskDerivation derivation) {
    public TlsKeyConfig {
        if (hostNqn == null || hostNqn.isBlank()) {
            throw new IllegalArgumentException("a TLS key needs the host NQN it belongs to");
        }
        if (psk == null) {
            throw new IllegalArgumentException("a TLS key needs a PSK (NVMeTLSkey-1:...)");
        }
        subsysNqn = subsysNqn == null || subsysNqn.isBlank() ? null : subsysNqn;
        derivation = derivation == null ? PskDerivation.RFC8446 : derivation;
    }

    /**
     * Parses the {@code --tls-key} flag: {@code host=NQN,psk=NVMeTLSkey-1:...} or {@code host=NQN,psk-file=PATH},
     * optionally {@code ,subsystem=NQN} and {@code ,derivation=rfc8446|compat}.
     *
     * @throws IllegalArgumentException naming what is wrong (never the key)
     */
    public static TlsKeyConfig parse(String spec) {
        String host = null;
        String subsys = null;
        String psk = null;
        String file = null;
        PskDerivation derivation = null;
        for (String part : spec.split(",")) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--tls-key takes host=NQN,psk=KEY|psk-file=PATH[,subsystem=NQN]"
                        + "[,derivation=rfc8446|compat]; bad part "
                        + (part.startsWith("NVMeTLSkey") ? "(a key)" : "'" + part + "'"));
            }
            String k = part.substring(0, eq);
            String v = part.substring(eq + 1);
            switch (k) {
                case "host" -> host = v;
                case "subsystem" -> subsys = v;
                case "psk" -> psk = v;
                case "psk-file" -> file = v;
                case "derivation" -> derivation = PskDerivation.ofConfigName(v);
                default -> throw new IllegalArgumentException("--tls-key: unknown part '" + k + "'");
            }
        }
        if ((psk == null) == (file == null)) {
            throw new IllegalArgumentException("--tls-key needs exactly one of psk= and psk-file=");
        }
        return new TlsKeyConfig(
                host, subsys, psk != null ? ConfiguredPsk.parse(psk) : readKeyFile(Path.of(file)), derivation);
    }

    /** Reads a file holding one key in the interchange format (as {@code nvme gen-tls-key > FILE} writes it). */
    public static ConfiguredPsk readKeyFile(Path file) {
        try {
            return ConfiguredPsk.parse(Files.readString(file).strip());
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read TLS key file " + file + ": " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("TLS key file " + file + ": " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "TlsKeyConfig[host " + hostNqn + (subsysNqn == null ? "" : ", subsystem " + subsysNqn) + ", " + psk
                + ", " + derivation.configName() + "]";
    }
}

package io.nvmeof.core.tls;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Configured PSK → retained PSK → TLS PSK, and the version 1 PSK digest (NVMe/TCP Transport §3.6.1.3–§3.6.1.4,
 * TP 8011), computed as libnvme computes them for {@code nvme gen-tls-key --insert} and {@code nvme connect --tls}:
 *
 * <pre>
 *   retained = HKDF-Expand-Label(HKDF-Extract(0, configured), "HostNQN", hostnqn, len)   (hmac 0: retained = configured)
 *   digest   = base64(HMAC-H(retained, hostnqn + " " + subsysnqn + " NVMe-over-Fabrics"))           (version 1 only)
 *   TLS PSK  = HKDF-Expand-Label(HKDF-Extract(0, retained), "nvme-tls-psk", context, len)
 *              context = the whole identity (version 0), or "HH " + digest (version 1)
 * </pre>
 *
 * with H the identity's hash, len the key length. Two encodings of the HkdfLabel exist in the field, hence the two
 * constants: {@link #RFC8446} (RFC 8446 §7.1: a big-endian length and length-prefixed label and context; libnvme 1.16
 * and later, nvme-cli 2.16 and later by default) and {@link #LIBNVME_COMPAT} (a little-endian length and no length
 * prefixes; libnvme up to 1.15, so nvme-cli 2.13 in Debian 13, and {@code --compat} in later nvme-cli). Both sides of
 * a connection must use the same one; a version 1 identity's digest tells them apart ({@link #matchingDigest}).
 */
public enum PskDerivation {
    RFC8446,
    LIBNVME_COMPAT;

    private static final byte[] HMAC_SEED = ascii("NVMe-over-Fabrics");

    /** The retained PSK (hmac 0: the configured key itself). */
    public byte[] retainedPsk(ConfiguredPsk configured, String hostNqn) {
        byte[] key = configured.keyRef();
        if (configured.hmac() == 0) {
            return key.clone();
        }
        return expandLabel(configured.hash(), extract(configured.hash(), key), "HostNQN", ascii(hostNqn), key.length);
    }

    /** The version 1 PSK digest, base64 with padding, as in the identity. */
    public String digest(PskHash hash, byte[] retained, String hostNqn, String subsysNqn) {
        Mac mac = mac(hash, retained);
        mac.update(ascii(hostNqn));
        mac.update((byte) ' ');
        mac.update(ascii(subsysNqn));
        mac.update((byte) ' ');
        mac.update(HMAC_SEED);
        return Base64.getEncoder().encodeToString(mac.doFinal());
    }

    /** The identity and TLS PSK for {@code configured} between this host and subsystem. */
    public TlsPsk tlsPsk(ConfiguredPsk configured, String hostNqn, String subsysNqn, int identityVersion) {
        PskHash hash = configured.hash();
        byte[] retained = retainedPsk(configured, hostNqn);
        try {
            String digest = identityVersion == 1 ? digest(hash, retained, hostNqn, subsysNqn) : null;
            PskIdentity identity = new PskIdentity(identityVersion, false, hash, hostNqn, subsysNqn, digest);
            byte[] context =
                    identityVersion == 0 ? ascii(identity.wire()) : ascii(String.format("%02d ", hash.code()) + digest);
            byte[] psk = expandLabel(hash, extract(hash, retained), "nvme-tls-psk", context, retained.length);
            try {
                return new TlsPsk(identity, psk);
            } finally {
                Arrays.fill(psk, (byte) 0);
            }
        } finally {
            Arrays.fill(retained, (byte) 0);
        }
    }

    /**
     * The derivation whose digest for {@code configured} equals the one in a version 1 {@code identity}, or null if
     * neither does (the client has another key).
     */
    public static PskDerivation matchingDigest(ConfiguredPsk configured, PskIdentity identity) {
        if (identity.version() != 1 || identity.hash() != configured.hash()) {
            return null;
        }
        byte[] offered = ascii(identity.digest());
        for (PskDerivation d : values()) {
            byte[] retained = d.retainedPsk(configured, identity.hostNqn());
            String mine = d.digest(identity.hash(), retained, identity.hostNqn(), identity.subsysNqn());
            Arrays.fill(retained, (byte) 0);
            if (MessageDigest.isEqual(ascii(mine), offered)) {
                return d;
            }
        }
        return null;
    }

    /** The name used in configuration: "rfc8446" or "compat". */
    public String configName() {
        return this == RFC8446 ? "rfc8446" : "compat";
    }

    /** "rfc8446" or "compat" (as nvme-cli's {@code --compat}). */
    public static PskDerivation ofConfigName(String name) {
        if ("rfc8446".equalsIgnoreCase(name)) {
            return RFC8446;
        }
        if ("compat".equalsIgnoreCase(name)) {
            return LIBNVME_COMPAT;
        }
        throw new IllegalArgumentException("PSK derivation is rfc8446 or compat, not " + name);
    }

    /** HKDF-Extract with a zero salt (RFC 5869 §2.2: a string of HashLen zeros). */
    static byte[] extract(PskHash hash, byte[] ikm) {
        return mac(hash, new byte[hash.length()]).doFinal(ikm);
    }

    /** HKDF-Expand(prk, HkdfLabel, length) with this constant's encoding of the label. */
    byte[] expandLabel(PskHash hash, byte[] prk, String label, byte[] context, int length) {
        ByteArrayOutputStream info = new ByteArrayOutputStream();
        byte[] fullLabel = ascii("tls13 " + label);
        if (this == RFC8446) {
            info.write(length >>> 8);
            info.write(length);
            info.write(fullLabel.length);
            info.writeBytes(fullLabel);
            info.write(context.length);
            info.writeBytes(context);
        } else {
            info.write(length);
            info.write(length >>> 8);
            info.writeBytes(fullLabel);
            info.writeBytes(context);
        }
        try {
            return expand(hash, prk, info.toByteArray(), length);
        } finally {
            Arrays.fill(prk, (byte) 0);
        }
    }

    /** HKDF-Expand (RFC 5869 §2.3). */
    static byte[] expand(PskHash hash, byte[] prk, byte[] info, int length) {
        Mac mac = mac(hash, prk);
        byte[] out = new byte[length];
        byte[] t = new byte[0];
        int done = 0;
        for (int i = 1; done < length; i++) {
            mac.update(t);
            mac.update(info);
            mac.update((byte) i);
            t = mac.doFinal();
            int n = Math.min(t.length, length - done);
            System.arraycopy(t, 0, out, done, n);
            done += n;
        }
        Arrays.fill(t, (byte) 0);
        return out;
    }

    private static Mac mac(PskHash hash, byte[] key) {
        try {
            Mac mac = Mac.getInstance(hash.hmacAlgorithm());
            mac.init(new SecretKeySpec(key, hash.hmacAlgorithm()));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(hash.hmacAlgorithm() + " is not available in this JDK", e);
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}

package io.nvmeof.initiator.cli;

import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.initiator.HostIdentity;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nvmeof gen-dhchap-key}: a DH-HMAC-CHAP secret in the {@code DHHC-1} representation, made as nvme-cli 2.x's
 * {@code nvme gen-dhchap-key} makes it (same options): a random secret (or {@code --secret}); with {@code --hmac} 1–3
 * it is transformed with the host NQN and labelled with that hash, without it used as it is (docs/security.md).
 */
@Command(
        name = "gen-dhchap-key",
        mixinStandardHelpOptions = true,
        description = "Generate a DH-HMAC-CHAP secret (DHHC-1:hh:BASE64:) for NVMe in-band authentication, as "
                + "nvme gen-dhchap-key does.")
final class GenDhchapKeyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = {"-s", "--secret"},
            paramLabel = "HEX",
            description = "The secret, in hexadecimal (default: random).")
    String secret;

    @Option(
            names = {"-l", "--key-length"},
            paramLabel = "BYTES",
            description = "32, 48 or 64 (default: the hash's length, or 32).")
    int keyLength;

    @Option(
            names = {"-m", "--hmac"},
            paramLabel = "N",
            description = "Transformation hash: 0 none (default), 1 SHA-256, 2 SHA-384, 3 SHA-512.")
    int hmac;

    @Option(
            names = {"-n", "--nqn"},
            paramLabel = "HOSTNQN",
            description = "Host NQN the transformation uses (default: this host's, /etc/nvme/hostnqn).")
    String nqn;

    @Override
    public Integer call() {
        if (hmac < 0 || hmac > 3) {
            throw new IllegalArgumentException("--hmac must be 0..3, not " + hmac);
        }
        DhchapHash hash = hmac == 0 ? null : DhchapHash.of(hmac);
        int length = keyLength != 0 ? keyLength : hash != null ? hash.length() : 32;
        if (length != 32 && length != 48 && length != 64) {
            throw new IllegalArgumentException("--key-length must be 32, 48 or 64, not " + length);
        }
        if (hash != null && length != hash.length()) {
            throw new IllegalArgumentException(
                    "--key-length " + length + " does not fit --hmac " + hmac + " (" + hash.length() + " bytes)");
        }
        byte[] raw;
        if (secret != null) {
            try {
                raw = HexFormat.of().parseHex(secret.trim());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--secret must be hexadecimal");
            }
            if (raw.length != length) {
                throw new IllegalArgumentException(
                        "--secret has " + raw.length + " bytes, --key-length asks for " + length);
            }
        } else {
            raw = new byte[length];
            new SecureRandom().nextBytes(raw);
        }
        String hostNqn = nqn != null ? nqn : HostIdentity.defaultHostNqn();
        spec.commandLine()
                .getOut()
                .println(DhchapSecret.generate(raw, hash, hostNqn).encode());
        spec.commandLine().getOut().flush();
        return 0;
    }
}

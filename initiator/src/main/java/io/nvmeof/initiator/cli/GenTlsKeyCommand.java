package io.nvmeof.initiator.cli;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskHash;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nvmeof gen-tls-key [--hmac 1|2] [--secret HEX]}: a configured TLS PSK in the interchange format, as
 * {@code nvme gen-tls-key} prints it (without its keyring options: this host keeps keys in files).
 */
@Command(
        name = "gen-tls-key",
        mixinStandardHelpOptions = true,
        description = "Print a new TLS PSK in the NVMe PSK interchange format (NVMeTLSkey-1:01:...:), as nvme "
                + "gen-tls-key does. Keep it secret: write it to a file with mode 0600.")
final class GenTlsKeyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = {"-m", "--hmac"},
            paramLabel = "N",
            description = "Hash of the retained key: 1 = SHA-256 (32-byte key), 2 = SHA-384 (48-byte key); default 1")
    int hmac = 1;

    @Option(
            names = {"-s", "--secret"},
            paramLabel = "HEX",
            description = "The key bytes in hexadecimal (64 or 96 digits) instead of random ones")
    String secret;

    @Override
    public Integer call() {
        if (hmac != 1 && hmac != 2) {
            throw new IllegalArgumentException("--hmac is 1 (SHA-256) or 2 (SHA-384), not " + hmac);
        }
        PskHash hash = PskHash.ofCode(hmac);
        ConfiguredPsk key;
        if (secret == null) {
            key = ConfiguredPsk.generate(hash, new SecureRandom());
        } else {
            byte[] bytes;
            try {
                bytes = HexFormat.of().parseHex(secret);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--secret is not hexadecimal");
            }
            if (bytes.length != hash.length()) {
                throw new IllegalArgumentException(
                        "--secret has " + bytes.length + " bytes; --hmac " + hmac + " needs " + hash.length());
            }
            key = ConfiguredPsk.of(hmac, bytes);
        }
        spec.commandLine().getOut().println(key.interchange());
        spec.commandLine().getOut().flush();
        return 0;
    }
}

package io.nvmeof.initiator.cli;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nvmeof check-tls-key --keydata KEY [--hostnqn H --subsysnqn S [--identity 0|1] [--compat]]}: checks a key in
 * the interchange format (prefix, hash, length, CRC-32) and prints the PSK identity it gives a host and subsystem, as
 * {@code nvme check-tls-key} does. The key itself is never printed.
 */
@Command(
        name = "check-tls-key",
        mixinStandardHelpOptions = true,
        description = "Check a TLS PSK in the NVMe PSK interchange format and print its PSK identity for a host and "
                + "subsystem, as nvme check-tls-key does.")
final class CheckTlsKeyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = {"-d", "--keydata"},
            paramLabel = "KEY",
            required = true,
            description = "The key, NVMeTLSkey-1:HH:BASE64:")
    String keydata;

    @Option(
            names = {"-n", "--hostnqn"},
            paramLabel = "NQN",
            description = "Host NQN (with --subsysnqn: print the PSK identity)")
    String hostnqn;

    @Option(
            names = {"-c", "--subsysnqn"},
            paramLabel = "NQN",
            description = "Subsystem NQN")
    String subsysnqn;

    @Option(
            names = {"-I", "--identity"},
            paramLabel = "V",
            description = "PSK identity version: 0 (NVMe0R0x host subsys, default) or 1 (with the PSK digest)")
    int identity;

    @Option(
            names = {"-C", "--compat"},
            description = "Derive as libnvme before 1.16 did (nvme-cli before 2.16): the HKDF label without length "
                    + "prefixes")
    boolean compat;

    @Override
    public Integer call() {
        ConfiguredPsk key = ConfiguredPsk.parse(keydata);
        var out = spec.commandLine().getOut();
        if ((hostnqn == null) != (subsysnqn == null)) {
            throw new IllegalArgumentException("--hostnqn and --subsysnqn go together");
        }
        if (hostnqn == null) {
            out.printf("valid: hmac %02d, %d-byte key, CRC-32 correct%n", key.hmac(), key.key().length);
        } else {
            PskDerivation d = compat ? PskDerivation.LIBNVME_COMPAT : PskDerivation.RFC8446;
            out.println(key.derive(hostnqn, subsysnqn, identity, d).identity().wire());
        }
        out.flush();
        return 0;
    }
}

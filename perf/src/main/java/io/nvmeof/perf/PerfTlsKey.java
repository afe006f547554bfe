package io.nvmeof.perf;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskHash;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The TLS PSK of the {@code tcp-tls} setups: one random SHA-256 key per run of this tool, in a 0600 temporary file
 * that both the initiator ({@code psk_file=}) and the target daemon it starts ({@code --tls-key ...,psk-file=}) read,
 * so the key is on no command line. Created on first use, deleted when the JVM exits.
 */
final class PerfTlsKey {
    /** The host NQN the tcp-tls setups connect with (the key belongs to it). */
    static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:00000000-7e57-4c5a-9e2f-00000000715a";

    private static Path file;

    private PerfTlsKey() {}

    private static synchronized Path file() {
        if (file == null) {
            try {
                Path f = Files.createTempFile(
                        "nvmeof-perf-psk",
                        ".key",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                f.toFile().deleteOnExit();
                Files.writeString(
                        f,
                        ConfiguredPsk.generate(PskHash.SHA256, new SecureRandom())
                                        .interchange() + "\n");
                file = f;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the tcp-tls setups' key file", e);
            }
        }
        return file;
    }

    static Map<String, String> uriOptions(boolean digests) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("hostnqn", HOST_NQN);
        m.put("psk_file", file().toString());
        if (digests) {
            m.put("digest", "header,data");
        }
        return m;
    }

    static List<String> targetArgs() {
        return List.of("--tls", "required", "--tls-key", "host=" + HOST_NQN + ",psk-file=" + file());
    }
}

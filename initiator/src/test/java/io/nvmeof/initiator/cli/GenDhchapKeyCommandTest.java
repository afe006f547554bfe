package io.nvmeof.initiator.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.auth.DhchapSecret;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code nvmeof gen-dhchap-key}: nvme-cli 2.x's output for a fixed secret, random keys, and its argument checks. */
class GenDhchapKeyCommandTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
    static final String SECRET = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    private record Run(int code, String out, String err) {}

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = NvmeofCli.run(
                new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                args);
        return new Run(code, out.toString(StandardCharsets.UTF_8).trim(), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void fixedSecretAsNvmeCliMakesIt() {
        // The values of DhchapSecretTest (computed independently): untransformed, and transformed with SHA-256.
        assertEquals(
                "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
                run("gen-dhchap-key", "--secret", SECRET).out());
        assertEquals(
                "DHHC-1:01:bOHk6jHoMxpP5YJr/eF6XNOGuPAzh0iRniebpsVb9ydqVuR5:",
                run("gen-dhchap-key", "--secret", SECRET, "--hmac", "1", "--nqn", HOST)
                        .out());
    }

    @Test
    void randomKeysOfEachLength() {
        for (String[] a : new String[][] {{"--hmac", "2"}, {"--hmac", "3"}, {"--key-length", "64"}}) {
            String[] args = new String[a.length + 3];
            args[0] = "gen-dhchap-key";
            System.arraycopy(a, 0, args, 1, a.length);
            args[a.length + 1] = "--nqn";
            args[a.length + 2] = HOST;
            Run r = run(args);
            assertEquals(0, r.code(), r.err());
            DhchapSecret s = DhchapSecret.parse(r.out());
            assertEquals(a[0].equals("--hmac") ? 32 + 16 * (Integer.parseInt(a[1]) - 1) : 64, s.length());
        }
        assertTrue(!run("gen-dhchap-key").out().equals(run("gen-dhchap-key").out()), "random");
    }

    @Test
    void badArguments() {
        assertEquals(2, run("gen-dhchap-key", "--hmac", "4").code());
        assertEquals(
                2,
                run("gen-dhchap-key", "--hmac", "1", "--key-length", "64", "--nqn", HOST)
                        .code());
        assertEquals(2, run("gen-dhchap-key", "--secret", "zz").code());
        assertEquals(2, run("gen-dhchap-key", "--secret", "0011").code());
    }
}

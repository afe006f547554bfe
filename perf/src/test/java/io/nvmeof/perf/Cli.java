package io.nvmeof.perf;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs nvmeof-perf in this JVM and keeps what it printed. */
record Cli(int exit, String out, String err) {
    static Cli run(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = PerfCli.run(
                new PrintStream(o, true, StandardCharsets.UTF_8),
                new PrintStream(e, true, StandardCharsets.UTF_8),
                args);
        return new Cli(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "exit " + exit + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
    }
}

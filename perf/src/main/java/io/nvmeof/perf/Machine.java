package io.nvmeof.perf;

import java.nio.file.Files;
import java.nio.file.Path;

/** The machine a result was measured on: CPU model and cores, for reports. */
public record Machine(String cpuModel, int cores, String os, String java) {
    public static Machine here() {
        String model = "unknown CPU";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    model = line.substring(line.indexOf(':') + 1).trim().replaceAll("\\s+", " ");
                    break;
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux
        }
        return new Machine(
                model,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("os.name") + " " + System.getProperty("os.version"),
                "Java " + System.getProperty("java.version"));
    }

    @Override
    public String toString() {
        return cpuModel + ", " + cores + " core" + (cores == 1 ? "" : "s") + ", " + os + ", " + java;
    }
}

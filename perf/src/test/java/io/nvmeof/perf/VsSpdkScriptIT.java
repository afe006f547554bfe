package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.testkit.peervm.PeerVm;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code perf/vs-spdk.sh} with {@code ORDER=cells}, run as a user runs it, with our columns only (no SPDK tree here):
 * both modes of our target are started and filled once, the one not measured is paused while the other runs, two
 * rounds measure the cell in opposite column order, and no target outlives the script. Failsafe runs this after the
 * package phase, so the script finds the perf jar built and builds nothing. Functional: no figure is asserted.
 */
@Timeout(600)
class VsSpdkScriptIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** A free loopback port P with P + 1 free too (the busy and the default target). */
    private static int freePortPair() throws IOException {
        for (int i = 0; i < 50; i++) {
            int p = PeerVm.freePort();
            if (p < 65535) {
                try (ServerSocket s = new ServerSocket(p + 1, 1, InetAddress.getLoopbackAddress())) {
                    return p;
                } catch (IOException busy) {
                    // try another pair
                }
            }
        }
        throw new IOException("no two consecutive free ports");
    }

    /** Our target processes listening on {@code port}, by their command line. */
    private static List<ProcessHandle> targetsOn(int port) {
        String listen = "--listen tcp://127.0.0.1:" + port + " ";
        List<ProcessHandle> found = new ArrayList<>();
        ProcessHandle.allProcesses().forEach(p -> {
            Optional<String> cmd = p.info().commandLine();
            if (cmd.isPresent()
                    && cmd.get().contains("TargetDaemon")
                    && cmd.get().contains(listen)) {
                found.add(p);
            }
        });
        return found;
    }

    /** The state letter of /proc/PID/stat (R, S, T for stopped ...), or '?' if the process is gone. */
    private static char state(ProcessHandle p) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException | RuntimeException gone) {
            return '?';
        }
    }

    @Test
    void cellsOrderPausesTheTargetNotMeasuredAndAlternatesTheColumns(@TempDir Path out) throws Exception {
        int port = freePortPair();
        boolean twoCores = Runtime.getRuntime().availableProcessors() >= 2;
        ProcessBuilder pb = new ProcessBuilder(
                        "bash", ROOT.resolve("perf/vs-spdk.sh").toString(), out.toString())
                .redirectOutput(out.resolve("stdout.txt").toFile())
                .redirectError(out.resolve("stderr.txt").toFile());
        pb.environment().remove("SPDK_DIR");
        pb.environment().put("ORDER", "cells");
        pb.environment().put("CELLS", "qd1");
        pb.environment().put("ROUNDS", "2");
        pb.environment().put("RUNTIME", "1");
        pb.environment().put("RAMP", "1");
        pb.environment().put("PORT", Integer.toString(port));
        pb.environment().put("TARGET_CPU", twoCores ? "1" : "0");
        pb.environment().put("PERF_CPU", "0");
        Process script = pb.start();
        // While it runs: was one target ever stopped while the other was not?
        boolean onePaused = false;
        while (!script.waitFor(100, TimeUnit.MILLISECONDS)) {
            List<ProcessHandle> busy = targetsOn(port);
            List<ProcessHandle> dflt = targetsOn(port + 1);
            if (busy.size() == 1 && dflt.size() == 1) {
                char b = state(busy.get(0));
                char d = state(dflt.get(0));
                onePaused |= (b == 'T') != (d == 'T') && b != '?' && d != '?';
            }
        }
        String err = Files.readString(out.resolve("stderr.txt"));
        assertEquals(0, script.exitValue(), err);
        assertTrue(onePaused, "never saw one target paused (T) and the other not:\n" + err);
        assertTrue(targetsOn(port).isEmpty() && targetsOn(port + 1).isEmpty(), "a target outlived the script");

        // Both targets started and filled once, before the first round; each logged one start.
        assertTrue(err.indexOf("round 1 of 2") > err.lastIndexOf("fill wrote"), err);
        for (String mode : List.of("busy", "default")) {
            String log = Files.readString(out.resolve("targets/target-ours-" + mode + ".log"));
            assertEquals(1, log.split("ready \\(Ctrl-C to stop\\)", -1).length - 1, log);
        }
        // Round 1 in the table's order, round 2 reversed.
        List<String> runs = err.lines()
                .filter(l -> l.matches("vs-spdk\\.sh: ours-(busy|default)-qd1"))
                .map(l -> l.substring("vs-spdk.sh: ".length()))
                .toList();
        assertEquals(List.of("ours-busy-qd1", "ours-default-qd1", "ours-default-qd1", "ours-busy-qd1"), runs, err);
        // Every run did I/O (a target left paused would have served none), and the tables have both rounds.
        ObjectMapper json = new ObjectMapper();
        for (String round : List.of("r1", "r2")) {
            for (String mode : List.of("busy", "default")) {
                Path result = out.resolve(round).resolve("ours-" + mode + "-qd1.json");
                double iops = json.readTree(result.toFile())
                        .path("jobs")
                        .path(0)
                        .path("read")
                        .path("iops")
                        .asDouble();
                assertTrue(iops > 0, result + ": " + iops);
                // and the machine's TCP retransmissions during the run were counted (/proc/net/snmp)
                Path retrans = out.resolve(round).resolve("ours-" + mode + "-qd1.retrans");
                assertTrue(Long.parseLong(Files.readString(retrans).trim()) >= 0, retrans.toString());
            }
        }
        String tables = Files.readString(out.resolve("results.md"));
        assertTrue(tables.contains("### Round 1") && tables.contains("### Round 2"), tables);
        String cc = Files.readString(Path.of("/proc/sys/net/ipv4/tcp_congestion_control"))
                .trim();
        assertTrue(tables.contains("TCP congestion control: " + cc + " "), tables);
    }
}

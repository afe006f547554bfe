package io.nvmeof.target.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.target.rpc.RpcCli;
import io.nvmeof.target.rpc.RpcClient;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The daemon with its RPC socket: --config in SPDK's shape, the nvmeof-rpc CLI, and save_config → restart with that
 * file → the same state. Also measures the RPC round trip (median of 1000 spdk_get_version calls on one connection).
 */
class RpcDaemonTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String NQN = "nqn.2016-06.io.spdk:cnode1";

    @TempDir
    Path dir;

    record Running(TargetDaemon daemon, CompletableFuture<Integer> exit, StringWriter out, StringWriter err) {}

    Running start(String... args) {
        TargetDaemon d = new TargetDaemon();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = TargetDaemon.commandLine(d);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> cl.execute(args));
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            while (!out.toString().contains("ready") && !exit.isDone()) {
                Thread.sleep(20);
            }
        });
        assertTrue(out.toString().contains("ready"), out + " / " + err);
        return new Running(d, exit, out, err);
    }

    int cli(StringWriter out, StringWriter err, String... args) {
        return RpcCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    }

    @Test
    void spdkConfigCliSaveAndRestart() throws Exception {
        Path config = dir.resolve("spdk.json");
        Files.writeString(config, """
                {"subsystems":[
                  {"subsystem":"sock","config":[{"method":"sock_impl_set_options","params":{"impl_name":"posix"}}]},
                  {"subsystem":"bdev","config":[
                    {"method":"bdev_set_options","params":{"bdev_io_pool_size":65535}},
                    {"method":"bdev_malloc_create","params":{"name":"Malloc0","num_blocks":2048,"block_size":512}}]},
                  {"subsystem":"nvmf","config":[
                    {"method":"nvmf_create_transport","params":{"trtype":"TCP","max_queue_depth":64}},
                    {"method":"nvmf_create_subsystem","params":{"nqn":"%s","serial_number":"SPDK001"}},
                    {"method":"nvmf_subsystem_add_host","params":{"nqn":"%s","host":"nqn.2014-08.org.nvmexpress:uuid:1"}},
                    {"method":"nvmf_subsystem_add_ns","params":{"nqn":"%s","namespace":{"bdev_name":"Malloc0","nsid":3}}},
                    {"method":"nvmf_subsystem_add_listener","params":{"nqn":"%s",
                      "listen_address":{"trtype":"TCP","adrfam":"IPv4","traddr":"127.0.0.1","trsvcid":"0"}}}]}]}
                """.formatted(NQN, NQN, NQN, NQN));
        Path socket = dir.resolve("a.sock");
        Running a = start("--config", config.toString(), "--rpc-socket", socket.toString());
        assertEquals(3, a.daemon().target().subsystem(NQN).namespaces().get(0).nsid());

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertEquals(
                0,
                cli(
                        out,
                        err,
                        "-s",
                        socket.toString(),
                        "bdev_malloc_create",
                        "--name",
                        "M1",
                        "--num-blocks",
                        "64",
                        "--block_size",
                        "512"));
        assertTrue(out.toString().contains("M1"), out.toString());
        assertEquals(
                1, cli(out, err, "-s", socket.toString(), "bdev_malloc_create", "--name", "M1", "--num_blocks", "64"));
        assertTrue(err.toString().contains("error -17") && err.toString().contains("exists"), err.toString());
        assertEquals(
                0,
                cli(
                        out,
                        err,
                        "-s",
                        socket.toString(),
                        "nvmf_subsystem_add_ns",
                        "--nqn",
                        NQN,
                        "--namespace.bdev_name",
                        "M1"));
        assertEquals(
                0,
                cli(
                        out,
                        err,
                        "-s",
                        socket.toString(),
                        "nvmf_subsystem_allow_any_host",
                        "-j",
                        "{\"nqn\":\"" + NQN + "\",\"allow_any_host\":false}"));
        assertEquals(1, cli(out, err, "-s", socket.toString(), "no_such_method"));
        assertTrue(err.toString().contains("-32601"), err.toString());
        assertEquals(2, cli(out, err, "-s", socket.toString(), "bdev_get_bdevs", "oops"));
        assertEquals(1, cli(out, err, "-s", dir.resolve("nothing.sock").toString(), "spdk_get_version"));
        StringWriter help = new StringWriter();
        assertEquals(0, cli(help, err, "--help"));
        assertTrue(help.toString().contains("nvmf_subsystem_listener_set_ana_state"), help.toString());

        JsonNode saved;
        JsonNode subsystems;
        JsonNode bdevs;
        try (RpcClient c = RpcClient.unix(socket)) {
            long[] nanos = new long[1000];
            for (int i = 0; i < nanos.length; i++) {
                long t = System.nanoTime();
                c.call("spdk_get_version", null);
                nanos[i] = System.nanoTime() - t;
            }
            Arrays.sort(nanos);
            System.out.printf(
                    "RPC round trip (spdk_get_version, 1000 calls, one connection): median %.1f us, p99 %.1f us%n",
                    nanos[500] / 1e3, nanos[990] / 1e3);
            saved = c.call("save_config", null);
            subsystems = c.call("nvmf_get_subsystems", null);
            bdevs = c.call("bdev_get_bdevs", null);
        }
        a.daemon().stop();
        assertEquals(0, a.exit().get(20, TimeUnit.SECONDS));
        assertTrue(Files.notExists(socket), "the socket file is removed at stop");

        Path savedFile = dir.resolve("saved.json");
        Files.writeString(savedFile, saved.toPrettyString());
        Path socket2 = dir.resolve("b.sock");
        Running b = start("--config", savedFile.toString(), "--rpc-socket", socket2.toString());
        try (RpcClient c = RpcClient.unix(socket2)) {
            assertEquals(
                    subsystems.toString(), c.call("nvmf_get_subsystems", null).toString());
            assertEquals(bdevs.toString(), c.call("bdev_get_bdevs", null).toString());
        }
        // A second daemon on a socket that answers is refused; the first keeps it.
        StringWriter err2 = new StringWriter();
        CommandLine cl = TargetDaemon.commandLine(new TargetDaemon());
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(err2, true));
        assertEquals(
                1,
                cl.execute(
                        "--listen", "tcp://127.0.0.1:0", "--namespace", "size=1M", "--rpc-socket", socket2.toString()));
        assertTrue(err2.toString().contains("in use"), err2.toString());
        b.daemon().stop();
        assertEquals(0, b.exit().get(20, TimeUnit.SECONDS));
    }

    @Test
    void badRpcFlagsExitTwo() {
        StringWriter err = new StringWriter();
        CommandLine cl = TargetDaemon.commandLine(new TargetDaemon());
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(err, true));
        assertEquals(
                2,
                cl.execute(
                        "--listen",
                        "tcp://127.0.0.1:0",
                        "--namespace",
                        "size=1M",
                        "--no-rpc",
                        "--rpc-listen",
                        "192.0.2.1:5260"));
        assertEquals(
                2,
                cl.execute(
                        "--listen",
                        "tcp://127.0.0.1:0",
                        "--namespace",
                        "size=1M",
                        "--rpc-socket",
                        dir.resolve("x.sock").toString(),
                        "--rpc-listen",
                        "192.0.2.1:5260"));
        assertTrue(err.toString().contains("--rpc-allow-remote"), err.toString());
    }
}

package io.nvmeof.initiator.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Every verb's human and JSON output against an in-JVM target; bad arguments exit 2, connection failures 1. */
class NvmeofCliTest {
    @RegisterExtension
    static NvmeofTargetExtension target = NvmeofTargetExtension.builder()
            .namespace("8M")
            .namespace("1M", 512)
            .subsystem("nqn.2024-01.io.nvmeof:other", "1M")
            .build();

    static final ObjectMapper JSON = new ObjectMapper();

    record Result(int code, String out, byte[] outBytes, String err) {}

    static Result run(byte[] stdin, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = NvmeofCli.run(
                new ByteArrayInputStream(stdin), new PrintStream(out, true), new PrintStream(err, true), args);
        return new Result(
                code, out.toString(StandardCharsets.UTF_8), out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }

    static Result run(String... args) {
        return run(new byte[0], args);
    }

    @Test
    void discoverHuman() {
        Result r = run("discover", target.discoveryUri());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("Discovery Log Number of Records 3, Generation counter "), r.out());
        assertTrue(r.out().contains("=====Discovery Log Entry 0======"), r.out());
        assertTrue(r.out().contains("=====Discovery Log Entry 2======"), r.out());
        assertTrue(r.out().contains("subtype: current discovery subsystem"), r.out());
        assertTrue(r.out().contains("subnqn:  " + target.nqn()), r.out());
        assertTrue(r.out().contains("trsvcid: " + target.port()), r.out());
        assertTrue(r.out().contains("traddr:  127.0.0.1"), r.out());
        assertTrue(r.out().contains("trtype:  tcp"), r.out());
    }

    @Test
    void discoverJson() throws Exception {
        Result r = run("discover", target.discoveryUri(), "--output-format", "json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = JSON.readTree(r.out());
        assertEquals(3, root.get("records").size());
        assertTrue(root.get("genctr").asLong() > 0);
        JsonNode e = root.get("records").get(1);
        assertEquals("nvme subsystem", e.get("subtype").asText());
        assertEquals(target.nqn(), e.get("subnqn").asText());
        assertEquals("ipv4", e.get("adrfam").asText());
    }

    @Test
    void listHumanAndJson() throws Exception {
        Result r = run("list", target.uri());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("Subsystem " + target.nqn()), r.out());
        assertTrue(r.out().contains("Model nvmeof-java"), r.out());
        assertTrue(
                r.out().lines().anyMatch(l -> l.startsWith("1 ") && l.contains("8.00 MiB") && l.contains("4096 B")),
                r.out());
        assertTrue(
                r.out().lines().anyMatch(l -> l.startsWith("2 ") && l.contains("1.00 MiB") && l.contains("512 B")),
                r.out());

        JsonNode root = JSON.readTree(run("list", target.uri(), "-o", "json").out());
        assertEquals(target.nqn(), root.get("subnqn").asText());
        assertEquals(2, root.get("namespaces").size());
        assertEquals(8 << 20, root.get("namespaces").get(0).get("size_bytes").asLong());
        assertEquals(512, root.get("namespaces").get(1).get("block_size").asInt());
    }

    @Test
    void idCtrlHumanAndJson() throws Exception {
        Result r = run("id-ctrl", target.uri());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().startsWith("NVME Identify Controller:"), r.out());
        assertTrue(r.out().contains("mn        : nvmeof-java"), r.out());
        assertTrue(r.out().contains("subnqn    : " + target.nqn()), r.out());
        assertTrue(r.out().contains("kas       : 10"), r.out());
        JsonNode j = JSON.readTree(run("id-ctrl", target.uri(), "-o", "json").out());
        assertEquals("nvmeof-java", j.get("mn").asText());
        assertEquals(1028, j.get("ioccsz").asInt());
        // a discovery controller can be identified too
        JsonNode d = JSON.readTree(
                run("id-ctrl", target.discoveryUri(), "-o", "json").out());
        assertEquals(2, d.get("cntrltype").asInt());
    }

    @Test
    void idNsHumanAndJson() throws Exception {
        Result r = run("id-ns", target.uri(), "-n", "2");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().startsWith("NVME Identify Namespace 2:"), r.out());
        assertTrue(r.out().contains("nsze      : 2048"), r.out());
        assertTrue(r.out().contains("lbads     : 9"), r.out());
        JsonNode j = JSON.readTree(
                run("id-ns", target.uri(), "--namespace-id", "1", "-o", "json").out());
        assertEquals(2048, j.get("nsze").asLong());
        assertEquals(12, j.get("lbads").asInt());
        assertEquals(1, j.get("nsid").asInt());
    }

    @Test
    void writeAndReadThroughFilesAndStdio(@TempDir Path dir) throws Exception {
        byte[] data = new byte[10_000]; // not a whole number of blocks: the write pads, the read trims
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 11 + 3);
        }
        Path in = dir.resolve("in");
        Files.write(in, data);
        Result w = run("write", target.uri(), "--start-block", "20", "--data-size", "10000", "--data", in.toString());
        assertEquals(0, w.code(), w.err());
        assertEquals("write: Success", w.out().trim());

        Result r = run("read", target.uri(), "-s", "20", "-z", "10000");
        assertEquals(0, r.code(), r.err());
        assertArrayEquals(data, r.outBytes(), "stdout is exactly the data");
        assertTrue(r.err().contains("read: Success"));

        Path outFile = dir.resolve("out");
        Result rj = run("read", target.uri(), "-s", "20", "-z", "12288", "-d", outFile.toString(), "-o", "json");
        assertEquals(0, rj.code(), rj.err());
        JsonNode j = JSON.readTree(rj.out());
        assertEquals(3, j.get("blocks").asInt());
        byte[] back = Files.readAllBytes(outFile);
        assertArrayEquals(data, Arrays.copyOf(back, data.length));
        for (int i = data.length; i < back.length; i++) {
            assertEquals(0, back[i], "padding");
        }

        // stdin → 512-byte namespace
        byte[] small = Arrays.copyOf(data, 1024);
        Result ws = run(small, "write", target.uri("nsid=2"), "-s", "0", "-z", "1024", "-o", "json");
        assertEquals(0, ws.code(), ws.err());
        assertEquals(2, JSON.readTree(ws.out()).get("blocks").asInt());
        assertArrayEquals(
                small,
                run("read", target.uri(), "-n", "2", "-s", "0", "-z", "1024").outBytes());
    }

    @Test
    void badArgumentsExit2() {
        String[][] cases = {
            {"frobnicate"},
            {"discover"},
            {"discover", "http://nope"},
            {"list", "nvme+tcp://127.0.0.1:" + 1 + "/nqn.a:b?queues=0"},
            {"list", target.discoveryUri()},
            {"read", target.uri(), "-z", "4096"},
            {"read", target.uri(), "-s", "0", "-z", "0"},
            {"read", target.uri(), "-s", "x", "-z", "4096"},
            {"read", target.uri(), "-s", "2048", "-z", "4096"},
            {"write", target.uri(), "-s", "0", "-z", "4096", "-d", "/nonexistent/file"},
            {"id-ns", target.uri(), "-n", "0"},
            {"discover", target.discoveryUri(), "-o", "yaml"},
        };
        for (String[] args : cases) {
            Result r = run(args);
            assertEquals(2, r.code(), String.join(" ", args) + " → " + r.err());
            assertTrue(!r.err().isBlank(), "a message for " + String.join(" ", args));
        }
        Result r = run(new byte[100], "write", target.uri(), "-s", "0", "-z", "4096");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("has only 100"), r.err());
    }

    @Test
    void connectionFailuresExit1() {
        Result r = run("discover", "nvme+tcp://127.0.0.1:1");
        assertEquals(1, r.code());
        assertTrue(r.err().startsWith("nvmeof: cannot connect the admin queue"), r.err());
        Result ns = run("id-ns", target.uri(), "-n", "9");
        assertEquals(1, ns.code());
        assertTrue(ns.err().contains("namespace 9 is not active"), ns.err());
        Result unknown = run("list", target.discoveryUri() + "/nqn.2024-01.io.nvmeof:missing");
        assertEquals(1, unknown.code());
        assertTrue(unknown.err().contains("Connect Invalid Parameters"), unknown.err());
    }
}

package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.testsupport.TcpProxy;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Short runs against an in-JVM target on a free loopback port: the JSON schema, the human report, verify. */
class RunTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("256M").blockSize(4096).build();

    @Test
    void jsonHasFioFieldNamesAndTypes() throws Exception {
        Cli r = Cli.run(
                "--target",
                target.uri(),
                "--rw=randrw",
                "--rwmixread=70",
                "--bs=4k",
                "--iodepth=4",
                "--numjobs=2",
                "--runtime=400ms",
                "--ramp_time=100ms",
                "--size=16m",
                "--output-format=json",
                "--percentile_list=50:99:99.9");
        assertEquals(0, r.exit(), r.toString());
        JsonNode root = new ObjectMapper().readTree(r.out());
        assertTrue(root.get("fio version").isTextual());
        assertTrue(root.get("timestamp").isIntegralNumber());
        assertTrue(root.get("global options").isObject());
        JsonNode jobs = root.get("jobs");
        assertEquals(2, jobs.size(), "one entry per job without group_reporting");
        long totalIos = 0;
        for (JsonNode job : jobs) {
            assertEquals("job", job.get("jobname").asText());
            assertTrue(job.get("job_runtime").isIntegralNumber());
            assertTrue(job.get("usr_cpu").isNumber());
            assertTrue(job.get("sys_cpu").isNumber());
            assertTrue(job.get("latency_us").isObject());
            assertTrue(job.get("latency_ms").has(">=2000"));
            for (String dir : List.of("read", "write", "trim")) {
                JsonNode d = job.get(dir);
                for (String f : List.of(
                        "io_bytes",
                        "io_kbytes",
                        "bw_bytes",
                        "bw",
                        "runtime",
                        "total_ios",
                        "short_ios",
                        "drop_ios",
                        "bw_min",
                        "bw_max",
                        "bw_samples",
                        "iops_min",
                        "iops_max",
                        "iops_samples")) {
                    assertTrue(d.get(f).isIntegralNumber(), dir + "." + f + " is an integer: " + d.get(f));
                }
                for (String f : List.of("iops", "bw_mean", "bw_dev", "iops_mean", "iops_stddev", "bw_agg")) {
                    assertTrue(d.get(f).isNumber(), dir + "." + f);
                }
                for (String lat : List.of("slat_ns", "clat_ns", "lat_ns")) {
                    JsonNode l = d.get(lat);
                    assertTrue(l.get("min").isIntegralNumber() && l.get("max").isIntegralNumber(), dir + "." + lat);
                    assertTrue(l.get("mean").isNumber() && l.get("stddev").isNumber(), dir + "." + lat);
                    assertTrue(l.get("N").isIntegralNumber());
                }
            }
            JsonNode read = job.get("read");
            assertTrue(read.get("total_ios").asLong() > 0, "reads happened");
            assertTrue(job.get("write").get("total_ios").asLong() > 0, "writes happened");
            assertEquals(0, job.get("trim").get("total_ios").asLong());
            assertEquals(
                    read.get("total_ios").asLong() * 4096, read.get("io_bytes").asLong());
            assertEquals(read.get("bw_bytes").asLong() / 1024, read.get("bw").asLong(), 1.0, "bw is KiB/s");
            JsonNode pct = read.get("clat_ns").get("percentile");
            assertEquals(List.of("50.000000", "99.000000", "99.900000"), iterable(pct.fieldNames()));
            long p50 = pct.get("50.000000").asLong();
            long p99 = pct.get("99.000000").asLong();
            assertTrue(p50 > 0 && p50 <= p99, "percentiles ordered: " + pct);
            assertTrue(read.get("clat_ns").get("min").asLong() <= p50);
            assertTrue(read.get("lat_ns").get("max").asLong()
                    >= read.get("clat_ns").get("max").asLong());
            totalIos += read.get("total_ios").asLong()
                    + job.get("write").get("total_ios").asLong();
        }
        JsonNode n = root.get("nvmeof");
        assertEquals("tcp", n.get("setup").asText());
        assertEquals("tcp", n.get("transport").asText());
        assertFalse(n.get("target_embedded").asBoolean());
        assertTrue(n.get("cpu_us_per_io").get("initiator").isNumber());
        assertTrue(n.get("cpu_us_per_io").get("target").isNumber(), "our target: known over the fabric");
        assertTrue(
                n.get("cpu").get("initiator").get("jit_ms").asLong(-1) >= 0,
                "the JIT's compile time in the window: " + n.get("cpu").get("initiator"));
        JsonNode t = n.get("cpu").get("target");
        assertTrue(t.get("commands").asLong() >= totalIos, "target counted at least the measured I/Os");
        assertTrue(n.get("machine").get("cores").asInt() >= 1);
        assertTrue(n.get("machine").get("cpu_model").isTextual());
    }

    @Test
    void jitLineHintsAtALongerRampWhenTheJitTookMoreThanOnePercentOfTheWindow() {
        long window = 10_000_000_000L; // 10 s
        assertEquals(
                String.format("  jit          : 100 ms compiling in the window%n"), FioOutput.jitLine(100, window));
        String busy = FioOutput.jitLine(101, window);
        assertTrue(busy.startsWith("  jit          : 101 ms compiling in the window (more than 1 %"), busy);
        assertTrue(busy.contains("--ramp_time"), busy);
        assertTrue(FioOutput.jitLine(-1, window).contains("unknown"));
    }

    private static List<String> iterable(java.util.Iterator<String> it) {
        List<String> out = new java.util.ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    @Test
    void groupReportingAndHumanOutput() throws Exception {
        Cli j = Cli.run(
                "--target",
                target.uri(),
                "--rw=read",
                "--bs=128k",
                "--iodepth=2",
                "--numjobs=2",
                "--runtime=300ms",
                "--ramp_time=0",
                "--size=8m",
                "--group_reporting",
                "--output-format=json");
        assertEquals(0, j.exit(), j.toString());
        assertEquals(1, new ObjectMapper().readTree(j.out()).get("jobs").size());
        Cli h = Cli.run(
                "--target",
                target.uri(),
                "--rw=randwrite",
                "--bs=8k",
                "--iodepth=2",
                "--runtime=300ms",
                "--ramp_time=100ms",
                "--size=8m",
                "--rate_iops=200");
        assertEquals(0, h.exit(), h.toString());
        assertTrue(h.out().contains("job: (groupid=0, jobs=1): err= 0"), h.out());
        assertTrue(h.out().contains("  write: IOPS="), h.out());
        assertTrue(h.out().contains("clat percentiles"), h.out());
        assertTrue(h.out().contains("99.00th=["), h.out());
        assertTrue(h.out().contains("cpu per I/O  : initiator="), h.out());
        assertTrue(h.out().contains(" ms compiling in the window"), h.out());
        assertTrue(h.out().contains("Run status group 0 (all jobs):"), h.out());
        assertTrue(h.out().contains("WRITE: bw="), h.out());
        // 200 IOPS for 0.3 s: about 60 writes, certainly not thousands
        String iops = h.out()
                .substring(
                        h.out().indexOf("IOPS=") + 5,
                        h.out().indexOf(',', h.out().indexOf("IOPS=")));
        assertTrue(Double.parseDouble(iops.replace("k", "")) < 400 && !iops.endsWith("k"), "rate_iops: " + iops);
    }

    @Test
    void rateIopsAlsoCapsAVerifyRun() {
        // 256 writes and 256 read-backs of 4 KiB at 400 IOPS: at least ~1.2 s, however fast the machine (the cap,
        // not a speed, is checked: without it the run takes a few milliseconds)
        long t0 = System.nanoTime();
        Cli r = Cli.run(
                "--target",
                target.uri(),
                "--rw=randwrite",
                "--bs=4k",
                "--iodepth=8",
                "--size=1m",
                "--verify=crc32c",
                "--rate_iops=400");
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(0, r.exit(), r.toString());
        assertTrue(millis >= 1200, "a verify run at --rate_iops=400 took " + millis + " ms: " + r.out());
        // the write pass alone: 256 writes at 400 IOPS take at least 0.64 s (uncapped: tens of milliseconds)
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("write: IOPS=.*?\\([^()/]+/(\\d+)msec\\)")
                .matcher(r.out());
        assertTrue(m.find(), r.out());
        assertTrue(Long.parseLong(m.group(1)) >= 600, "the write pass ran uncapped: " + r.out());
    }

    @Test
    void valuesOnlyTheTargetCanJudgeExit2() {
        Cli bs = Cli.run("--target", target.uri(), "--bs=6k", "--runtime=200ms");
        assertEquals(2, bs.exit(), bs.toString());
        assertTrue(bs.err().contains("--bs 6144 is not a multiple of the namespace's block size 4096"), bs.toString());
        Cli off = Cli.run("--target", target.uri(), "--offset=1g", "--runtime=200ms");
        assertEquals(2, off.exit(), off.toString());
        assertTrue(off.err().contains("--offset 1073741824 is beyond the namespace"), off.toString());
        Cli unreachable = Cli.run("--target", "nvme+tcp://127.0.0.1:1/nqn.x:y", "--runtime=200ms");
        assertEquals(1, unreachable.exit(), unreachable.toString());
        assertTrue(unreachable.err().contains("127.0.0.1:1"), unreachable.toString());
    }

    @Test
    void verifyPasses() {
        Cli r = Cli.run(
                "--target",
                target.uri(),
                "--rw=randwrite",
                "--bs=16k",
                "--iodepth=8",
                "--numjobs=2",
                "--size=4m",
                "--verify=crc32c");
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains("read: IOPS="), "the read-back is reported: " + r.out());
        assertTrue(r.out().contains("io=4MiB"), "every block written once and read back: " + r.out());
    }

    @Test
    void verifyCatchesACorruptedBlockAndNamesItsLba() throws Exception {
        // The proxy shows the test every command: with --rw=write the first Read on an I/O queue starts the
        // read-back pass, so the block is corrupted between the write pass and the read-back.
        try (TcpProxy proxy = TcpProxy.start(target.address())) {
            AtomicLong corrupted = new AtomicLong(-1);
            AtomicBoolean readBackStarted = new AtomicBoolean();
            proxy.observe((qid, command) -> {
                if (qid == 0
                        || command.opcode() != NvmOpcode.READ.code()
                        || !readBackStarted.compareAndSet(false, true)) {
                    return;
                }
                // between the write pass and the read-back, flip one bit of one block behind the job's back
                try (Controller c = Nvme.connect(target.uri())) {
                    Namespace ns = c.namespace();
                    ByteBuffer b = ByteBuffer.allocateDirect(4096);
                    long lba = (4L << 20) / 4096 + 37;
                    ns.read(lba, 1, b);
                    assertEquals(
                            VerifyPattern.VERIFY_MAGIC,
                            b.order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(0),
                            "written by the job");
                    b.put(2000, (byte) (b.get(2000) ^ 0x10));
                    ns.write(lba, 1, b);
                    corrupted.set(lba);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            Cli r = Cli.run(
                    "--target",
                    "nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn(),
                    "--rw=write",
                    "--bs=8k",
                    "--iodepth=4",
                    "--offset=4m",
                    "--size=1m",
                    "--verify=crc32c");
            assertEquals(1, r.exit(), r.toString());
            assertTrue(corrupted.get() > 0, "the block was corrupted before the read-back");
            assertTrue(r.err().contains("verify failed at LBA " + corrupted.get()), r.toString());
            assertTrue(r.err().contains("crc32c mismatch"), r.toString());
            assertTrue(r.out().contains("ERROR: verify failed at LBA " + corrupted.get()), r.toString());
        }
    }

    /**
     * The window lasts --runtime from the moment both sides' CPU was sampled, however long that took: here the proxy
     * holds the target's statistics read (log page 0xC0) at the end of the ramp for longer than the whole runtime, as
     * an emulated RNIC did at scale. The run must still count --runtime worth of I/Os, not report an empty window.
     */
    @Test
    void aSlowTargetSampleDelaysTheWindowInsteadOfEmptyingIt() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address())) {
            AtomicLong heldMillis = new AtomicLong();
            proxy.observe((qid, command) -> {
                if (qid != 0
                        || command.opcode() != AdminOpcode.GET_LOG_PAGE.code()
                        || (command.cdw10() & 0xFF) != TargetStats.LID
                        || heldMillis.get() != 0) {
                    return;
                }
                long t0 = System.nanoTime();
                try {
                    Thread.sleep(1200); // the run's first sample, at the end of the ramp: twice the runtime
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                heldMillis.set(Math.max(1, (System.nanoTime() - t0) / 1_000_000));
            });
            Cli r = Cli.run(
                    "--target",
                    "nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn(),
                    "--rw=randread",
                    "--bs=4k",
                    "--iodepth=4",
                    "--runtime=600ms",
                    "--ramp_time=100ms",
                    "--size=16m",
                    "--output-format=json");
            assertEquals(0, r.exit(), r.toString());
            assertTrue(heldMillis.get() >= 1200, "the target's first sample was held: " + heldMillis.get() + " ms");
            JsonNode job = new ObjectMapper().readTree(r.out()).get("jobs").get(0);
            assertTrue(job.get("read").get("total_ios").asLong() > 0, "I/Os counted in the window: " + r.out());
            assertEquals(600, job.get("job_runtime").asLong(), "the window is the runtime");
        }
    }

    /** Heap bytes on the transport's host threads (where a completion-driven job now issues and records every I/O). */
    private static long hostThreadBytes() {
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("nvme-tcp-host-")) {
                sum += mx.getThreadAllocatedBytes(t.getId());
            }
        }
        return sum;
    }

    @Test
    void completionDrivenJobKeepsTheMixAndAllocatesNothingPerIo() throws Exception {
        io.netty.util.ResourceLeakDetector.Level level = io.netty.util.ResourceLeakDetector.getLevel();
        io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
        try {
            String[] args = {
                "--target",
                target.uri(),
                "--rw=randrw",
                "--rwmixread=70",
                "--bs=4k",
                "--iodepth=8",
                "--runtime=1500ms",
                "--ramp_time=200ms",
                "--size=16m",
                "--output-format=json"
            };
            assertEquals(0, Cli.run(args).exit()); // warm-up: JIT, pools, the host event loop thread
            long before = hostThreadBytes();
            Cli r = Cli.run(args);
            long bytes = hostThreadBytes() - before;
            assertEquals(0, r.exit(), r.toString());
            JsonNode job = new ObjectMapper().readTree(r.out()).get("jobs").get(0);
            long reads = job.get("read").get("total_ios").asLong();
            long writes = job.get("write").get("total_ios").asLong();
            assertTrue(reads > 100 && writes > 30, reads + " reads, " + writes + " writes");
            double mix = (double) reads / (reads + writes);
            assertTrue(mix > 0.6 && mix < 0.8, "rwmixread 70: " + mix);
            // Connect, identify, the CPU log pages and shutdown of the run's controller are on these threads too;
            // per I/O (ramp included, about 10% more I/Os than counted) they must come to almost nothing.
            long perIo = bytes / (reads + writes);
            System.out.println("completion-driven job, QD8 randrw: host threads ~" + perIo + " B per counted I/O ("
                    + bytes + " B for " + (reads + writes) + " I/Os, connect and teardown included)");
            assertTrue(perIo < 64, perIo + " B per I/O on the host threads");
        } finally {
            io.netty.util.ResourceLeakDetector.setLevel(level);
        }
    }
}

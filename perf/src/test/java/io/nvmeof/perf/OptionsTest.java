package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** fio's option spellings, value syntax, and a clear message with exit 2 for every bad value (no target needed). */
class OptionsTest {
    private static Workload parse(String... args) {
        PerfCli cli = new PerfCli();
        new CommandLine(cli).parseArgs(args);
        boolean verify = PerfCli.verifyFlag(cli.verify);
        return cli.common.workload(cli.rw, cli.bs, cli.iodepth, "10", verify ? "0" : "2", verify);
    }

    @Test
    void fioSpellings() {
        Workload a = parse(
                "--rw=randrw",
                "--rwmixread=70",
                "--bs=4k",
                "--iodepth=16",
                "--numjobs=2",
                "--runtime=3",
                "--ramp_time=500ms",
                "--size=64m",
                "--offset=1m",
                "--percentile_list=50:99:99.9",
                "--rate_iops=1000",
                "--name=t",
                "--direct=1",
                "--time_based",
                "--group_reporting");
        Workload b = parse(
                "--rw",
                "randrw",
                "--rwmixread",
                "70",
                "--bs",
                "4K",
                "--iodepth",
                "16",
                "--numjobs",
                "2",
                "--runtime",
                "3s",
                "--ramp_time",
                "0.5",
                "--size",
                "64MiB",
                "--offset",
                "1024k",
                "--percentile_list",
                "50:99:99.9",
                "--rate_iops",
                "1000",
                "--name",
                "t");
        for (Workload w : new Workload[] {a, b}) {
            assertEquals("randrw", w.rw());
            assertEquals(70, w.rwmixread());
            assertEquals(4096, w.bs());
            assertEquals(16, w.iodepth());
            assertEquals(2, w.numjobs());
            assertEquals(3_000_000_000L, w.runtimeNanos());
            assertEquals(500_000_000L, w.rampNanos());
            assertEquals(64L << 20, w.size());
            assertEquals(1L << 20, w.offset());
            assertArrayEquals(new double[] {50, 99, 99.9}, w.percentiles());
            assertEquals(1000, w.rateIops());
            assertEquals("t", w.name());
            assertTrue(w.random());
        }
        Workload d = parse();
        assertEquals("randread", d.rw());
        assertEquals(4096, d.bs());
        assertEquals(1, d.iodepth());
        assertEquals(10_000_000_000L, d.runtimeNanos());
        assertArrayEquals(Workload.FIO_PERCENTILES, d.percentiles());
        assertEquals(30, parse("--rw=rw", "--rwmixwrite=70").rwmixread());
        assertEquals("rw", parse("--rw=readwrite").rw());
        assertTrue(parse("--rw=write", "--verify=crc32c").verify());
        assertFalse(parse("--rw=write", "--verify=0").verify());
        assertEquals(128 << 10, parse("--bs=128k").bs());
        assertEquals(1 << 20, parse("--bs=1m").bs());
        assertEquals(120_000_000_000L, parse("--runtime=2m").runtimeNanos());
    }

    @Test
    void units() {
        assertEquals(4096, Units.size("bs", "4k"));
        assertEquals(4096, Units.size("bs", "4KB"));
        assertEquals(4096, Units.size("bs", "4KiB"));
        assertEquals(1L << 30, Units.size("size", "1g"));
        assertEquals(512, Units.size("bs", "512"));
        assertEquals(250_000, Units.timeNanos("runtime", "250us"));
        assertEquals(3_600_000_000_000L, Units.timeNanos("runtime", "1h"));
        assertThrows(IllegalArgumentException.class, () -> Units.size("bs", "4x"));
        assertThrows(IllegalArgumentException.class, () -> Units.size("bs", "k"));
        assertThrows(IllegalArgumentException.class, () -> Units.size("bs", "-4k"));
        assertThrows(
                IllegalArgumentException.class,
                () -> Units.percentiles(
                        "percentile_list", "1:2:3:4:5:6:7:8:9:10:" + "11:12:13:14:15:16:17:18:19:20:21"));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "--rw=randomread|invalid value 'randomread' for --rw",
                "--bs=4x|invalid value '4x' for --bs",
                "--bs=100|invalid value '100' for --bs: expected a block size from 512",
                "--bs=|invalid value '' for --bs",
                "--iodepth=0|invalid value '0' for --iodepth: expected an integer from 1 to 1023",
                "--iodepth=abc|invalid value 'abc' for --iodepth",
                "--iodepth=5000|invalid value '5000' for --iodepth",
                "--numjobs=0|invalid value '0' for --numjobs",
                "--numjobs=65|invalid value '65' for --numjobs",
                "--runtime=10x|invalid value '10x' for --runtime",
                "--runtime=abc|invalid value 'abc' for --runtime",
                "--runtime=10ms|invalid value '10ms' for --runtime: expected at least 100ms",
                "--ramp_time=-1|invalid value '-1' for --ramp_time",
                "--size=0|invalid value '0' for --size",
                "--size=lots|invalid value 'lots' for --size",
                "--offset=1q|invalid value '1q' for --offset",
                "--rwmixread=101|invalid value '101' for --rwmixread",
                "--rwmixwrite=-5|invalid value '-5' for --rwmixwrite",
                "--percentile_list=50:101|invalid value '50:101' for --percentile_list",
                "--percentile_list=abc|invalid value 'abc' for --percentile_list",
                "--rate_iops=0|invalid value '0' for --rate_iops",
                "--verify=md5|invalid value 'md5' for --verify: expected crc32c",
                "--output-format=xml|invalid value 'xml' for --output-format",
                "--time_based=maybe|invalid value 'maybe' for --time_based",
                "--direct=0|--direct=0 is not possible",
                "--setup=carrier-pigeon|unknown setup 'carrier-pigeon'",
                "--target=http://example.com|unknown scheme",
                "--no-such-option|Unknown option: '--no-such-option'",
                "--randseed=x|invalid value 'x' for --randseed",
            })
    void badValueExits2WithAClearMessage(String arg, String message) {
        Cli r = Cli.run(arg, "--runtime=1");
        if (arg.startsWith("--runtime")) {
            r = Cli.run(arg);
        }
        assertEquals(2, r.exit(), r.toString());
        assertTrue(r.err().contains(message), r.toString());
        assertEquals("", r.out(), "nothing on stdout");
    }

    @Test
    void verifyNeedsWrites() {
        Cli r = Cli.run("--rw=randread", "--verify=crc32c");
        assertEquals(2, r.exit(), r.toString());
        assertTrue(r.err().contains("--verify needs a workload that writes"), r.toString());
        Cli mix = Cli.run("--rw=rw", "--rwmixread=60", "--rwmixwrite=60");
        assertEquals(2, mix.exit());
        assertTrue(mix.err().contains("do not add up to 100"), mix.toString());
    }

    @Test
    void compareBadValues() {
        for (String[] args : new String[][] {
            {"compare", "--iodepth=1,x"},
            {"compare", "--bs=4k,,7q"},
            {"compare", "--setups=tcp,warp"},
            {"compare", "--rw=randread,sideways"},
            {"compare", "--setups="}
        }) {
            Cli r = Cli.run(args);
            assertEquals(2, r.exit(), r.toString());
            assertTrue(r.err().startsWith("nvmeof-perf: "), r.toString());
        }
    }

    @Test
    void setups() {
        assertEquals("tcp-io_uring-hipri", Setup.named("tcp-io_uring-hipri").name());
        assertEquals("1", Setup.named("tcp-hipri").uriOptions().get("hipri"));
        assertTrue(Setup.named("tcp-hipri").targetArgs().contains("--busy-poll"));
        assertEquals(
                "header,data", Setup.named("tcp-digest").effectiveUriOptions().get("digest"));
        Setup bogus = new Setup(
                "warp",
                "tcp",
                "test",
                java.util.Map.of("warp", "9"),
                java.util.List.of(),
                java.util.Map.of(),
                java.util.List.of(),
                false);
        assertTrue(bogus.unavailableReason(false).contains("no URI option warp=9"), bogus.unavailableReason(false));
        Setup noFlag = new Setup(
                "x",
                "tcp",
                "test",
                java.util.Map.of(),
                java.util.List.of("--warp-drive"),
                java.util.Map.of(),
                java.util.List.of(),
                false);
        assertTrue(noFlag.unavailableReason(true).contains("no --warp-drive option"));
        assertEquals(null, noFlag.unavailableReason(false), "target flags do not matter for a remote target");
        Setup noTransport = new Setup(
                "y",
                "carrier",
                "test",
                java.util.Map.of(),
                java.util.List.of(),
                java.util.Map.of(),
                java.util.List.of(),
                false);
        assertTrue(noTransport.unavailableReason(true).contains("carrier"));
    }

    @Test
    void jobUriKeepsUserOptionsAndSetsOneQueue() {
        String u = Runner.jobUri("nvme+tcp://10.0.0.1:4420/nqn.x:y?nsid=2&queues=8", Setup.named("tcp-digest"), 32);
        assertTrue(u.startsWith("nvme+tcp://10.0.0.1:4420/nqn.x:y?nsid=2&queues=1"), u);
        assertTrue(u.contains("digest=header,data"), u);
        assertTrue(u.contains("depth=33"), u);
    }
}

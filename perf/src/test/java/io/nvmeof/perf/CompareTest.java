package io.nvmeof.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** compare on a tiny workload: the table, the JSON, and the HTML report rendered by headless Chromium. */
class CompareTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").blockSize(4096).build();

    @Test
    void tableAndReport(@TempDir Path dir) throws Exception {
        Path html = dir.resolve("report.html");
        Cli r = Cli.run(
                "compare",
                "--target",
                target.uri(),
                "--setups",
                "tcp,tcp-digest",
                "--iodepth",
                "1,4",
                "--bs",
                "4k",
                "--runtime",
                "300ms",
                "--ramp_time",
                "100ms",
                "--size",
                "16m",
                "--report",
                html.toString());
        assertEquals(0, r.exit(), r.toString());
        String out = r.out();
        assertTrue(out.contains("| tcp "), out);
        assertTrue(out.contains("| tcp-digest"), out);
        assertTrue(
                out.contains("IOPS") && out.contains("p50 us") && out.contains("p99 us") && out.contains("CPU ini"),
                out);
        assertTrue(out.contains("randread 4k qd1 "), out);
        assertTrue(out.contains("randread 4k qd4 "), out);
        assertFalse(out.contains("unavailable"), out);
        String page = Files.readString(html);
        assertTrue(page.startsWith("<!DOCTYPE html>"));
        assertFalse(
                page.contains("http://")
                        && page.replace("http://www.w3.org/2000/svg", "").contains("http://"),
                "no network references");
        assertFalse(page.contains("<script src") || page.contains("<link"), "self-contained");
        Cli j = Cli.run(
                "compare",
                "--target",
                target.uri(),
                "--setups",
                "tcp",
                "--rw",
                "randwrite",
                "--iodepth",
                "2",
                "--runtime",
                "200ms",
                "--ramp_time",
                "0",
                "--size",
                "8m",
                "--output-format",
                "json");
        assertEquals(0, j.exit(), j.toString());
        JsonNode p =
                new ObjectMapper().readTree(j.out()).get("nvmeof").get("points").get(0);
        assertEquals("randwrite", p.get("rw").asText());
        JsonNode tcp = p.get("results").get("tcp");
        assertTrue(tcp.get("iops").asDouble() > 0);
        assertTrue(tcp.get("clat_p99_ns").asLong() >= tcp.get("clat_p50_ns").asLong());
        assertTrue(
                tcp.get("fio").get("jobs").get(0).get("write").get("total_ios").asLong() > 0, "full fio JSON kept");
    }

    /** A comparison with two measured setups and one unavailable one, as compare builds it. */
    static CompareCommand.Comparison comparison() throws Exception {
        List<Workload> points = new ArrayList<>();
        for (int qd : new int[] {1, 4}) {
            points.add(new Workload(
                    "job",
                    "randread",
                    50,
                    4096,
                    qd,
                    1,
                    300_000_000L,
                    100_000_000L,
                    16 << 20,
                    0,
                    false,
                    Workload.FIO_PERCENTILES,
                    0,
                    1));
        }
        points.add(new Workload(
                "job",
                "read",
                50,
                128 << 10,
                2,
                1,
                300_000_000L,
                100_000_000L,
                16 << 20,
                0,
                false,
                Workload.FIO_PERCENTILES,
                0,
                1));
        Setup fake = new Setup(
                "tcp-warp",
                "tcp",
                "NVMe/TCP over a warp drive",
                Map.of("warp", "9"),
                List.of(),
                Map.of(),
                List.of(),
                true);
        List<Setup> setups = List.of(Setup.named("tcp"), Setup.named("tcp-digest"), fake);
        Map<String, List<CompareCommand.Cell>> cells = new LinkedHashMap<>();
        Map<String, String> unavailable = new LinkedHashMap<>();
        for (Setup s : setups) {
            List<CompareCommand.Cell> list = new ArrayList<>();
            String reason = s.unavailableReason(false);
            for (Workload w : points) {
                list.add(
                        reason != null
                                ? new CompareCommand.Cell(null, reason)
                                : new CompareCommand.Cell(Runner.run(w, s, target.uri(), false, null), null));
            }
            if (reason != null) {
                unavailable.put(s.name(), reason);
            }
            cells.put(s.name(), list);
        }
        return new CompareCommand.Comparison(
                points, setups, unavailable, cells, false, target.uri(), Machine.here(), System.currentTimeMillis());
    }

    @Test
    void unavailableSetupIsShownAndDoesNotAbortTheRest() throws Exception {
        CompareCommand.Comparison c = comparison();
        String table = CompareCommand.table(c);
        assertTrue(table.contains("unavailable: the initiator has no URI option warp=9"), table);
        assertTrue(table.contains("tcp-warp (EMULATED)"), table);
        assertEquals(
                3,
                table.lines()
                        .filter(l -> l.startsWith("randread 4k") || l.startsWith("read 128k"))
                        .count(),
                table);
    }

    /** {@code r} as if its initiator's JIT had compiled for {@code jitMillis} of its window. */
    private static RunResult withJit(RunResult r, long jitMillis) {
        return new RunResult(
                r.workload(),
                r.setup(),
                r.targetUri(),
                r.embeddedTarget(),
                r.jobs(),
                r.total(),
                r.initiatorCpu(),
                jitMillis,
                r.targetCpu(),
                r.targetCommands(),
                r.targetUnknown(),
                r.windowNanos(),
                r.startMillis(),
                r.failure(),
                r.blockSize(),
                r.targetCpus(),
                r.reconnects(),
                r.failovers(),
                r.topology(),
                r.idle());
    }

    /** {@code c} with each run's JIT time set: {@code percentOfFirst} % of the window for tcp's first point, 1 % else. */
    private static CompareCommand.Comparison withJit(CompareCommand.Comparison c, int percentOfFirst) {
        Map<String, List<CompareCommand.Cell>> cells = new LinkedHashMap<>();
        for (Map.Entry<String, List<CompareCommand.Cell>> e : c.cells().entrySet()) {
            List<CompareCommand.Cell> list = new ArrayList<>();
            for (int i = 0; i < e.getValue().size(); i++) {
                CompareCommand.Cell cell = e.getValue().get(i);
                RunResult r = cell.result();
                int percent = e.getKey().equals("tcp") && i == 0 ? percentOfFirst : 1;
                list.add(
                        r == null
                                ? cell
                                : new CompareCommand.Cell(
                                        withJit(r, r.windowNanos() / 1_000_000 * percent / 100), null));
            }
            cells.put(e.getKey(), list);
        }
        return new CompareCommand.Comparison(
                c.points(), c.setups(), c.unavailable(), cells, false, c.target(), c.machine(), c.startMillis());
    }

    @Test
    void tableNamesTheCellsWhoseWindowHeldMoreThanOnePercentOfJitCompiling() throws Exception {
        CompareCommand.Comparison c = comparison();
        CompareCommand.Comparison jitty = withJit(c, 2);
        String table = CompareCommand.table(jitty);
        long ms = jitty.cell(Setup.named("tcp"), 0).result().initiatorJitMillis();
        assertTrue(ms > 0, "2 % of the window");
        assertTrue(
                table.contains("the initiator's JIT compiled for more than 1 % of the window in: tcp "
                        + c.points().get(0).label() + " (" + ms + " ms); "),
                table);
        assertTrue(table.contains("a longer --ramp_time leaves it out"), table);
        // 1 % exactly is not more than 1 %: no note
        assertEquals("", CompareCommand.jitNote(withJit(c, 1)));
        assertFalse(CompareCommand.table(withJit(c, 1)).contains("JIT"));
    }

    // ---- the HTML report, rendered by headless Chromium and looked at ----

    static String chromium() throws Exception {
        for (String name : new String[] {"chromium", "chromium-browser", "google-chrome"}) {
            for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
                File f = new File(d, name);
                if (f.canExecute()) {
                    return f.getPath();
                }
            }
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        if (root && new File("/usr/bin/apt-get").canExecute()) {
            // Debian's chromium, as .ci/run installs it; the test environment may not have it yet
            Process p = new ProcessBuilder(
                            "sh",
                            "-c",
                            "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium "
                                    + "|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            p.waitFor(15, TimeUnit.MINUTES);
            if (new File("/usr/bin/chromium").canExecute()) {
                return "/usr/bin/chromium";
            }
        }
        return null;
    }

    private static String runChromium(String chromium, Path profile, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--user-data-dir=" + profile));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "chromium finished");
        return new String(out, StandardCharsets.UTF_8);
    }

    @Test
    void reportRendersInHeadlessChromium(@TempDir Path dir) throws Exception {
        CompareCommand.Comparison c = comparison();
        Path html = dir.resolve("report.html");
        Files.writeString(html, HtmlReport.render(c));
        String chromium = chromium();
        assumeTrue(chromium != null, "no chromium and it could not be installed (not root or no apt-get)");
        Path png = dir.resolve("report.png");
        runChromium(
                chromium,
                dir.resolve("profile1"),
                "--screenshot=" + png,
                "--window-size=1280,2000",
                html.toUri().toString());
        assertTrue(Files.size(png) > 10_000, "a screenshot was written");
        BufferedImage img = javax.imageio.ImageIO.read(png.toFile());
        assertEquals(1280, img.getWidth());
        assertEquals(2000, img.getHeight());
        // the page has many non-white pixels, and colour (the series) in the plot regions
        long nonWhite = 0;
        long seriesColoured = 0;
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                int rgb = img.getRGB(x, y) & 0xFFFFFF;
                if (rgb != 0xFFFFFF) {
                    nonWhite++;
                }
                if (rgb == 0x1f77b4 || rgb == 0xd62728) {
                    seriesColoured++;
                }
            }
        }
        assertTrue(nonWhite > 20_000, "non-white pixels: " + nonWhite);
        assertTrue(
                seriesColoured > 200,
                "pixels in the first two setups' colours (lines, points, bars): " + seriesColoured);
        // some copy for a person to look at: target/…/report.png is kept under build/
        Path keep = Path.of("build", "compare-report-screenshot.png");
        Files.createDirectories(keep.getParent());
        Files.copy(png, keep, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.copy(html, Path.of("build", "compare-report.html"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);

        String dom = runChromium(
                chromium, dir.resolve("profile2"), "--dump-dom", html.toUri().toString());
        assertTrue(dom.contains("<svg id=\"latency-0\""), "latency chart per point");
        assertTrue(dom.contains("<svg id=\"latency-2\""));
        assertTrue(dom.contains("<svg id=\"iops-randread-4k\""), "IOPS against queue depth");
        assertTrue(dom.contains("<svg id=\"cpu\""), "CPU per I/O");
        assertTrue(dom.contains("completion latency (µs, log)"), "latency axis with unit");
        assertTrue(dom.contains("queue depth (iodepth)"));
        assertTrue(dom.contains("CPU µs per I/O"));
        assertTrue(dom.contains(">qd 1<") && dom.contains(">qd 4<"), "x labels");
        assertTrue(dom.contains(">p99<") && dom.contains(">p99.9<"));
        assertTrue(dom.contains("class=\"legend\""), "legends");
        assertTrue(dom.contains("unavailable: the initiator has no URI option warp=9"));
        assertTrue(dom.contains("EMULATED"));
        assertTrue(dom.contains(c.machine().cpuModel()), "the machine");
        assertTrue(dom.contains(c.machine().cores() + " cores"));
        assertTrue(dom.split("class=\"series\"").length - 1 >= 2 * 3 + 2, "one line per measured setup and chart");
        assertTrue(dom.split("class=\"bar\"").length - 1 >= 2 * 3, "CPU bars");
    }
}

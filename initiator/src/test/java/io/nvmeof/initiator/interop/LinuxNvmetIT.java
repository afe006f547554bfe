package io.nvmeof.initiator.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.ControllerIdentity;
import io.nvmeof.initiator.ControllerStateEvent;
import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.DiscoveryLog;
import io.nvmeof.initiator.LbaRange;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.NvmeTransportException;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.testkit.peervm.RunningVm;
import io.nvmeof.testsupport.ObservedTransport;
import io.nvmeof.testsupport.TcpProxy;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Our initiator library (and CLI) against the Linux kernel's NVMe/TCP target, nvmet-tcp of Debian's 6.1 kernel,
 * served from the peer VM through a hostfwd port ({@code interop/serve-nvmet-initiator.sh}): discovery, bring-up
 * with several I/O queues, identify, a multi-threaded verified data pass over every queue covering the data-keeping
 * namespaces (in-capsule, R2T and multi-H2CData writes, 512-byte and 4 KiB blocks), unaligned {@link BlockDevice}
 * I/O, a digest pass (header and data CRC32C), flush / Write Zeroes / deallocate as ONCS advertises them, orderly
 * shutdown and no threads left behind, and a final check that the bytes are in the target's backing file (md5 taken
 * in the guest).
 *
 * <p>One VM boot for everything (steps share it, in order). Run with
 * {@code mvn -B -o -pl initiator verify -Dit.test=LinuxNvmetIT -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false}.
 * {@code -Dpeervm.keep=true} keeps the job dir (guest output, console log). {@code -Dinterop.ns2=64M} sets the size
 * of the namespace the data pass covers. The VM is emulated (TCG): nothing here asserts speed; timings are printed.
 */
@Tag("vm")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class LinuxNvmetIT {
    static final String NQN = "nqn.2014-08.org.nvmexpress:peervm";
    static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";
    static final long NS1_BYTES = 4L << 30;
    static final int NS2 = 2;
    static final int NS3 = 3;
    static final int NS2_BLOCK = 512;
    static final int NS3_BLOCK = 4096;
    static final long NS3_BYTES = 16L << 20;
    /** Write-zeroes and deallocate go into the last 8 MiB of namespace 2; the guest's md5 covers what lies before. */
    static final long NS2_SCRATCH = 8L << 20;

    static final int KiB = 1024;
    static final int MiB = 1024 * 1024;
    /**
     * The most one command may move to or from nvmet-tcp on this kernel, whatever MDTS says (0: no limit):
     * {@code nvmet_tcp_map_data} refuses an SGL longer than NVMET_TCP_MAXH2CDATA (4 MiB) with Data SGL Length Invalid
     * and logs "failed to map data" (Debian 6.1.192, drivers/nvme/target/tcp.c).
     */
    static final int NVMET_MAX_TRANSFER = 4 * MiB;
    /**
     * Mixed transfer sizes: in-capsule (≤ 16 KiB, nvmet's inline_data_size), R2T (one R2T per command from nvmet),
     * up to the 4 MiB nvmet accepts.
     */
    static final int[] SIZES = {
        4 * KiB,
        64 * KiB,
        MiB,
        512,
        16 * KiB,
        20 * KiB,
        128 * KiB,
        NVMET_MAX_TRANSFER,
        8 * KiB,
        1536,
        256 * KiB,
        2 * MiB,
        3 * MiB + 512,
        12 * KiB,
        32 * KiB,
        16 * KiB + 512
    };

    static final String COMMON = "timeout=60s";

    private final long ns2Bytes = parseSize(System.getProperty("interop.ns2", "64M"));
    private final boolean keep = Boolean.getBoolean("peervm.keep");
    private final List<LogRecord> warnings = Collections.synchronizedList(new ArrayList<>());
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(r);
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    private Path work;
    private RunningVm vm;
    private int port;
    private String base;
    private Set<Thread> threadsBefore;
    /** What the namespaces hold, as far as this test wrote them (fresh tmpfs files read as zeroes). */
    private byte[] model2;

    private byte[] model3;
    /** Blocks of namespace 2 whose contents the target may choose (deallocated without DLFEAT saying zeroes). */
    private final BitSet unknown2 = new BitSet();

    private Controller ctrl;
    private final AtomicInteger seeds = new AtomicInteger(1);
    private final List<String> timings = Collections.synchronizedList(new ArrayList<>());

    /** Longer than the class's 10 minutes: the start may wait for another VM on this host and retry a stalled boot. */
    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void bootVm() throws Exception {
        assertTrue(ns2Bytes >= 32 * MiB && ns2Bytes % MiB == 0, "interop.ns2 must be a whole number of MiB ≥ 32M");
        model2 = new byte[Math.toIntExact(ns2Bytes)];
        model3 = new byte[Math.toIntExact(NS3_BYTES)];
        threadsBefore = Set.copyOf(Thread.getAllStackTraces().keySet());
        Logger.getLogger("").addHandler(capture);

        PeerVm peer = PeerVm.locate();
        peer.ensureImage(Duration.ofMinutes(10));
        work = Files.createTempDirectory("linux-nvmet-it");
        Path script = PeerVm.copyResource(LinuxNvmetIT.class, "/interop/serve-nvmet-initiator.sh", work);
        port = PeerVm.freePort();
        base = "nvme+tcp://127.0.0.1:" + port;
        vm = peer.startServing(
                script,
                List.of((ns2Bytes / MiB) + "M", (NS3_BYTES / MiB) + "M", "1500"),
                port,
                4420,
                Duration.ofMinutes(30),
                work.resolve("job"),
                "^PEERVM READY",
                Duration.ofMinutes(4));
    }

    @AfterAll
    void stopVm() throws Exception {
        Logger.getLogger("").removeHandler(capture);
        if (ctrl != null) {
            ctrl.close();
        }
        try {
            if (vm != null) {
                vm.close();
                System.out.println("--- run.sh ---\n" + PeerVm.tail(vm.runLog(), 5));
            }
        } finally {
            System.out.println("--- timings ---\n" + String.join("\n", timings));
            if (keep) {
                System.out.println("kept " + work);
            } else {
                PeerVm.deleteRecursively(work);
                if (work != null) {
                    Files.deleteIfExists(work.resolveSibling(work.getFileName() + "-run.log"));
                }
            }
        }
    }

    // ---------------------------------------------------------------- 1. discovery

    @Test
    @Order(1)
    void discoveryListsThePeervmSubsystem() throws Exception {
        // Counts the discovery log's Get Log Page commands as they go on the wire.
        AtomicInteger logCommands = new AtomicInteger();
        ObservedTransport tcp = new ObservedTransport(Transport.find("tcp"), sqe -> {
            if (sqe.opcode() == AdminOpcode.GET_LOG_PAGE.code() && (sqe.cdw10() & 0xFF) == 0x70) {
                logCommands.incrementAndGet();
            }
        });
        DiscoveryLog log;
        long t0 = System.nanoTime();
        log = retry(() -> Nvme.discover(
                NvmeUri.parse(base), ConnectOptions.builder().transport(tcp).build()));
        timings.add(String.format("discover: %.0f ms", (System.nanoTime() - t0) / 1e6));
        System.out.println("discovery log GENCTR " + log.generation() + ", "
                + log.entries().size() + " entries:");
        log.entries().forEach(e -> System.out.println("  " + e));
        System.out.println("Get Log Page commands for the discovery log: " + logCommands.get());
        // Header, at least one chunk of entries, header again (GENCTR check), nvmeof-protocol.md §3.3.
        assertTrue(logCommands.get() >= 2, "Get Log Page commands seen on the wire: " + logCommands.get());
        List<DiscoveryEntry> nvm = log.nvmSubsystems();
        DiscoveryEntry e = nvm.stream()
                .filter(x -> x.subnqn().equals(NQN))
                .findFirst()
                .orElseThrow(() -> new AssertionError(NQN + " not in the discovery log: " + log));
        assertEquals("tcp", e.transportName());
        assertEquals("ipv4", e.addressFamilyName());
        // The guest's own view through hostfwd (peer-vm README): the address the guest listens on.
        assertEquals("4420", e.trsvcid());
        assertEquals("10.0.2.15", e.traddr(), "TRADDR of " + e);
        assertEquals(0xFFFF, e.cntlid(), "nvmet uses the dynamic controller model");
        assertEquals(0, e.sectype(), "no TLS on 6.1");

        // A discovery controller kept open: the log read twice is the same generation with the same entries.
        try (Controller d = retry(() -> Nvme.connect(base))) {
            assertTrue(d.isDiscovery());
            assertEquals(0, d.ioQueueCount());
            DiscoveryLog again = d.discoveryLog();
            assertEquals(log.generation(), again.generation(), "GENCTR changed without a configuration change");
            assertEquals(log.entries(), again.entries());
            System.out.println("discovery controller: " + d);
        }
    }

    // ---------------------------------------------------------------- 2. connect, identify

    @Test
    @Order(2)
    void connectWithFourQueuesAndIdentify() throws Exception {
        // The way a discovery user connects: the entry's subsystem, but our address (not the guest's 10.0.2.15).
        NvmeUri uri = NvmeUri.parse(base + "/" + NQN + "?queues=4&depth=32&" + COMMON);
        long t0 = System.nanoTime();
        ctrl = retry(() -> Nvme.connect(uri, null));
        timings.add(String.format("connect (4 I/O queues): %.0f ms", (System.nanoTime() - t0) / 1e6));
        System.out.println(ctrl);
        ControllerIdentity id = ctrl.identity();
        System.out.println("identify: " + id);
        assertEquals("Linux", ctrl.modelNumber());
        assertFalse(ctrl.serialNumber().isBlank(), "serial");
        assertTrue(ctrl.firmwareRevision().startsWith("6.1"), "firmware " + ctrl.firmwareRevision());
        assertEquals(NQN, ctrl.subsystemNqn());
        assertEquals("1.3.0", ctrl.version());
        assertEquals(4, ctrl.ioQueueCount(), "I/O queues granted");
        assertTrue(ctrl.ioQueueDepth() >= 2 && ctrl.ioQueueDepth() <= 32, "depth " + ctrl.ioQueueDepth());
        assertTrue(ctrl.maxInCapsuleData() > 0, "nvmet-tcp accepts in-capsule data: " + ctrl.maxInCapsuleData());
        System.out.printf(
                "CAP 0x%x, MQES %d, depth %d, in-capsule %d bytes, MDTS %d, ONCS 0x%x, VWC 0x%x, SGLS 0x%x%n",
                ctrl.capabilities(),
                ctrl.capabilities() & 0xFFFF,
                ctrl.ioQueueDepth(),
                ctrl.maxInCapsuleData(),
                id.mdts(),
                id.oncs(),
                id.vwc(),
                id.sgls());

        List<Namespace> nss = ctrl.namespaces();
        nss.forEach(ns -> System.out.println("  " + ns + " " + ns.identity()));
        assertEquals(List.of(1, 2, 3), nss.stream().map(Namespace::nsid).toList());
        Namespace ns1 = ctrl.namespace(1);
        assertEquals(NS1_BYTES, ns1.sizeBytes(), "null_blk 4 GiB");
        assertEquals(512, ns1.blockSize());
        Namespace ns2 = ctrl.namespace(NS2);
        assertEquals(ns2Bytes, ns2.sizeBytes());
        assertEquals(NS2_BLOCK, ns2.blockSize());
        assertEquals(ns2Bytes / NS2_BLOCK, ns2.blockCount());
        Namespace ns3 = ctrl.namespace(NS3);
        assertEquals(NS3_BYTES, ns3.sizeBytes());
        assertEquals(NS3_BLOCK, ns3.blockSize());
        for (Namespace ns : nss) {
            assertFalse(ns.readOnly());
            assertTrue(ns.isActive());
        }
        // nsid= picks the namespace; without it the first active one.
        assertEquals(1, ctrl.namespace().nsid());

        // null_blk keeps nothing, but the commands must complete: one in-capsule write and an R2T read.
        ByteBuffer b = ByteBuffer.allocateDirect(256 * KiB);
        ns1.write(12345, 8, b.slice(0, 4096));
        ns1.read(ns1.blockCount() - 512, 512, b);
    }

    // ---------------------------------------------------------------- 3. data pass over every queue

    @Test
    @Order(3)
    void multiThreadedVerifiedPassCoveringNamespaces2And3() throws Exception {
        Controller c = requireController();
        Namespace ns2 = c.namespace(NS2);
        Namespace ns3 = c.namespace(NS3);
        List<Extent> extents = new ArrayList<>();
        extents.addAll(cover(ns2, 0, ns2Bytes, 0));
        extents.addAll(cover(ns3, 0, NS3_BYTES, 3));
        long total = extents.stream().mapToLong(Extent::length).sum();
        int inCapsule = (int)
                extents.stream().filter(x -> x.length <= c.maxInCapsuleData()).count();
        int big = (int)
                extents.stream().filter(x -> x.length == NVMET_MAX_TRANSFER).count();
        System.out.printf(
                "data pass: %d extents, %d MiB, %d in-capsule (≤ %d bytes), %d of 4 MiB%n",
                extents.size(), total / MiB, inCapsule, c.maxInCapsuleData(), big);
        assertTrue(inCapsule > 0 && big > 0 && inCapsule < extents.size());

        long seed = seeds.getAndIncrement();
        Set<Long> queuesUsed = ConcurrentHashMap.newKeySet();
        run(c, "write", extents, true, seed, 8, 4, queuesUsed);
        assertEquals(c.ioQueueCount(), queuesUsed.size(), "writes went over every I/O queue: " + queuesUsed);
        // Read back in the opposite order, so an extent is read by another thread (and usually another queue).
        List<Extent> reversed = new ArrayList<>(extents);
        Collections.reverse(reversed);
        queuesUsed.clear();
        run(c, "read+verify", reversed, false, seed, 8, 4, queuesUsed);
        assertEquals(c.ioQueueCount(), queuesUsed.size(), "reads went over every I/O queue: " + queuesUsed);
    }

    // ---------------------------------------------------------------- 3b. unaligned BlockDevice I/O

    @Test
    @Order(4)
    void unalignedBlockDeviceIo() throws Exception {
        Controller c = requireController();
        for (int nsid : new int[] {NS2, NS3}) {
            BlockDevice dev = c.namespace(nsid).blockDevice();
            byte[] model = model(nsid);
            long size = dev.size();
            long[][] cases = {
                {1, 1},
                {511, 2},
                {12345, 7000},
                {MiB - 100, MiB + 300},
                {3 * 4096 + 17, 3 * 4096},
                {5 * MiB + 4095, 1},
                {7 * MiB, 2 * MiB + 1},
                {size - 777, 777},
                {size - MiB - 3, MiB + 3},
            };
            long t0 = System.nanoTime();
            for (long[] k : cases) {
                long off = k[0];
                int len = (int) k[1];
                ByteBuffer src = (off & 1) == 0 ? ByteBuffer.allocateDirect(len + 7) : ByteBuffer.allocate(len + 7);
                src.position(7); // a buffer position that is not 0 either
                byte[] data = new byte[len];
                fill(data, 0, len, seeds.getAndIncrement(), off);
                src.put(data).position(7);
                assertEquals(len, dev.write(off, src), "bytes written at " + off);
                assertEquals(7 + len, src.position());
                System.arraycopy(data, 0, model, (int) off, len);
            }
            // Concurrent unaligned writes into the same blocks (the read-modify-write lock contract).
            int writers = 16;
            long region = size / 2 + 100;
            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<Integer>> fs = Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> err = new AtomicReference<>();
            List<Thread> ts = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                long off = region + w * 333L;
                byte[] data = new byte[333];
                fill(data, 0, data.length, seeds.getAndIncrement(), off);
                System.arraycopy(data, 0, model, (int) off, data.length);
                Thread t = new Thread(
                        () -> {
                            try {
                                go.await();
                                fs.add(dev.writeAsync(off, ByteBuffer.wrap(data)));
                            } catch (Throwable e) {
                                err.compareAndSet(null, e);
                            }
                        },
                        "unaligned-writer-" + w);
                t.start();
                ts.add(t);
            }
            go.countDown();
            for (Thread t : ts) {
                t.join(120_000);
            }
            if (err.get() != null) {
                throw new AssertionError("an unaligned writer failed", err.get());
            }
            for (CompletableFuture<Integer> f : fs) {
                assertEquals(333, f.get(2, TimeUnit.MINUTES));
            }
            // Read every case back unaligned, and the covering blocks aligned through the namespace.
            List<long[]> all = new ArrayList<>(Arrays.asList(cases));
            all.add(new long[] {region, writers * 333L});
            for (long[] k : all) {
                long off = k[0];
                int len = (int) k[1];
                ByteBuffer dst = ByteBuffer.allocate(len);
                assertEquals(len, dev.read(off, dst));
                assertEquals(len, dst.position());
                expectEqual(nsid, off, dst.array(), 0, len, "BlockDevice read");
                int bs = dev.blockSize();
                long first = off / bs;
                int blocks = (int) ((off + len + bs - 1) / bs - first);
                ByteBuffer whole = ByteBuffer.allocateDirect(blocks * bs);
                c.namespace(nsid).read(first, blocks, whole);
                byte[] got = new byte[blocks * bs];
                whole.get(0, got);
                expectEqual(nsid, first * bs, got, 0, got.length, "aligned read around an unaligned write");
            }
            timings.add(String.format(
                    "unaligned BlockDevice I/O on nsid %d: %.1f s", nsid, (System.nanoTime() - t0) / 1e9));
        }
    }

    // ---------------------------------------------------------------- commands over 4 MiB

    /** Commands over 4 MiB that nvmet refused; the guest kernel logs "failed to map data" once for each. */
    private int refusedLargeCommands;

    /**
     * 8 MiB through {@link BlockDevice} (commands of at most 1 MiB) works. One {@link Namespace} command of 8 MiB is
     * within {@link Namespace#maxBlocksPerCommand()} (MDTS 0 means no limit) but over what nvmet-tcp accepts
     * (NVMET_MAX_TRANSFER): this fails until the initiator caps commands on such a controller.
     */
    @Test
    @Order(5)
    void commandsOverFourMiB() throws Exception {
        Controller c = requireController();
        Namespace ns = c.namespace(NS2);
        long lba = (ns2Bytes - NS2_SCRATCH) / NS2_BLOCK;
        int blocks = (int) (NS2_SCRATCH / NS2_BLOCK);
        long off = lba * NS2_BLOCK;
        BlockDevice dev = ns.blockDevice();
        byte[] data = new byte[(int) NS2_SCRATCH];
        fill(data, 0, data.length, seeds.getAndIncrement(), off);
        System.arraycopy(data, 0, model2, (int) off, data.length);
        assertEquals(data.length, dev.write(off, ByteBuffer.wrap(data)));
        ByteBuffer back = ByteBuffer.allocate(data.length);
        assertEquals(data.length, dev.read(off, back));
        expectEqual(NS2, off, back.array(), 0, data.length, "8 MiB through BlockDevice");

        int max = ns.maxBlocksPerCommand();
        System.out.println("nsid 2 maxBlocksPerCommand " + max + " (" + (long) max * NS2_BLOCK + " bytes), MDTS "
                + c.identity().mdts());
        if ((long) max * NS2_BLOCK <= NVMET_MAX_TRANSFER) {
            System.out.println(
                    "the initiator caps commands at " + (long) max * NS2_BLOCK + " bytes: none over 4 MiB to try");
            return;
        }
        List<String> refused = new ArrayList<>();
        // The same bytes again, so the namespace holds the model's data whether or not nvmet takes the command.
        ByteBuffer big = ByteBuffer.allocateDirect(blocks * NS2_BLOCK);
        big.put(0, model2, (int) off, big.capacity());
        try {
            ns.write(lba, blocks, big);
        } catch (NvmeStatusException e) {
            refused.add(e.getMessage());
            refusedLargeCommands++;
        }
        ByteBuffer in = ByteBuffer.allocateDirect(blocks * NS2_BLOCK);
        try {
            ns.read(lba, blocks, in);
            byte[] got = new byte[in.capacity()];
            in.get(0, got);
            expectEqual(NS2, off, got, 0, got.length, "one 8 MiB read command");
        } catch (NvmeStatusException e) {
            refused.add(e.getMessage());
            refusedLargeCommands++;
        }
        assertTrue(c.isOpen(), "controller failed: " + c.failure());
        verifyRange(ns, lba, blocks, "the 8 MiB after single 8 MiB commands");
        assertEquals(
                List.of(),
                refused,
                "Namespace.maxBlocksPerCommand() allows " + max + " blocks of 512 bytes (MDTS 0: "
                        + "no limit), but nvmet-tcp refuses every command over 4 MiB (nvmet_tcp_map_data: SGL length > "
                        + "NVMET_TCP_MAXH2CDATA -> Data SGL Length Invalid, kernel log 'failed to map data'). The initiator should "
                        + "cap a command's transfer (e.g. at the ICResp MAXH2CDATA or 4 MiB on NVMe/TCP) when MDTS is 0");
    }

    // ---------------------------------------------------------------- 5. flush, write zeroes, deallocate, compare

    @Test
    @Order(6)
    void flushWriteZeroesDeallocateAsAdvertised() throws Exception {
        Controller c = requireController();
        Namespace ns = c.namespace(NS2);
        ControllerIdentity id = c.identity();
        int oncs = id.oncs();
        System.out.printf(
                "ONCS 0x%x (compare %b, DSM %b, write zeroes %b), VWC 0x%x, nsid 2 DLFEAT 0x%x%n",
                oncs,
                (oncs & 1) != 0,
                (oncs & 4) != 0,
                (oncs & 8) != 0,
                id.vwc(),
                ns.identity().dlfeat());
        ns.flush();
        ns.blockDevice().flush();
        c.namespace(NS3).flushAsync().get(2, TimeUnit.MINUTES);

        long scratchLba = (ns2Bytes - NS2_SCRATCH) / NS2_BLOCK;
        int scratchBlocks = (int) (NS2_SCRATCH / NS2_BLOCK);
        if ((oncs & 8) != 0) {
            // 4 MiB (no data moves: nvmet's 4 MiB SGL limit does not apply) and a single block a few blocks later.
            long lba = scratchLba + 10;
            ns.writeZeroes(lba, 8192);
            ns.writeZeroes(lba + 8192 + 5, 1);
            Arrays.fill(model2, (int) (lba * NS2_BLOCK), (int) ((lba + 8192) * NS2_BLOCK), (byte) 0);
            Arrays.fill(model2, (int) ((lba + 8197) * NS2_BLOCK), (int) ((lba + 8198) * NS2_BLOCK), (byte) 0);
            verifyRange(ns, scratchLba, 8192 + 16, "after Write Zeroes");
            System.out.println("Write Zeroes: verified");
        } else {
            System.out.println("ONCS has no Write Zeroes: not tested");
        }
        if ((oncs & 4) != 0) {
            long lba = scratchLba + 9000;
            LbaRange a = new LbaRange(lba, 2048);
            LbaRange b = new LbaRange(lba + 4096, 8);
            ns.deallocate(a, b);
            boolean zeroes = (ns.identity().dlfeat() & 0x7) == 1;
            for (LbaRange r : List.of(a, b)) {
                if (zeroes) {
                    Arrays.fill(
                            model2, (int) (r.lba() * NS2_BLOCK), (int) ((r.lba() + r.blocks()) * NS2_BLOCK), (byte) 0);
                } else {
                    unknown2.set((int) r.lba(), (int) (r.lba() + r.blocks()));
                }
            }
            // Whatever DLFEAT says, the blocks around the ranges are untouched.
            verifyRange(ns, lba - 16, 2048 + 4096 + 8 + 32, "around deallocated ranges");
            System.out.println("Dataset Management deallocate: completed; read as zeroes asserted: " + zeroes);
        } else {
            System.out.println("ONCS has no Dataset Management: not tested");
        }
        if ((oncs & 1) != 0) {
            ByteBuffer same = ByteBuffer.allocateDirect(8 * NS2_BLOCK);
            same.put(0, model2, 0, same.capacity());
            ns.compare(0, 8, same);
            same.put(3, (byte) ~same.get(3));
            NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> ns.compare(0, 8, same));
            assertEquals(2, e.sct(), e.getMessage());
            assertEquals(0x85, e.sc(), e.getMessage());
            System.out.println("Compare: match and Compare Failure verified");
        } else {
            System.out.println("ONCS has no Compare: not tested");
        }
        ns.flush();
        assertTrue(c.isOpen(), "controller still up: " + c.failure());
    }

    // ---------------------------------------------------------------- 6. orderly close

    @Test
    @Order(7)
    void closeCompletesTheShutdownHandshake() throws Exception {
        Controller c = requireController();
        Namespace ns = c.namespace(NS2);
        int before = warnings.size();
        long t0 = System.nanoTime();
        c.close();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        timings.add("close (CC.SHN, CSTS.SHST): " + ms + " ms");
        ctrl = null;
        List<String> newWarnings = describe(warnings.subList(before, warnings.size()));
        assertEquals(List.of(), newWarnings, "warnings while closing (a failed shutdown handshake logs one)");
        assertFalse(c.isOpen());
        assertNull(c.failure(), "the controller failed instead of closing: " + c.failure());
        assertFalse(ns.isActive());
        assertThrows(NvmeTransportException.class, () -> ns.read(0, 1, ByteBuffer.allocate(NS2_BLOCK)));
        c.close(); // idempotent
    }

    // ---------------------------------------------------------------- 4. digests

    @Test
    @Order(8)
    void verifiedPassWithHeaderAndDataDigests() throws Exception {
        String uri = base + "/" + NQN + "?nsid=2&queues=2&depth=16&digest=header,data&" + COMMON;
        try (Controller c = retry(() -> Nvme.connect(uri))) {
            assertTrue(c.uri().headerDigest() && c.uri().dataDigest());
            assertEquals(2, c.ioQueueCount());
            Namespace ns = c.namespace();
            assertEquals(NS2, ns.nsid());
            // Rewrite 12 MiB (mixed sizes, one over 4 MiB) in the middle, read it back; then read 8 MiB that the first
            // controller wrote and check it too.
            long start = 20L * MiB;
            List<Extent> extents = cover(ns, start, 12L * MiB, 5);
            long seed = seeds.getAndIncrement();
            Set<Long> queuesUsed = ConcurrentHashMap.newKeySet();
            run(c, "digest write", extents, true, seed, 4, 4, queuesUsed);
            assertEquals(2, queuesUsed.size(), "digest writes used both queues");
            List<Extent> check = new ArrayList<>(extents);
            Collections.reverse(check);
            check.addAll(cover(ns, 4L * MiB, 8L * MiB, 7));
            run(c, "digest read+verify", check, false, seed, 4, 4, queuesUsed);
            ns.flush();
            assertTrue(c.isOpen(), "controller failed: " + c.failure());
        }
    }

    // ---------------------------------------------------------------- CLI

    /**
     * The CLI against nvmet: discover, id-ctrl and id-ns as JSON, and a 64 KiB write + read of namespace 2 (the
     * final pass checks those bytes through the library too). Runs what {@code bin/nvmeof} execs — the module's jar
     * and build/lib — without the launcher's build-on-demand step, which would rebuild the module under test in the
     * middle of this run whenever a source is newer than the jar (it did, while others were editing).
     */
    @Test
    @Order(9)
    void cliDiscoverIdentifyWriteRead() throws Exception {
        Path repo = repoRoot();
        Path launcher = repo.resolve("bin/nvmeof");
        Assumptions.assumeTrue(Files.isExecutable(launcher), "no bin/nvmeof yet: CLI not tested");
        Matcher main = Pattern.compile("io\\.nvmeof\\.[\\w.]+Cli\\b").matcher(Files.readString(launcher));
        Assumptions.assumeTrue(main.find(), "bin/nvmeof names no CLI class");
        Path jar;
        try (var files = Files.list(repo.resolve("initiator/build"))) {
            jar = files.filter(f -> f.getFileName().toString().matches("nvmeof-initiator-.*(?<!-tests)\\.jar"))
                    .findFirst()
                    .orElse(null);
        }
        Assumptions.assumeTrue(
                jar != null && Files.isDirectory(repo.resolve("initiator/build/lib")),
                "initiator not packaged (no jar or build/lib)");
        List<String> java = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-cp",
                jar + ":" + repo.resolve("initiator/build/lib") + "/*",
                main.group());
        ObjectMapper json = new ObjectMapper();

        Proc d = cli(java, "discover", base);
        assertEquals(0, d.rc, "nvmeof discover failed:\n" + d.out);
        assertTrue(d.out.contains("subnqn:  " + NQN) || d.out.contains(NQN), "discover output lacks " + NQN);
        assertTrue(d.out.contains("trtype:  tcp") || d.out.contains("tcp"), "discover output lacks the transport");
        assertTrue(d.out.contains("10.0.2.15"), "discover output lacks the guest's TRADDR");

        Proc i = cli(java, "id-ctrl", base + "/" + NQN, "--output-format", "json");
        assertEquals(0, i.rc, "nvmeof id-ctrl failed:\n" + i.out);
        JsonNode n = json.readTree(i.out.substring(Math.max(0, i.out.indexOf('{'))));
        assertEquals("Linux", text(n, "mn"), "mn in " + n);
        assertEquals(NQN, text(n, "subnqn"), "subnqn in " + n);
        assertTrue(text(n, "fr").startsWith("6.1"), "fr in " + n);
        assertFalse(text(n, "sn").isBlank(), "sn in " + n);

        Proc ns = cli(java, "id-ns", base + "/" + NQN, "-n", "2", "--output-format", "json");
        assertEquals(0, ns.rc, "nvmeof id-ns failed:\n" + ns.out);
        JsonNode m = json.readTree(ns.out.substring(Math.max(0, ns.out.indexOf('{'))));
        assertEquals(Long.toString(ns2Bytes / NS2_BLOCK), text(m, "nsze"), "nsze in " + m);

        // 64 KiB (R2T) at the end of the scratch area, away from the deallocated ranges.
        long lba = ns2Bytes / NS2_BLOCK - 128;
        byte[] data = new byte[64 * KiB];
        fill(data, 0, data.length, seeds.getAndIncrement(), lba * NS2_BLOCK);
        Path in = work.resolve("cli-in.bin");
        Path out = work.resolve("cli-out.bin");
        Files.write(in, data);
        Proc w = cli(
                java,
                "write",
                base + "/" + NQN,
                "-n",
                "2",
                "-s",
                Long.toString(lba),
                "-z",
                Integer.toString(data.length),
                "-d",
                in.toString());
        assertEquals(0, w.rc, "nvmeof write failed:\n" + w.out);
        System.arraycopy(data, 0, model2, (int) (lba * NS2_BLOCK), data.length);
        Proc r = cli(
                java,
                "read",
                base + "/" + NQN,
                "-n",
                "2",
                "-s",
                Long.toString(lba),
                "-z",
                Integer.toString(data.length),
                "-d",
                out.toString());
        assertEquals(0, r.rc, "nvmeof read failed:\n" + r.out);
        byte[] got = Files.readAllBytes(out);
        assertEquals(data.length, got.length, "bytes nvmeof read wrote to its --data file");
        expectEqual(NS2, lba * NS2_BLOCK, got, 0, got.length, "nvmeof read after nvmeof write");
    }

    private static Proc cli(List<String> java, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(java);
        cmd.addAll(List.of(args));
        long t0 = System.nanoTime();
        Proc p = exec(cmd, Duration.ofMinutes(2));
        System.out.printf(
                "--- nvmeof %s (rc %d, %.1f s) ---%n%s%n",
                String.join(" ", args), p.rc, (System.nanoTime() - t0) / 1e9, p.out);
        return p;
    }

    // ---------------------------------------------------------------- final check, threads, guest side

    // ---------------------------------------------------------------- reconnect

    /**
     * Reconnect against the kernel's nvmet-tcp through a fault proxy on the host: verified writes while the connection
     * is cut (nvmet sees it close), then while it is blackholed (nvmet keeps the old controller until its keep-alive
     * timer ends it, so the host connects again with the same Host ID while the old controller still exists: nvmet
     * gives a new CNTLID). Every write completes (retried), and the final pass reads them all back.
     */
    @Test
    @Order(10)
    void reconnectsThroughACutAndABlackholeWithEveryWriteKept() throws Exception {
        int warningsBefore = warnings.size();
        List<ControllerStateEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (TcpProxy proxy = TcpProxy.start(new java.net.InetSocketAddress("127.0.0.1", port));
                Controller c = retry(() -> Nvme.connect(
                        NvmeUri.parse("nvme+tcp://127.0.0.1:" + proxy.port() + "/" + NQN
                                + "?nsid=2&queues=2&depth=16&keep_alive_tmo=5&timeout=10s&reconnect_delay=1"
                                + "&ctrl_loss_tmo=120"),
                        ConnectOptions.builder().stateListener(events::add).build()))) {
            Namespace ns = c.namespace();
            int firstCntlid = c.cntlid();
            Runnable[] faults = {proxy::cutConnections, proxy::blackholeConnections};
            for (int i = 0; i < faults.length; i++) {
                long reconnects = c.reconnectCount();
                List<Extent> extents = cover(ns, (8L + 4 * i) * MiB, 4L * MiB, 3 + i);
                long seed = seeds.getAndIncrement();
                Runnable fault = faults[i];
                Thread injector = new Thread(() -> {
                    try {
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        return;
                    }
                    fault.run();
                });
                injector.start();
                long t0 = System.nanoTime();
                run(c, "writes across fault " + i, extents, true, seed, 4, 4, ConcurrentHashMap.newKeySet());
                injector.join();
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (c.reconnectCount() == reconnects && System.nanoTime() < end) {
                    Thread.sleep(20);
                }
                timings.add("reconnect " + i + ": writes + reconnect " + (System.nanoTime() - t0) / 1_000_000 + " ms");
                assertTrue(c.reconnectCount() > reconnects, "reconnected after fault " + i + ": " + events);
                run(c, "read+verify after fault " + i, extents, false, seed, 4, 4, ConcurrentHashMap.newKeySet());
            }
            assertTrue(c.cntlid() != firstCntlid, "a new controller");
            assertEquals(io.nvmeof.initiator.ControllerState.LIVE, c.state());
        }
        // The reconnects log warnings (the loss, the state change); only those.
        synchronized (warnings) {
            List<LogRecord> mine = warnings.subList(warningsBefore, warnings.size());
            for (String w : describe(mine)) {
                assertTrue(
                        w.contains("RECONNECTING") || w.contains(" lost (") || w.contains("reconnect"),
                        "an unexpected warning while reconnecting: " + w);
            }
            mine.clear();
        }
    }

    @Test
    @Order(11)
    void everythingWrittenReadsBackOnAFreshConnectionAndNoThreadsRemain() throws Exception {
        try (Controller c = retry(() -> Nvme.connect(base + "/" + NQN + "?queues=2&depth=32&" + COMMON))) {
            List<Extent> all = new ArrayList<>();
            for (long off = 0; off < ns2Bytes; off += MiB) {
                all.add(new Extent(c.namespace(NS2), off, MiB));
            }
            for (long off = 0; off < NS3_BYTES; off += 4 * MiB) {
                all.add(new Extent(c.namespace(NS3), off, 4 * MiB));
            }
            run(c, "final read+verify", all, false, 0, 4, 4, ConcurrentHashMap.newKeySet());
        }
        // No controller threads left, no non-daemon nvme thread at all.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        List<String> left;
        while (true) {
            left = new ArrayList<>();
            for (Map.Entry<Thread, StackTraceElement[]> e :
                    Thread.getAllStackTraces().entrySet()) {
                Thread t = e.getKey();
                String name = t.getName().toLowerCase();
                boolean ours = name.contains("nvme") || name.contains("netty") || name.contains("epoll");
                // Daemon transport event loops may stay (HostEventLoops: shared, never shut down); controller threads
                // and anything non-daemon of ours must be gone.
                boolean leaked =
                        (ours && !t.isDaemon() && !threadsBefore.contains(t)) || name.startsWith("nvmeof-ctrl-");
                if (leaked) {
                    left.add(t.getName() + (t.isDaemon() ? " (daemon)" : " (NON-DAEMON)") + " " + t.getState()
                            + "\n    "
                            + Arrays.stream(e.getValue())
                                    .limit(12)
                                    .map(String::valueOf)
                                    .reduce((a, b) -> a + "\n    " + b)
                                    .orElse(""));
                }
            }
            if (left.isEmpty() || System.nanoTime() - deadline > 0) {
                break;
            }
            Thread.sleep(200);
        }
        System.out.println("threads after every controller closed:");
        Thread.getAllStackTraces().keySet().stream()
                .map(t -> "  " + t.getName() + (t.isDaemon() ? " daemon " : " ") + t.getState())
                .sorted()
                .forEach(System.out::println);
        assertEquals(List.of(), left, "threads left behind after every controller was closed");
        assertEquals(List.of(), describe(warnings), "initiator warnings during the run");
    }

    @Test
    @Order(12)
    void guestSeesTheDataAndLoggedNoErrors() throws Exception {
        // The bytes are in the target's backing file: md5 of namespace 2 (before the scratch area) taken in the guest.
        long len = ns2Bytes - NS2_SCRATCH;
        assertTrue(unknown2.nextSetBit(0) < 0 || unknown2.nextSetBit(0) >= len / NS2_BLOCK);
        Files.writeString(vm.jobDir().resolve("md5-request"), "0 " + len + "\n");
        MessageDigest md5 = MessageDigest.getInstance("MD5");
        md5.update(model2, 0, (int) len);
        String expected = HexFormat.of().formatHex(md5.digest());
        int rc = vm.stop(Duration.ofMinutes(3));
        String out = vm.output();
        Matcher m = Pattern.compile("(?m)^INFO md5 ns2 0 " + len + " ([0-9a-f]{32})$")
                .matcher(out);
        String kernel = PeerVm.kernelLog(out);
        System.out.println("--- guest kernel log while the host worked ---\n" + kernel);
        assertEquals(0, rc, "run.sh / guest script status\n" + PeerVm.tail(vm.runLog(), 40));
        assertTrue(m.find(), "no md5 line from the guest:\n" + PeerVm.tail(out, 40));
        assertEquals(
                expected, m.group(1), "md5 of namespace 2 bytes 0.." + len + " in the guest vs what the host wrote");
        int[] mapFailures = {0};
        // the refusals commandsOverFourMiB provoked (and reported)
        List<String> bad = PeerVm.complaints(
                kernel,
                line -> line.contains("nvmet_tcp: queue")
                        && line.endsWith("failed to map data")
                        && ++mapFailures[0] <= refusedLargeCommands);
        assertEquals(List.of(), bad, "the guest kernel complained");
        assertTrue(kernel.contains("creating nvm controller"), "nvmet logged no I/O controller:\n" + kernel);
    }

    // ================================================================= helpers

    record Extent(Namespace ns, long offset, int length) {
        @Override
        public String toString() {
            return "nsid " + ns.nsid() + " bytes " + offset + "+" + length;
        }
    }

    /** Consecutive extents of the SIZES cycle (starting at index {@code phase}) covering [start, start+len). */
    static List<Extent> cover(Namespace ns, long start, long len, int phase) {
        List<Extent> out = new ArrayList<>();
        int bs = ns.blockSize();
        long off = start;
        int i = phase;
        while (off < start + len) {
            int size = SIZES[i++ % SIZES.length];
            size = Math.min(NVMET_MAX_TRANSFER, Math.max(bs, size / bs * bs));
            size = (int) Math.min(size, start + len - off);
            out.add(new Extent(ns, off, size));
            off += size;
        }
        return out;
    }

    /**
     * Runs the extents from {@code threads} threads chosen so that every I/O queue gets two (the initiator maps a
     * thread to queue {@code threadId % queues}), each with up to {@code depth} commands in flight. Writes fill a
     * pattern (seeded) and update the model first; reads are compared with the model on the submitting thread.
     */
    private void run(
            Controller c,
            String what,
            List<Extent> extents,
            boolean write,
            long seed,
            int threads,
            int depth,
            Set<Long> queuesUsed)
            throws Exception {
        int queues = c.ioQueueCount();
        AtomicInteger next = new AtomicInteger();
        AtomicReference<Throwable> error = new AtomicReference<>();
        List<Thread> workers = workers(threads, queues, () -> {
            long q = Thread.currentThread().getId() % queues;
            ArrayDeque<Object[]> inFlight = new ArrayDeque<>();
            try {
                while (error.get() == null) {
                    int idx = next.getAndIncrement();
                    if (idx >= extents.size()) {
                        break;
                    }
                    Extent x = extents.get(idx);
                    ByteBuffer buf = idx % 2 == 0 ? ByteBuffer.allocateDirect(x.length) : ByteBuffer.allocate(x.length);
                    int bs = x.ns.blockSize();
                    CompletableFuture<Void> f;
                    if (write) {
                        byte[] model = model(x.ns.nsid());
                        fill(model, (int) x.offset, x.length, seed, x.offset);
                        buf.put(0, model, (int) x.offset, x.length);
                        if (x.ns.nsid() == NS2) {
                            synchronized (unknown2) {
                                unknown2.clear((int) (x.offset / bs), (int) ((x.offset + x.length) / bs));
                            }
                        }
                        f = x.ns.writeAsync(x.offset / bs, x.length / bs, buf);
                    } else {
                        f = x.ns.readAsync(x.offset / bs, x.length / bs, buf);
                    }
                    queuesUsed.add(q);
                    inFlight.add(new Object[] {f, x, buf});
                    if (inFlight.size() >= depth) {
                        complete(inFlight.poll(), write, q);
                    }
                }
                while (!inFlight.isEmpty()) {
                    complete(inFlight.poll(), write, q);
                }
            } catch (Throwable e) {
                error.compareAndSet(null, e);
            }
        });
        long t0 = System.nanoTime();
        workers.forEach(Thread::start);
        for (Thread t : workers) {
            t.join(TimeUnit.MINUTES.toMillis(8));
            if (t.isAlive()) {
                fail(what + ": worker " + t.getName() + " still running after 8 minutes; controller " + c + " failure "
                        + c.failure());
            }
        }
        double s = (System.nanoTime() - t0) / 1e9;
        long bytes = extents.stream().mapToLong(Extent::length).sum();
        String line = String.format(
                "%s: %d extents, %.1f MiB, %d threads on %d queue(s), %.1f s (%.1f MiB/s)",
                what, extents.size(), bytes / (double) MiB, threads, queues, s, bytes / (double) MiB / s);
        timings.add(line);
        System.out.println(line);
        if (error.get() != null) {
            Throwable e = error.get();
            throw new AssertionError(
                    what + " failed: " + e + (c.failure() != null ? " (controller failure: " + c.failure() + ")" : ""),
                    e);
        }
        assertTrue(c.isOpen(), what + ": controller failed: " + c.failure());
    }

    @SuppressWarnings("unchecked")
    private void complete(Object[] op, boolean write, long queue) {
        CompletableFuture<Void> f = (CompletableFuture<Void>) op[0];
        Extent x = (Extent) op[1];
        ByteBuffer buf = (ByteBuffer) op[2];
        try {
            f.get(3, TimeUnit.MINUTES);
        } catch (Exception e) {
            Throwable cause = e instanceof java.util.concurrent.ExecutionException || e instanceof CompletionException
                    ? e.getCause()
                    : e;
            throw new AssertionError(
                    (write ? "write " : "read ") + x + " on queue " + (queue + 1) + " failed: " + cause, cause);
        }
        if (!write) {
            byte[] got = new byte[x.length];
            buf.get(0, got);
            expectEqual(x.ns.nsid(), x.offset, got, 0, got.length, "read of " + x + " on queue " + (queue + 1));
        }
    }

    /** Threads whose IDs map to every queue, {@code n / queues} (at least 1) per queue. */
    private static List<Thread> workers(int n, int queues, Runnable body) {
        int perQueue = Math.max(1, n / queues);
        int[] count = new int[queues];
        List<Thread> out = new ArrayList<>();
        for (int tries = 0; out.size() < perQueue * queues && tries < 1000; tries++) {
            Thread t = new Thread(body, "interop-io-" + tries);
            int q = (int) (t.getId() % queues);
            if (count[q] < perQueue) {
                count[q]++;
                out.add(t);
            }
        }
        return out;
    }

    /** Reads blocks in commands of at most 1 MiB and compares them with the model. */
    private void verifyRange(Namespace ns, long lba, int blocks, String what) throws NvmeException {
        int bs = ns.blockSize();
        int per = MiB / bs;
        for (long at = lba; at < lba + blocks; at += per) {
            int n = (int) Math.min(per, lba + blocks - at);
            ByteBuffer b = ByteBuffer.allocateDirect(n * bs);
            ns.read(at, n, b);
            byte[] got = new byte[b.capacity()];
            b.get(0, got);
            expectEqual(ns.nsid(), at * bs, got, 0, got.length, what);
        }
    }

    /** Compares bytes read at namespace offset {@code off} with the model (skipping blocks the target may choose). */
    private void expectEqual(int nsid, long off, byte[] got, int from, int len, String what) {
        byte[] model = model(nsid);
        int at = 0;
        while (at < len) {
            int mm = Arrays.mismatch(model, (int) off + at, (int) off + len, got, from + at, from + len);
            if (mm < 0) {
                return;
            }
            long bad = off + at + mm;
            boolean mayDiffer;
            synchronized (unknown2) {
                mayDiffer = nsid == NS2 && unknown2.get((int) (bad / NS2_BLOCK));
            }
            if (mayDiffer) {
                at = (int) (((bad / NS2_BLOCK) + 1) * NS2_BLOCK - off);
                continue;
            }
            int show = (int) Math.min(16, off + len - bad);
            byte[] exp = Arrays.copyOfRange(model, (int) bad, (int) bad + show);
            byte[] act = Arrays.copyOfRange(got, (int) (from + bad - off), (int) (from + bad - off) + show);
            int wrong = 0;
            for (int i = at + mm; i < len; i++) {
                if (model[(int) off + i] != got[from + i]) {
                    wrong++;
                }
            }
            fail(what + ": nsid " + nsid + " first mismatch at byte " + bad + " (LBA " + bad / blockSize(nsid) + " + "
                    + bad % blockSize(nsid) + "), " + wrong + " of " + len + " bytes differ; expected "
                    + HexFormat.of().formatHex(exp) + " got " + HexFormat.of().formatHex(act));
        }
    }

    private byte[] model(int nsid) {
        return nsid == NS2 ? model2 : nsid == NS3 ? model3 : null;
    }

    private static int blockSize(int nsid) {
        return nsid == NS3 ? NS3_BLOCK : NS2_BLOCK;
    }

    /** A pattern no two (seed, offset) pairs share in practice: a 64-bit mix of the seed and the 8-byte word index. */
    static void fill(byte[] dst, int dstOff, int len, long seed, long absOffset) {
        for (int i = 0; i < len; i++) {
            long a = absOffset + i;
            long w = mix(seed * 0x9E3779B97F4A7C15L + (a >>> 3));
            dst[dstOff + i] = (byte) (w >>> ((a & 7) << 3));
        }
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private Controller requireController() {
        Assumptions.assumeTrue(ctrl != null && ctrl.isOpen(), "no connected controller from the connect step");
        return ctrl;
    }

    interface Attempt<T> {
        T get() throws NvmeException;
    }

    /** hostfwd accepts before the guest listens; READY came first, but retry a refused/reset transport a few times. */
    static <T> T retry(Attempt<T> a) throws NvmeException, InterruptedException {
        for (int i = 1; ; i++) {
            try {
                return a.get();
            } catch (NvmeTransportException e) {
                if (i == 5) {
                    throw e;
                }
                System.out.println("attempt " + i + " failed (" + e.getMessage() + "); retrying in 2 s");
                Thread.sleep(2000);
            }
        }
    }

    private static List<String> describe(List<LogRecord> records) {
        synchronized (records) {
            List<String> out = new ArrayList<>();
            for (LogRecord r : records) {
                out.add(r.getLevel() + " " + r.getLoggerName() + ": " + r.getMessage()
                        + (r.getThrown() != null ? " / " + r.getThrown() : ""));
            }
            return out;
        }
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.findValue(field);
        return v == null ? "" : v.asText().trim();
    }

    record Proc(int rc, String out) {}

    private static Proc exec(List<String> cmd, Duration max) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[][] out = new byte[1][];
        Thread pump = new Thread(
                () -> {
                    try {
                        out[0] = p.getInputStream().readAllBytes();
                    } catch (IOException e) {
                        out[0] = ("(output lost: " + e + ")").getBytes(StandardCharsets.UTF_8);
                    }
                },
                "cli-output");
        pump.setDaemon(true);
        pump.start();
        if (!p.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        pump.join(10_000);
        return new Proc(
                p.isAlive() ? 124 : p.exitValue(), out[0] == null ? "" : new String(out[0], StandardCharsets.UTF_8));
    }

    private static Path repoRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("bin"))
                    && Files.exists(p.resolve("pom.xml"))
                    && Files.isDirectory(p.resolve("initiator"))) {
                return p;
            }
        }
        return Path.of("").toAbsolutePath().getParent();
    }

    static long parseSize(String s) {
        String t = s.trim().toUpperCase();
        long mult = 1;
        if (t.endsWith("M")) {
            mult = MiB;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("G")) {
            mult = 1L << 30;
            t = t.substring(0, t.length() - 1);
        }
        return Long.parseLong(t) * mult;
    }
}

package io.nvmeof.initiator.interop;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.DiscoveryLog;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.transport.rdma.RdmaTransport;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import io.nvmeof.transport.rdma.verbs.RdmaProviders;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Our initiator over real verbs, run <em>inside the peer VM</em> by {@code interop/rdma-softroce.sh} (parts (b) and (c)
 * of {@link RdmaSoftRoceIT}): a plain {@code main}, compiled with the test classes and shared into the guest.
 *
 * <p>{@code RdmaGuestCheck LABEL ADDR PORT NQN REGION_BYTES}: refuses to run unless
 * {@code -Dnvmeof.rdma.provider=disni} is set and the DiSNI provider is available and not emulated (so a fallback to
 * the software RNIC cannot fake a pass), then discovers (an entry for NQN with TRTYPE rdma), connects with 2 I/O
 * queues, and on every namespace of NQN:
 * <ul>
 *   <li>writes a pattern over the first REGION_BYTES from two threads (one per I/O queue, thread IDs of different
 *       parity), each its own half, up to 8 commands in flight, mixed sizes (in-capsule ≤ 4 KiB and keyed, 512 B …
 *       1 MiB); thread 0 uses registered buffers from {@link Namespace#allocateBuffer} (zero copy), thread 1 plain
 *       direct buffers (the pool's copy);</li>
 *   <li>reads it back, each thread the <em>other</em> half with another size sequence, into heap buffers, and compares
 *       every byte with the pattern;</li>
 *   <li>prints {@code INFO: nsN sha256 0+REGION = HEX} (the pattern's digest) so the guest script can compare it with
 *       the kernel target's backing file;</li>
 *   <li>unaligned {@link BlockDevice} writes beyond the region (odd offsets, across block boundaries,
 *       read-modify-write) checked against a byte model of a window read before, so neighbours are untouched.</li>
 * </ul>
 * Prints {@code PASS: LABEL ...} per step, {@code FAIL: LABEL ...} on the first failure (exit 1),
 * {@code ALL PASS LABEL} at the end (exit 0).
 */
public final class RdmaGuestCheck {
    static final int MiB = 1 << 20;
    static final int IN_FLIGHT = 8;

    private final String label;
    private final long t0 = System.nanoTime();

    private RdmaGuestCheck(String label) {
        this.label = label;
    }

    public static void main(String[] args) {
        if (args.length != 5) {
            System.out.println("usage: RdmaGuestCheck LABEL ADDR PORT NQN REGION_BYTES");
            System.exit(2);
        }
        RdmaGuestCheck c = new RdmaGuestCheck(args[0]);
        int rc;
        try {
            c.run(args[1], Integer.parseInt(args[2]), args[3], Long.parseLong(args[4]));
            System.out.println("ALL PASS " + c.label);
            rc = 0;
        } catch (Throwable t) {
            System.out.println("FAIL: " + c.label + " " + t);
            t.printStackTrace(System.out);
            rc = 1;
        }
        System.out.flush();
        // The queue threads are daemons or gone after close(); halt so a stuck native thread cannot hang the guest.
        Runtime.getRuntime().halt(rc);
    }

    private void pass(String step) {
        System.out.printf("PASS: %s %s (%d ms)%n", label, step, (System.nanoTime() - t0) / 1_000_000);
        System.out.flush();
    }

    private static void info(String s) {
        System.out.println("INFO: " + s);
        System.out.flush();
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    private void run(String addr, int port, String nqn, long region) throws Exception {
        // ---- the provider: DiSNI on rxe0, never the software RNIC
        String prop = System.getProperty(RdmaTransport.PROVIDER_PROPERTY);
        check("disni".equals(prop), "-D" + RdmaTransport.PROVIDER_PROPERTY + "=disni is not set (it is " + prop + ")");
        RdmaProvider disni = RdmaProviders.find("disni");
        check(disni.isAvailable(), "DiSNI provider unavailable: " + disni.unavailableReason());
        check(!disni.isEmulated(), "the DiSNI provider says it is emulated");
        info("rdma provider: " + disni.description());
        pass("provider disni");

        // ---- discovery
        String base = "nvme+rdma://" + addr + ":" + port;
        long t = System.nanoTime();
        DiscoveryLog log = Nvme.discover(base + "?timeout=60s");
        DiscoveryEntry found = null;
        for (DiscoveryEntry e : log.entries()) {
            info(String.format(
                    "discovery entry: trtype %s subtype %s subnqn %s traddr %s trsvcid %s qptype %s "
                            + "prtype %s cms %s",
                    e.transportName(),
                    e.subtypeName(),
                    e.subnqn(),
                    e.traddr(),
                    e.trsvcid(),
                    e.rdmaQptypeName(),
                    e.rdmaPrtypeName(),
                    e.rdmaCmsName()));
            if (e.isNvmSubsystem() && e.subnqn().equals(nqn) && e.trtype() == DiscoveryEntry.TRTYPE_RDMA) {
                found = e;
            }
        }
        check(found != null, "the discovery log (generation " + log.generation() + ") has no rdma entry for " + nqn);
        check(
                found.rdmaQptype() == 1 && found.rdmaCms() == 1,
                "TSAS of " + nqn + ": qptype " + found.rdmaQptype() + ", cms " + found.rdmaCms()
                        + " (expected 1 = connected, 1 = rdma-cm)");
        pass("discover: " + log.entries().size() + " entries, " + nqn + " at " + found.traddr() + ":" + found.trsvcid()
                + " (" + ms(t) + " ms)");

        // ---- connect, 2 I/O queues
        t = System.nanoTime();
        try (Controller ctrl = Nvme.connect(base + "/" + nqn + "?queues=2&timeout=60s")) {
            info(String.format(
                    "controller: cntlid %d model '%s' fw '%s' version %s, %d I/O queues of %d, "
                            + "in-capsule %d bytes, mdts %d, namespaces %d",
                    ctrl.cntlid(),
                    ctrl.modelNumber().trim(),
                    ctrl.firmwareRevision().trim(),
                    ctrl.version(),
                    ctrl.ioQueueCount(),
                    ctrl.ioQueueDepth(),
                    ctrl.maxInCapsuleData(),
                    ctrl.identity().mdts(),
                    ctrl.namespaces().size()));
            check(ctrl.ioQueueCount() == 2, "I/O queues: " + ctrl.ioQueueCount() + ", expected 2");
            check(!ctrl.namespaces().isEmpty(), "no namespaces");
            noSoftRnicFiles();
            pass("connect -i 2 (" + ms(t) + " ms)");

            long bdBase = region;
            for (Namespace ns : ctrl.namespaces()) {
                check(
                        ns.sizeBytes() >= region + 2 * MiB,
                        "namespace " + ns.nsid() + " is " + ns.sizeBytes() + " bytes, needs " + (region + 2 * MiB));
                t = System.nanoTime();
                verifiedIo(ns, region, 0x5EED0000L + ns.nsid());
                double s = (System.nanoTime() - t) / 1e9;
                pass(String.format(
                        "verified I/O ns%d (bs %d): %d MiB written from 2 threads and read back, every byte "
                                + "checked (%.1f s, %.1f MiB/s)",
                        ns.nsid(), ns.blockSize(), region / MiB, s, 2 * region / MiB / s));
                t = System.nanoTime();
                unaligned(ns.blockDevice(), bdBase, 0xB10CL + ns.nsid());
                pass("BlockDevice unaligned I/O ns" + ns.nsid() + " (" + ms(t) + " ms)");
            }
            noSoftRnicFiles();
            t = System.nanoTime();
        }
        pass("disconnect (" + ms(t) + " ms)");
    }

    private static long ms(long since) {
        return (System.nanoTime() - since) / 1_000_000;
    }

    /**
     * The software RNIC keeps its memory regions in /dev/shm/nvmeof-softrnic/PID-mN: none may exist for this JVM.
     * (PID-reg, its key registry, is created by any availability probe, e.g. {@code Transport.isAvailable()}.)
     */
    private static void noSoftRnicFiles() throws Exception {
        Path dir = Path.of("/dev/shm/nvmeof-softrnic");
        if (Files.isDirectory(dir)) {
            String pid = Long.toString(ProcessHandle.current().pid());
            try (var s = Files.list(dir)) {
                List<Path> mine = s.filter(p -> p.getFileName().toString().startsWith(pid + "-m"))
                        .toList();
                check(mine.isEmpty(), "software RNIC memory regions of this JVM exist: " + mine);
            }
        }
    }

    // ------------------------------------------------------------------------------------------ the pattern

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The pattern word at absolute namespace offset {@code 8 * index}: a hash of (seed, index), little-endian. */
    static long word(long seed, long index) {
        return mix(seed * 0x9E3779B97F4A7C15L + index);
    }

    /** Fills {@code len} bytes (a multiple of 8, as {@code off}) of {@code b} from index 0 with the pattern at off. */
    static void fill(ByteBuffer b, long seed, long off, int len) {
        ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < len; i += 8) {
            le.putLong(i, word(seed, (off + i) >>> 3));
        }
    }

    static void verify(ByteBuffer b, long seed, long off, int len, int nsid) {
        ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < len; i += 8) {
            long want = word(seed, (off + i) >>> 3);
            long got = le.getLong(i);
            if (got != want) {
                int bad = 0;
                for (int j = i; j < len; j += 8) {
                    if (le.getLong(j) != word(seed, (off + j) >>> 3)) {
                        bad++;
                    }
                }
                throw new AssertionError(String.format(
                        "ns%d: 8 bytes at offset %d are %016x, expected %016x (%d of %d "
                                + "words of the read at offset %d, length %d, differ)",
                        nsid, off + i, got, want, bad, len / 8, off, len));
            }
        }
    }

    /** Transfer sizes, in bytes, multiples of the block size, at most one command. */
    static int[] sizes(Namespace ns, boolean forWrite) {
        int bs = ns.blockSize();
        int max = Math.min(MiB, ns.maxBlocksPerCommand() * bs);
        List<Integer> l = new ArrayList<>();
        // in-capsule (≤ 4 KiB on our target and nvmet), just above it (keyed), medium, the 1 MiB MDTS, odd counts
        int[] want = forWrite
                ? new int[] {4096, 65536, MiB, 512, 8192, 12288, 131072, 1536, 3 * 4096, 4096 + 512}
                : new int[] {131072, 4096, MiB, 65536, 512, 256 * 1024, 20480};
        for (int w : want) {
            int s = Math.min(max, Math.max(bs, w / bs * bs));
            l.add(s);
        }
        return l.stream().mapToInt(Integer::intValue).toArray();
    }

    private void verifiedIo(Namespace ns, long region, long seed) throws Exception {
        int bs = ns.blockSize();
        check(region % (2L * MiB) == 0, "region must be a multiple of 2 MiB");
        long half = region / 2;
        AtomicReference<Throwable> error = new AtomicReference<>();
        // write: thread i its own half
        Thread[] ts = new Thread[2];
        for (int i = 0; i < 2; i++) {
            final int me = i;
            ts[i] = new Thread(
                    () -> {
                        try {
                            pump(ns, true, me * half, half, sizes(ns, true), me == 0, seed);
                        } catch (Throwable e) {
                            error.compareAndSet(null, e);
                        }
                    },
                    "rdma-check-writer-" + i);
        }
        info("ns" + ns.nsid() + ": writer threads " + ts[0].getId() + " and " + ts[1].getId() + " (queue = id % 2: "
                + ts[0].getId() % 2 + ", " + ts[1].getId() % 2 + "), block size " + bs);
        for (Thread x : ts) {
            x.start();
        }
        for (Thread x : ts) {
            x.join(TimeUnit.MINUTES.toMillis(4));
            check(!x.isAlive(), x.getName() + " still running after 4 minutes");
        }
        if (error.get() != null) {
            throw new AssertionError("ns" + ns.nsid() + " write pass: " + error.get(), error.get());
        }
        // read back: thread i reads the other half, other sizes, heap buffers (a copy out of the pool)
        for (int i = 0; i < 2; i++) {
            final int other = 1 - i;
            ts[i] = new Thread(
                    () -> {
                        try {
                            pump(ns, false, other * half, half, sizes(ns, false), false, seed);
                        } catch (Throwable e) {
                            error.compareAndSet(null, e);
                        }
                    },
                    "rdma-check-reader-" + i);
        }
        for (Thread x : ts) {
            x.start();
        }
        for (Thread x : ts) {
            x.join(TimeUnit.MINUTES.toMillis(4));
            check(!x.isAlive(), x.getName() + " still running after 4 minutes");
        }
        if (error.get() != null) {
            throw new AssertionError("ns" + ns.nsid() + " read-back pass: " + error.get(), error.get());
        }
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        ByteBuffer chunk = ByteBuffer.allocate(MiB);
        for (long off = 0; off < region; off += MiB) {
            fill(chunk, seed, off, MiB);
            md.update(chunk.duplicate().clear());
        }
        info("ns" + ns.nsid() + " sha256 0+" + region + " = " + HexFormat.of().formatHex(md.digest()));
    }

    /**
     * Writes (fills with the pattern) or reads (and verifies) [from, from+len) with up to {@link #IN_FLIGHT} commands
     * outstanding; the sizes cycle through {@code sizes}.
     */
    private static void pump(
            Namespace ns, boolean write, long from, long len, int[] sizes, boolean registered, long seed)
            throws Exception {
        int bs = ns.blockSize();
        int maxLen = 0;
        for (int s : sizes) {
            maxLen = Math.max(maxLen, s);
        }
        ByteBuffer[] bufs = new ByteBuffer[IN_FLIGHT];
        for (int i = 0; i < IN_FLIGHT; i++) {
            bufs[i] = write
                    ? (registered ? ns.allocateBuffer(maxLen / bs) : ByteBuffer.allocateDirect(maxLen))
                    : ByteBuffer.allocate(maxLen);
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] pending = new CompletableFuture[IN_FLIGHT];
        ByteBuffer[] views = new ByteBuffer[IN_FLIGHT];
        long[] pendOff = new long[IN_FLIGHT];
        int[] pendLen = new int[IN_FLIGHT];
        long off = from;
        long end = from + len;
        int k = 0;
        int slot = 0;
        while (off < end || anyPending(pending)) {
            if (pending[slot] != null) {
                pending[slot].get(120, TimeUnit.SECONDS);
                if (!write) {
                    verify(views[slot], seed, pendOff[slot], pendLen[slot], ns.nsid());
                }
                pending[slot] = null;
            }
            if (off < end) {
                int n = (int) Math.min(sizes[k++ % sizes.length], end - off);
                ByteBuffer b = bufs[slot].duplicate().clear().limit(n).slice();
                if (write) {
                    fill(b, seed, off, n);
                    pending[slot] = ns.writeAsync(off / bs, n / bs, b);
                } else {
                    pending[slot] = ns.readAsync(off / bs, n / bs, b);
                }
                views[slot] = b;
                pendOff[slot] = off;
                pendLen[slot] = n;
                off += n;
            }
            slot = (slot + 1) % IN_FLIGHT;
        }
    }

    private static boolean anyPending(CompletableFuture<Void>[] p) {
        for (CompletableFuture<Void> f : p) {
            if (f != null) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------ BlockDevice

    /**
     * Unaligned writes in a window at {@code base} (beyond the verified region), checked against a model of the window
     * read before: odd offsets, lengths that straddle block boundaries, a 3-byte write inside one block, a write
     * larger than one command (1 MiB + 777 bytes).
     */
    private static void unaligned(BlockDevice bd, long base, long seed) throws Exception {
        int window = 2 * MiB;
        byte[] model = new byte[window];
        ByteBuffer before = ByteBuffer.allocate(window);
        check(bd.read(base, before) == window, "short read of the window");
        before.flip().get(model);
        Random r = new Random(seed);
        long[][] writes = {
            {123, 10_000},
            {bd.blockSize() - 1, 3},
            {4095, 2},
            {70_001, MiB + 777},
            {5, 1},
            {window - 1000, 1000},
            {8191, 4097}
        };
        for (long[] w : writes) {
            int off = (int) w[0];
            int n = (int) w[1];
            byte[] data = new byte[n];
            r.nextBytes(data);
            ByteBuffer src = (n % 2 == 0)
                    ? ByteBuffer.wrap(data)
                    : ByteBuffer.allocateDirect(n).put(data).flip();
            check(bd.write(base + off, src) == n, "short unaligned write of " + n + " at +" + off);
            check(!src.hasRemaining(), "the write did not consume the buffer");
            System.arraycopy(data, 0, model, off, n);
        }
        // read back: whole window at once, and a few odd pieces
        ByteBuffer all = ByteBuffer.allocateDirect(window);
        check(bd.read(base, all) == window, "short read of the window");
        all.flip();
        for (int i = 0; i < window; i++) {
            if (all.get(i) != model[i]) {
                throw new AssertionError("BlockDevice: byte at +" + i + " of the window at " + base + " is "
                        + all.get(i) + ", expected " + model[i]);
            }
        }
        int[][] pieces = {{1, 1}, {123, 10_000}, {70_000, 300_000}, {window - 1001, 1001}};
        for (int[] p : pieces) {
            ByteBuffer b = ByteBuffer.allocate(p[1]);
            check(bd.read(base + p[0], b) == p[1], "short read");
            for (int i = 0; i < p[1]; i++) {
                if (b.get(i) != model[p[0] + i]) {
                    throw new AssertionError("BlockDevice: unaligned read at +" + p[0] + " byte " + i + " differs");
                }
            }
        }
    }
}

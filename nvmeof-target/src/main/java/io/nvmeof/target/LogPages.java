package io.nvmeof.target;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.target.namespace.NamespaceCounters;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.SortedSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/** Builders of the log pages (nvmeof-protocol.md §3.3). Admin path: they allocate. */
final class LogPages {
    static final int CHANGED_NS_MAX = 1024;
    static final int DISCOVERY_HEADER = 1024;
    static final int DISCOVERY_ENTRY = 1024;
    /** Discovery entry SUBTYPE (nvmeof-protocol.md §3.3). */
    static final int SUBTYPE_NVM = 2;

    static final int SUBTYPE_CURRENT_DISCOVERY = 3;
    /** Discovery entry CNTLID 0xFFFF: the dynamic controller model (nvmeof-protocol.md §3.3). */
    static final int CNTLID_DYNAMIC = 0xFFFF;

    // The vendor-specific log page of nvmeof-java (LogPageId.VENDOR_PERF_STATS, LID 0xC0): the target process's CPU
    // use and work done, so a benchmarking host can measure the target's CPU cost per I/O over the fabric itself
    // (bin/nvmeof-perf). Other targets answer it with Invalid Field or Invalid Log Page (nvmeof-protocol.md §3.3).
    /** Size of the vendor page; bytes after the last field are zero (reserved). */
    static final int PERF_STATS_SIZE = 512;
    /** Bytes 0–3 of the vendor page: ASCII "NVOJ". */
    static final int PERF_STATS_MAGIC = 'N' | ('V' << 8) | ('O' << 16) | ('J' << 24);

    static final int PERF_STATS_VERSION = 1;
    /** USER_HZ: /proc/self/stat counts CPU time in clock ticks of 10 ms on Linux. */
    static final long CLOCK_TICK_NANOS = 10_000_000L;
    /** Origin of the page's monotonic clock: when this class was loaded, i.e. about when the target started. */
    private static final long PROCESS_ORIGIN_NANOS = System.nanoTime();

    private LogPages() {}

    private static ByteBuffer page(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Error Information, LID 0x01: 64-byte entries, newest first (nvmeof-protocol.md §3.3). */
    static ByteBuffer errors(AtomicReferenceArray<long[]> entries, long count) {
        int n = entries.length();
        ByteBuffer b = page(64 * n);
        int out = 0;
        for (long k = count; k > 0 && k > count - n; k--) {
            long[] e = entries.get((int) ((k - 1) % n));
            if (e == null || e[0] != k) {
                continue; // overwritten meanwhile
            }
            int at = 64 * out++;
            b.putLong(at, e[0]); // error count
            b.putShort(at + 8, (short) e[1]); // SQID
            b.putShort(at + 10, (short) e[2]); // CID
            b.putShort(at + 12, (short) e[3]); // status field
            b.putShort(at + 14, (short) 0xFFFF); // parameter error location: none
            b.putInt(at + 24, (int) e[4]); // NSID
        }
        return b;
    }

    /** SMART / Health Information, LID 0x02 (nvmeof-protocol.md §3.3): real data-unit and command counters, no warnings. */
    static ByteBuffer health(Subsystem subsystem, int nsid, long createdNanos) {
        ByteBuffer b = page(512);
        long read = 0;
        long written = 0;
        long reads = 0;
        long writes = 0;
        RamNamespace only = subsystem.namespace(nsid);
        List<RamNamespace> all = only != null ? List.of(only) : subsystem.namespaces();
        for (RamNamespace ns : all) {
            NamespaceCounters c = ns.counters();
            read += c.bytesRead();
            written += c.bytesWritten();
            reads += c.readCommands();
            writes += c.writeCommands();
        }
        b.put(3, (byte) 100); // available spare %
        b.put(4, (byte) 10); // available spare threshold %
        b.putLong(32, dataUnits(read)); // data units read
        b.putLong(48, dataUnits(written)); // data units written
        b.putLong(64, reads); // host read commands
        b.putLong(80, writes); // host write commands
        b.putLong(112, 1); // power cycles
        b.putLong(128, TimeUnit.NANOSECONDS.toHours(System.nanoTime() - createdNanos)); // power-on hours
        return b;
    }

    /** Data units are thousands of 512-byte units, rounded up (nvmeof-protocol.md §3.3). */
    static long dataUnits(long bytes) {
        long sectors = (bytes + 511) / 512;
        return (sectors + 999) / 1000;
    }

    /**
     * The nvmeof-java performance page, LID 0xC0 (vendor specific, nvmeof-protocol.md §3.3), little endian:
     * <pre>
     *   0  u32 magic, ASCII "NVOJ"           4  u16 version (1)          6  u16 page size in bytes (512)
     *   8  u64 process user CPU, ns          (from /proc/self/stat utime; resolution: byte 56)
     *  16  u64 process system CPU, ns        (stime; same resolution)
     *  24  u64 process CPU, ns               (user + system from the JVM, ns resolution; 0 if unknown)
     *  32  u64 monotonic clock, ns           (since the target process started; for rates between two reads)
     *  40  u64 commands completed            (NVM Read/Write/Compare commands on this subsystem's namespaces)
     *  48  u32 available processors          52  u32 process ID
     *  56  u64 resolution of bytes 8 and 16, ns (10 ms: USER_HZ)
     *  64  u64 bytes read                    72  u64 bytes written   (this subsystem's namespaces)
     *  80..511 reserved (0)
     * </pre>
     * Every counter only grows while the target runs; a host reads the page before and after a measurement and
     * divides the differences.
     */
    static ByteBuffer perfStats(Subsystem subsystem) {
        ByteBuffer b = page(PERF_STATS_SIZE);
        b.putInt(0, PERF_STATS_MAGIC);
        b.putShort(4, (short) PERF_STATS_VERSION);
        b.putShort(6, (short) PERF_STATS_SIZE);
        long[] ticks = procSelfStatTicks();
        b.putLong(8, ticks[0] * CLOCK_TICK_NANOS);
        b.putLong(16, ticks[1] * CLOCK_TICK_NANOS);
        b.putLong(24, processCpuNanos());
        b.putLong(32, System.nanoTime() - PROCESS_ORIGIN_NANOS);
        long commands = 0;
        long read = 0;
        long written = 0;
        for (RamNamespace ns : subsystem.namespaces()) {
            NamespaceCounters c = ns.counters();
            commands += c.readCommands() + c.writeCommands();
            read += c.bytesRead();
            written += c.bytesWritten();
        }
        b.putLong(40, commands);
        b.putInt(48, Runtime.getRuntime().availableProcessors());
        b.putInt(52, (int) ProcessHandle.current().pid());
        b.putLong(56, CLOCK_TICK_NANOS);
        b.putLong(64, read);
        b.putLong(72, written);
        return b;
    }

    /** utime and stime of this process in clock ticks (fields 14 and 15 of /proc/self/stat); zeros if unreadable. */
    static long[] procSelfStatTicks() {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/stat"));
            // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
        } catch (java.io.IOException | RuntimeException e) {
            return new long[] {0, 0};
        }
    }

    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os =
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return Math.max(0, sun.getProcessCpuTime());
        }
        return 0;
    }

    /** Changed Namespace List, LID 0x04 (nvmeof-protocol.md §3.3). */
    static ByteBuffer changedNamespaces(SortedSet<Integer> changed) {
        ByteBuffer b = page(4096);
        if (changed.contains(0xFFFFFFFF)) {
            b.putInt(0, 0xFFFFFFFF);
            return b;
        }
        int i = 0;
        for (int nsid : changed) {
            b.putInt(4 * i++, nsid);
        }
        return b;
    }

    /** Commands Supported and Effects, LID 0x05 (nvmeof-protocol.md §3.3): CSUPP, plus LBCC for commands that change blocks. */
    static ByteBuffer commandEffects() {
        final int csupp = 1;
        final int lbcc = 1 << 1;
        ByteBuffer b = page(4096);
        for (AdminOpcode op : new AdminOpcode[] {
            AdminOpcode.GET_LOG_PAGE,
            AdminOpcode.IDENTIFY,
            AdminOpcode.ABORT,
            AdminOpcode.SET_FEATURES,
            AdminOpcode.GET_FEATURES,
            AdminOpcode.ASYNC_EVENT_REQUEST,
            AdminOpcode.KEEP_ALIVE
        }) {
            b.putInt(4 * op.code(), csupp);
        }
        int io = 1024;
        b.putInt(io + 4 * NvmOpcode.FLUSH.code(), csupp);
        b.putInt(io + 4 * NvmOpcode.WRITE.code(), csupp | lbcc);
        b.putInt(io + 4 * NvmOpcode.READ.code(), csupp);
        b.putInt(io + 4 * NvmOpcode.COMPARE.code(), csupp);
        b.putInt(io + 4 * NvmOpcode.WRITE_ZEROES.code(), csupp | lbcc);
        b.putInt(io + 4 * NvmOpcode.DATASET_MANAGEMENT.code(), csupp | lbcc);
        b.putInt(io + 4 * NvmOpcode.VERIFY.code(), csupp);
        b.putInt(io + 4 * NvmOpcode.COPY.code(), csupp | lbcc);
        for (NvmOpcode op : new NvmOpcode[] {
            NvmOpcode.RESERVATION_REGISTER,
            NvmOpcode.RESERVATION_REPORT,
            NvmOpcode.RESERVATION_ACQUIRE,
            NvmOpcode.RESERVATION_RELEASE
        }) {
            b.putInt(io + 4 * op.code(), csupp); // reservations change no blocks (as nvmet reports them)
        }
        return b;
    }

    /** One discovery log entry (nvmeof-protocol.md §3.3). */
    record DiscoveryEntry(PortInfo port, String address, int subtype, String subnqn) {}

    /** Discovery log page, LID 0x70 (nvmeof-protocol.md §3.3): header then one 1024-byte entry per record. */
    static ByteBuffer discovery(long genctr, List<DiscoveryEntry> entries) {
        ByteBuffer b = page(DISCOVERY_HEADER + DISCOVERY_ENTRY * entries.size());
        b.putLong(0, genctr); // GENCTR
        b.putLong(8, entries.size()); // NUMREC
        b.putShort(16, (short) 0); // RECFMT
        int at = DISCOVERY_HEADER;
        for (DiscoveryEntry e : entries) {
            PortInfo p = e.port();
            b.put(at, (byte) p.transportType()); // TRTYPE
            b.put(at + 1, (byte) p.addressFamily()); // ADRFAM
            b.put(at + 2, (byte) e.subtype()); // SUBTYPE
            b.put(at + 3, (byte) p.treq()); // TREQ
            b.putShort(at + 4, (short) p.portId()); // PORTID
            b.putShort(at + 6, (short) CNTLID_DYNAMIC); // CNTLID
            b.putShort(at + 8, (short) ControllerProfile.DISCOVERY_ASQSZ); // ASQSZ
            IdentifyPages.text(b, at + 32, 32, p.serviceId()); // TRSVCID
            IdentifyPages.nqn(b, at + 256, e.subnqn()); // SUBNQN
            IdentifyPages.text(b, at + 512, 256, e.address()); // TRADDR
            byte[] tsas = p.tsas();
            if (tsas != null) {
                for (int i = 0; i < tsas.length && i < 256; i++) {
                    b.put(at + 768 + i, tsas[i]); // TSAS
                }
            }
            at += DISCOVERY_ENTRY;
        }
        return b;
    }
}

package io.nvmeof.transport.rdma.soft;

import io.nvmeof.core.util.DirectBuffers;
import java.io.IOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The software RNIC of this JVM: one per process, like one device. It owns the per-host directory of shared files,
 * the memory-region registry file that peers map to check rkeys, and the mappings of peers' registries.
 *
 * <p>Files in the directory, all named {@code <pid>-...}: {@code <pid>-reg} (the registry), {@code <pid>-m<n>} (memory
 * from {@link SoftProtectionDomain#allocate}), {@code <pid>-q<n>} (a queue pair's receive ring and completion ring).
 * A process deletes its files on close and at exit; files of processes that no longer exist are deleted when a
 * device starts.
 *
 * <p>Registry layout: a 64-byte header, then {@link #SLOTS} 64-byte slots indexed by {@code key >>> 8}; the low 8 bits
 * of a key change with every registration of the slot, so a stale key never matches. Slot: {@code 0 int state} (the
 * key while valid, 0 when deregistered or invalidated; written last with release, cleared with CAS), {@code 8 long
 * serial} (unique per registration, for peers' mapping caches), {@code 16 long base} (the address of byte 0),
 * {@code 24 long length}, {@code 32 long fileId} (-1: not file-backed), {@code 40 long fileOffset}, {@code 48 int
 * access}, {@code 52 int pd}.
 */
final class SoftDevice {
    static final String DIR_PROPERTY = "nvmeof.softrnic.dir";
    static final String DEFAULT_DIR = "/dev/shm/nvmeof-softrnic";
    static final int SLOTS = 16384;
    static final int SLOT_SIZE = 64;
    static final int REG_HEADER = 64;
    static final int REG_MAGIC = 0x53524547; // "SREG"
    static final int S_STATE = 0,
            S_SERIAL = 8,
            S_BASE = 16,
            S_LENGTH = 24,
            S_FILE = 32,
            S_FILE_OFF = 40,
            S_ACCESS = 48,
            S_PD = 52;
    /** Synthetic addresses: region in slot s covers [BASE + s * 2^32, + length). */
    static final long ADDRESS_BASE = 0x0000_1000_0000_0000L;

    private static SoftDevice instance;
    private static final Cleaner CLEANER = Cleaner.create();

    final Path dir;
    final long pid;
    final String prefix;
    final ByteBuffer registry;
    final AtomicReferenceArray<RegionView> localViews = new AtomicReferenceArray<>(SLOTS);
    final Peer self;
    final SoftProtectionDomain pd;
    private final AtomicLong fileCounter = new AtomicLong();
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    private final byte[] slotGeneration = new byte[SLOTS];
    private long serials;
    private final TreeMap<Long, Allocation> allocations = new TreeMap<>();
    private final Map<Long, Peer> peers = new ConcurrentHashMap<>();
    private final AtomicLong pdIds = new AtomicLong();

    /** A region as a buffer whose index 0 is the region's byte 0; {@code serial} names the registration. */
    record RegionView(long serial, ByteBuffer buffer) {}

    private record Allocation(long fileId, long address, int size) {}

    static synchronized SoftDevice get() throws IOException {
        if (instance == null) {
            instance = new SoftDevice(Paths.get(System.getProperty(DIR_PROPERTY, DEFAULT_DIR)));
        }
        return instance;
    }

    /** Null when a device can be started here, otherwise why not. */
    static String probe() {
        Path dir = Paths.get(System.getProperty(DIR_PROPERTY, DEFAULT_DIR));
        Path parent = dir.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            return "the software RNIC needs a shared-memory directory: " + parent + " does not exist (set -D"
                    + DIR_PROPERTY + "=<dir on a tmpfs>)";
        }
        synchronized (SoftDevice.class) {
            if (instance != null) {
                return null;
            }
        }
        // Only check the directory: starting the device here would create and map this process's registry file in
        // shared memory, even in a JVM that then picks another provider (e.g. DiSNI) or never uses RDMA.
        try {
            Files.createDirectories(dir);
        } catch (IOException | RuntimeException e) {
            return "the software RNIC cannot use " + dir + ": " + e;
        }
        if (!Files.isWritable(dir)) {
            return "the software RNIC cannot use " + dir + ": it is not writable";
        }
        return null;
    }

    private SoftDevice(Path dir) throws IOException {
        this.dir = dir;
        Files.createDirectories(dir);
        if (!Files.isWritable(dir)) {
            throw new IOException(dir + " is not writable");
        }
        this.pid = ProcessHandle.current().pid();
        this.prefix = pid + "-";
        removeStaleFiles();
        // Our own leftovers (pid reuse after a crash) go too.
        removeFilesOf(pid);
        Path reg = dir.resolve(prefix + "reg");
        this.registry = Shm.create(reg, REG_HEADER + (long) SLOTS * SLOT_SIZE);
        Shm.INT.setRelease(registry, 0, REG_MAGIC);
        for (int s = SLOTS - 1; s >= 1; s--) {
            freeSlots.push(s);
        }
        this.self = new Peer(pid, registry, localViews, true);
        this.pd = new SoftProtectionDomain(this, (int) pdIds.incrementAndGet());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> removeFilesOf(pid), "softrnic-cleanup"));
    }

    Path file(String name) {
        return dir.resolve(name);
    }

    String newFileName(char kind) {
        return prefix + kind + fileCounter.incrementAndGet();
    }

    // ---------------------------------------------------------------- memory

    ByteBuffer allocate(int size) throws IOException {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        long id = fileCounter.incrementAndGet();
        Path path = dir.resolve(prefix + "m" + id);
        MappedByteBuffer buf = Shm.create(path, size);
        long address = DirectBuffers.address(buf);
        synchronized (this) {
            allocations.put(address != 0 ? address : -id, new Allocation(id, address, size));
        }
        // When the buffer (and every slice of it) is unreachable, its file goes. A registered region keeps it alive.
        CLEANER.register(buf, () -> {
            synchronized (SoftDevice.this) {
                allocations.remove(address != 0 ? address : -id);
            }
            Shm.delete(path);
        });
        return buf;
    }

    /** The file id and offset of an allocation containing {@code buffer}, or null for memory not from allocate(). */
    private synchronized long[] backing(ByteBuffer buffer) {
        long address = DirectBuffers.address(buffer);
        if (address == 0) {
            return null;
        }
        Map.Entry<Long, Allocation> e = allocations.floorEntry(address);
        if (e == null || e.getValue().address == 0) {
            return null;
        }
        Allocation a = e.getValue();
        if (address + buffer.capacity() > a.address + a.size) {
            return null;
        }
        return new long[] {a.fileId, address - a.address};
    }

    /** Registers a region; returns its key (slot << 8 | generation). Cold path. */
    synchronized int register(ByteBuffer buffer, int access, int pdId, long[] baseOut) throws IOException {
        Integer slotBox = freeSlots.poll();
        if (slotBox == null) {
            throw new IOException("software RNIC: out of memory-region slots (" + (SLOTS - 1) + " registered)");
        }
        int slot = slotBox;
        int gen = (slotGeneration[slot] & 0xff) + 1;
        if (gen > 255) {
            gen = 1;
        }
        slotGeneration[slot] = (byte) gen;
        int key = slot << 8 | gen;
        long[] backing = backing(buffer);
        long base = ADDRESS_BASE + ((long) slot << 32);
        long serial = ++serials;
        int off = REG_HEADER + slot * SLOT_SIZE;
        ByteBuffer view = Shm.view(buffer);
        localViews.set(slot, new RegionView(serial, view));
        Shm.LONG.set(registry, off + S_SERIAL, serial);
        Shm.LONG.set(registry, off + S_BASE, base);
        Shm.LONG.set(registry, off + S_LENGTH, (long) buffer.capacity());
        Shm.LONG.set(registry, off + S_FILE, backing == null ? -1L : backing[0]);
        Shm.LONG.set(registry, off + S_FILE_OFF, backing == null ? 0L : backing[1]);
        Shm.INT.set(registry, off + S_ACCESS, access);
        Shm.INT.set(registry, off + S_PD, pdId);
        Shm.INT.setRelease(registry, off + S_STATE, key);
        baseOut[0] = base;
        return key;
    }

    /** Deregisters: the key stops matching for every peer at once (they read the state word on every access). */
    synchronized void deregister(int key) {
        int slot = key >>> 8;
        int off = REG_HEADER + slot * SLOT_SIZE;
        Shm.INT.compareAndSet(registry, off + S_STATE, key, 0);
        localViews.set(slot, null);
        freeSlots.push(slot);
    }

    boolean isValid(int key) {
        int slot = key >>> 8;
        return slot > 0 && slot < SLOTS && (int) Shm.INT.getVolatile(registry, REG_HEADER + slot * SLOT_SIZE) == key;
    }

    // ---------------------------------------------------------------- peers

    /** The registry of process {@code peerPid} (ourselves included), mapped once. Cold path. */
    Peer peer(long peerPid) throws IOException {
        if (peerPid == pid) {
            return self;
        }
        Peer p = peers.get(peerPid);
        if (p == null) {
            synchronized (this) {
                p = peers.get(peerPid);
                if (p == null) {
                    ByteBuffer reg = Shm.open(dir.resolve(peerPid + "-reg"));
                    if ((int) Shm.INT.getAcquire(reg, 0) != REG_MAGIC) {
                        throw new IOException("software RNIC: registry of process " + peerPid + " is not initialised");
                    }
                    p = new Peer(peerPid, reg, new AtomicReferenceArray<>(SLOTS), false);
                    peers.put(peerPid, p);
                }
            }
        }
        return p;
    }

    /** A device seen from the outside: its registry and the mappings of its regions. */
    final class Peer {
        final long pid;
        final ByteBuffer registry;
        final AtomicReferenceArray<RegionView> views;
        final boolean local;
        private final Map<Long, ByteBuffer> files = new ConcurrentHashMap<>();

        Peer(long pid, ByteBuffer registry, AtomicReferenceArray<RegionView> views, boolean local) {
            this.pid = pid;
            this.registry = registry;
            this.views = views;
            this.local = local;
        }

        /** Maps the region of a slot for {@code serial} (cold: first access after a registration); null if impossible. */
        RegionView map(int slot, long serial, long fileId, long fileOffset, long length) {
            if (local || fileId < 0) {
                return null;
            }
            try {
                ByteBuffer file = files.get(fileId);
                if (file == null) {
                    file = Shm.open(dir.resolve(pid + "-m" + fileId));
                    files.put(fileId, file);
                }
                if (fileOffset + length > file.capacity()) {
                    return null;
                }
                RegionView v = new RegionView(serial, file.slice((int) fileOffset, (int) length));
                views.set(slot, v);
                return v;
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
    }

    // ---------------------------------------------------------------- files

    private void removeStaleFiles() {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                long owner = ownerPid(p.getFileName().toString());
                if (owner > 0 && owner != ProcessHandle.current().pid() && isStale(p, owner)) {
                    Shm.delete(p);
                }
            }
        } catch (IOException ignored) {
            // best effort
        }
    }

    /** The owner is dead, or its pid now belongs to a process that started after the file was written. */
    private static boolean isStale(Path p, long owner) {
        java.util.Optional<ProcessHandle> h = ProcessHandle.of(owner);
        if (h.isEmpty() || !h.get().isAlive()) {
            return true;
        }
        java.util.Optional<java.time.Instant> started = h.get().info().startInstant();
        try {
            return started.isPresent()
                    && Files.getLastModifiedTime(p)
                            .toInstant()
                            .isBefore(started.get().minusSeconds(2));
        } catch (IOException e) {
            return false;
        }
    }

    void removeFilesOf(long owner) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, owner + "-*")) {
            for (Path p : ds) {
                Shm.delete(p);
            }
        } catch (IOException ignored) {
            // best effort
        }
    }

    static long ownerPid(String name) {
        int dash = name.indexOf('-');
        if (dash <= 0) {
            return -1;
        }
        try {
            return Long.parseLong(name.substring(0, dash));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}

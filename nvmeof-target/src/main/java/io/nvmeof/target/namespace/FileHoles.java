package io.nvmeof.target.namespace;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Punches holes in the file behind a file-backed namespace ({@code fallocate(FALLOC_FL_PUNCH_HOLE |
 * FALLOC_FL_KEEP_SIZE)}), which the JDK cannot do, through the small JNI library {@code libnvmeoffile.so}
 * (src/main/native, built into the jar by the Maven profile {@code native-file}).
 *
 * <p>The library is optional: where it is missing or cannot load (not Linux x86_64, no C compiler at build time) or the
 * file system cannot punch holes, {@link #open} returns null and says why in the log, and the namespace keeps its
 * blocks on deallocate as before ({@link RamNamespace#deallocates()} is false).
 *
 * <p>Also finds holes ({@link #hasData}: {@code lseek(SEEK_DATA)}), so reads of a range the file holds no data for are
 * answered from the zero buffer without creating a chunk: a chunk is registered memory on RDMA, and registering a
 * file's pages for writing allocates their blocks, which would undo a punch at the next read.
 *
 * <p>One per {@link MappedFile}, with its own descriptor on the file (opened for writing, closed with the file once no
 * call uses it, so a call that comes after the namespace was removed never reaches a descriptor number the process has
 * given to another file). {@link #punch} is a blocking system call: the target calls it on its namespace worker
 * thread, never on a queue's; {@link #hasData} is cheap and runs on queue threads.
 */
final class FileHoles {
    private static final Logger LOG = System.getLogger("io.nvmeof.target.namespace");
    static final String NATIVE_RESOURCE = NativeLibrary.NATIVE_RESOURCE;
    private static final int EOPNOTSUPP = 95;

    /** Null once the library is loaded ({@link NativeLibrary}), else why not. */
    private static final String UNAVAILABLE = NativeLibrary.unavailableReason();

    private static final int ENXIO = 6;
    /** {@link #users} once {@link #close} began: no new user gets in. */
    private static final int CLOSING = Integer.MIN_VALUE;

    private final Path path;
    private final int fd;
    /**
     * Calls using {@link #fd} now, or {@link #CLOSING}: {@link #close} waits until none is left before it closes the
     * descriptor, so no call ever reaches a descriptor number the process has given to another file meanwhile. A
     * counter rather than a lock because {@link #hasData} runs on queue threads.
     */
    private final AtomicInteger users = new AtomicInteger();

    private final long blockSize;

    private FileHoles(Path path, int fd, long blockSize) {
        this.path = path;
        this.fd = fd;
        this.blockSize = blockSize;
    }

    /** Null if the native library is loaded, else the reason it is not. */
    static String unavailableReason() {
        return UNAVAILABLE;
    }

    /**
     * Opens {@code path} (a file of {@code size} bytes) for hole punching and checks that its file system supports it
     * by punching one block past the end (which changes nothing: the size is kept). Returns null, after a log line
     * naming the file and the reason, where holes cannot be punched.
     */
    static FileHoles open(Path path, long size) {
        String reason = UNAVAILABLE;
        if (reason == null) {
            int fd = open0(path.toString());
            if (fd < 0) {
                reason = "cannot open it for hole punching (errno " + -fd + ")";
            } else {
                long bs = blockSize0(fd);
                int probe = bs > 0 ? punchHole0(fd, size, bs) : (int) bs;
                if (probe == 0 && Long.bitCount(bs) == 1) {
                    return new FileHoles(path, fd, bs);
                }
                close0(fd);
                reason = probe == -EOPNOTSUPP
                        ? "its file system cannot punch holes"
                        : "cannot punch holes in it (errno " + -probe + ", block size " + bs + ")";
            }
        }
        LOG.log(
                Level.WARNING,
                "namespace file " + path + ": deallocate keeps its blocks (" + reason
                        + "); Identify Namespace reports deallocated blocks' values as not reported");
        return null;
    }

    /** The file system's block size (st_blksize): only whole blocks of this size are punched. */
    long blockSize() {
        return blockSize;
    }

    /**
     * Deallocates the file's blocks in {@code length} bytes at byte {@code offset}, both multiples of {@link
     * #blockSize()}: they read as zeroes from now on (through the file and through every shared mapping of it) and
     * take no space. Blocks the caller for as long as the file system takes.
     *
     * @throws IOException if the file system refuses (the message names the file and errno)
     */
    void punch(long offset, long length) throws IOException {
        if (!enter()) {
            throw new IOException("namespace file " + path + " is closed (the namespace was removed)");
        }
        int r;
        try {
            r = punchHole0(fd, offset, length);
        } finally {
            exit();
        }
        if (r != 0) {
            throw new IOException("fallocate(PUNCH_HOLE) of " + length + " bytes at " + offset + " in " + path
                    + " failed: errno " + -r);
        }
    }

    /**
     * Whether the file holds data (anything but a hole) in {@code length} bytes at byte {@code offset} ({@code
     * lseek(SEEK_DATA)}, which sees data still in the page cache too). True when unsure (an error, or closed). A
     * cheap system call that reads nothing from the device.
     */
    boolean hasData(long offset, long length) {
        if (!enter()) {
            return true;
        }
        long r;
        try {
            r = nextData0(fd, offset);
        } finally {
            exit();
        }
        if (r == -ENXIO) {
            return false; // no data from offset to the end of the file
        }
        return r < 0 || r < offset + length;
    }

    /** The bytes the file occupies on its device (st_blocks * 512, what {@code du} shows), or -1 if unknown. */
    long allocatedBytes() {
        if (!enter()) {
            return -1;
        }
        try {
            long r = allocatedBytes0(fd);
            return r < 0 ? -1 : r;
        } finally {
            exit();
        }
    }

    /** Closes the descriptor once the calls using it returned; later calls fail ({@link #punch}) or say "unknown". */
    void close() {
        while (true) {
            int u = users.get();
            if (u == CLOSING) {
                return;
            }
            if (u == 0 && users.compareAndSet(0, CLOSING)) {
                close0(fd);
                return;
            }
            Thread.onSpinWait(); // a punch, stat or lseek in progress: microseconds, or one punch
        }
    }

    private boolean enter() {
        while (true) {
            int u = users.get();
            if (u < 0) {
                return false;
            }
            if (users.compareAndSet(u, u + 1)) {
                return true;
            }
        }
    }

    private void exit() {
        users.decrementAndGet();
    }

    private static native int open0(String path);

    private static native int punchHole0(int fd, long offset, long length);

    private static native long nextData0(int fd, long offset);

    private static native long blockSize0(int fd);

    private static native long allocatedBytes0(int fd);

    private static native int close0(int fd);
}

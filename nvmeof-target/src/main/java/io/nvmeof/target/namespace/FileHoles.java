package io.nvmeof.target.namespace;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Punches holes in the file behind a file-backed namespace ({@code fallocate(FALLOC_FL_PUNCH_HOLE |
 * FALLOC_FL_KEEP_SIZE)}), which the JDK cannot do, through the small JNI library {@code libnvmeoffile.so}
 * (src/main/native, built into the jar by the Maven profile {@code native-file}).
 *
 * <p>The library is optional: where it is missing or cannot load (not Linux x86_64, no C compiler at build time) or the
 * file system cannot punch holes, {@link #open} returns null and says why in the log, and the namespace keeps its
 * blocks on deallocate as before ({@link RamNamespace#deallocates()} is false).
 *
 * <p>One per {@link MappedFile}, with its own descriptor on the file (opened for writing, closed with the file). The
 * descriptor is used and closed under this object's monitor, so a punch that comes after the namespace was removed
 * fails instead of reaching a descriptor number the process has given to another file. {@link #punch} is a blocking
 * system call: the target calls it on its namespace worker thread, never on a queue's.
 */
final class FileHoles {
    private static final Logger LOG = System.getLogger("io.nvmeof.target.namespace");
    static final String NATIVE_RESOURCE = "native/linux-x86_64/libnvmeoffile.so";
    private static final int EOPNOTSUPP = 95;

    /** Null once the library is loaded, else why not. */
    private static final String UNAVAILABLE = load();

    private final Path path;
    /** The descriptor, -1 once closed; used under this object's monitor only, so no call ever reaches a reused one. */
    private int fd;

    private final long blockSize;

    private FileHoles(Path path, int fd, long blockSize) {
        this.path = path;
        this.fd = fd;
        this.blockSize = blockSize;
    }

    private static String load() {
        String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return "hole punching needs Linux on x86_64 (this is " + os + "/" + arch + ")";
        }
        URL lib = FileHoles.class.getClassLoader().getResource(NATIVE_RESOURCE);
        if (lib == null) {
            return NATIVE_RESOURCE + " is not in the build (it needs gcc and a JDK's jni.h at build time)";
        }
        try {
            Path dir = Files.createTempDirectory("nvmeoffile");
            Path so = dir.resolve("libnvmeoffile.so");
            try (InputStream in = lib.openStream()) {
                Files.copy(in, so, StandardCopyOption.REPLACE_EXISTING);
            }
            so.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            System.load(so.toString());
            return null;
        } catch (IOException e) {
            return "cannot extract " + NATIVE_RESOURCE + ": " + e;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return "cannot load libnvmeoffile.so: " + e.getMessage();
        }
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
    synchronized void punch(long offset, long length) throws IOException {
        if (fd < 0) {
            throw new IOException("namespace file " + path + " is closed (the namespace was removed)");
        }
        int r = punchHole0(fd, offset, length);
        if (r != 0) {
            throw new IOException("fallocate(PUNCH_HOLE) of " + length + " bytes at " + offset + " in " + path
                    + " failed: errno " + -r);
        }
    }

    /** The bytes the file occupies on its device (st_blocks * 512, what {@code du} shows), or -1 if unknown. */
    synchronized long allocatedBytes() {
        long r = fd < 0 ? -1 : allocatedBytes0(fd);
        return r < 0 ? -1 : r;
    }

    synchronized void close() {
        if (fd >= 0) {
            close0(fd);
            fd = -1;
        }
    }

    private static native int open0(String path);

    private static native int punchHole0(int fd, long offset, long length);

    private static native long blockSize0(int fd);

    private static native long allocatedBytes0(int fd);

    private static native int close0(int fd);
}

package io.nvmeof.transport.rdma.soft;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/** Memory-mapped shared files and the atomic accessors used on them (cold-path helpers plus two VarHandles). */
final class Shm {
    /** int at a byte index of a direct buffer, native order; volatile/acquire/release/CAS need 4-byte alignment. */
    static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    /** long at a byte index of a direct buffer, native order; atomic modes need 8-byte alignment. */
    static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private Shm() {}

    /** Creates {@code path} (it must not exist), sizes it to {@code size} bytes (zero-filled) and maps it read-write. */
    static MappedByteBuffer create(Path path, long size) throws IOException {
        if (Files.exists(path)) {
            throw new IOException(path + " already exists");
        }
        try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
            f.setLength(size);
            return f.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, size);
        } catch (IOException | RuntimeException e) {
            delete(path);
            throw e;
        }
    }

    /** Maps an existing file read-write, whole. */
    static MappedByteBuffer open(Path path) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
            return f.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, f.length());
        }
    }

    static void delete(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException ignored) {
            // best effort: stale files are removed by the next process that starts a device
        }
    }

    static int align(int value, int alignment) {
        return (value + alignment - 1) & -alignment;
    }

    static int pow2(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }

    static ByteBuffer view(ByteBuffer b) {
        return b.duplicate().clear();
    }
}

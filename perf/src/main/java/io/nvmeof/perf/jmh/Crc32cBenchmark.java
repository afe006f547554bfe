package io.nvmeof.perf.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.nvmeof.transport.tcp.Crc32c;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * CRC32C (the NVMe/TCP digest, nvmeof-protocol.md §5.8) over 4 KiB and 128 KiB: the JDK's {@link CRC32C} (an intrinsic) on a direct
 * {@link ByteBuffer} and a byte array, against the transport's {@link Crc32c} helper on a pooled direct
 * {@link ByteBuf} (what the decoder and the target's C2HData digest use) and on an unpooled one.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Crc32cBenchmark {
    @Param({"4096", "131072"})
    public int size;

    private final CRC32C crc = new CRC32C();
    private ByteBuffer direct;
    private byte[] array;
    private ByteBuf pooled;
    private ByteBuf unpooled;

    @Setup(Level.Trial)
    public void setUp() {
        direct = ByteBuffer.allocateDirect(size);
        array = new byte[size];
        for (int i = 0; i < size; i++) {
            array[i] = (byte) (i * 131);
        }
        direct.put(0, array);
        pooled = PooledByteBufAllocator.DEFAULT.directBuffer(size).writeBytes(array);
        unpooled = Unpooled.directBuffer(size).writeBytes(array);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pooled.release();
        unpooled.release();
    }

    @Benchmark
    public long jdkDirectByteBuffer() {
        crc.reset();
        direct.clear();
        crc.update(direct);
        return crc.getValue();
    }

    @Benchmark
    public long jdkByteArray() {
        crc.reset();
        crc.update(array, 0, size);
        return crc.getValue();
    }

    @Benchmark
    public int helperPooledByteBuf() {
        return Crc32c.compute(crc, pooled, 0, size);
    }

    @Benchmark
    public int helperUnpooledByteBuf() {
        return Crc32c.compute(crc, unpooled, 0, size);
    }
}

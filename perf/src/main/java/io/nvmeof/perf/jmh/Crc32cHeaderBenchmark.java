package io.nvmeof.perf.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.nvmeof.transport.tcp.Crc32c;
import io.nvmeof.transport.tcp.DirectView;
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
 * The header digest (HDGST, nvmeof-protocol.md §5.8) of one PDU header in a pooled direct buffer, as every PDU of a
 * digest connection pays it: 24 bytes (C2HData, H2CData, R2T, CapsuleResp is 24 too) and 72 bytes (CapsuleCmd).
 * {@code copied}: copied into a scratch array, then the JDK's CRC32C over the array (the transport did this until
 * 2026-11-26); {@code inPlace}: the direct memory read through a re-pointed {@link DirectView}, as the transport's
 * decoder and PDU writers do now.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Crc32cHeaderBenchmark {
    @Param({"24", "72"})
    public int hlen;

    private final CRC32C crc = new CRC32C();
    private final byte[] scratch = new byte[Crc32c.HEADER_SCRATCH];
    private final DirectView view = new DirectView();
    private ByteBuf header;

    @Setup(Level.Trial)
    public void setUp() {
        header = PooledByteBufAllocator.DEFAULT.directBuffer(hlen + 4);
        for (int i = 0; i < hlen; i++) {
            header.writeByte(i * 13);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        header.release();
    }

    @Benchmark
    public int copied() {
        return Crc32c.computeHeader(crc, scratch, header, 0, hlen);
    }

    @Benchmark
    public int inPlace() {
        return Crc32c.computeHeader(crc, view, scratch, header, 0, hlen);
    }
}

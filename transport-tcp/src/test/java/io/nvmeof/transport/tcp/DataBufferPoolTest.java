package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.DefaultEventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The write-buffer pool of a connection: reuse while busy, and the bound on what a drained (idle) connection keeps.
 * Every pool call runs on one executor thread, as on a connection's event loop.
 */
class DataBufferPoolTest {
    private static final long MIB = 1 << 20;

    private static <T> T on(DefaultEventExecutor loop, Callable<T> c) throws Exception {
        return loop.submit(c).get(10, TimeUnit.SECONDS);
    }

    /** Takes {@code n} buffers of {@code size} and gives them all back (a burst that then drains). */
    private static void burst(DataBufferPool pool, int n, int size) {
        List<DataBufferPool.Entry> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(pool.take(size));
        }
        for (DataBufferPool.Entry e : out) {
            pool.giveBack(e);
        }
    }

    @Test
    void aDrainedConnectionKeepsAtMostTheBound() throws Exception {
        PooledByteBufAllocator alloc = new PooledByteBufAllocator(true, 1, 1, 8192, 9, 0, 0, false);
        DefaultEventExecutor loop = new DefaultEventExecutor();
        try {
            DataBufferPool pool = on(loop, () -> new DataBufferPool(alloc, loop, MIB));
            // 32 x 128 KiB = 4 MiB in flight, then drained: the first trim is at once, down to 1 MiB
            on(loop, () -> {
                burst(pool, 32, 128 << 10);
                return null;
            });
            assertEquals(MIB, on(loop, pool::freeBytes));
            assertEquals(24, on(loop, pool::trimmed));
            assertEquals(0, on(loop, pool::outstanding));
            // another burst within the second: no trim at once, one delayed trim on the loop a second later
            on(loop, () -> {
                burst(pool, 32, 128 << 10);
                return null;
            });
            assertEquals(4 * MIB, on(loop, pool::freeBytes), "the second trim waits for the interval");
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (on(loop, pool::freeBytes) > MIB && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            assertEquals(MIB, on(loop, pool::freeBytes), "the delayed trim ran");
            // below the bound nothing is trimmed and buffers are reused: no allocation in that steady state
            int created = on(loop, pool::created);
            on(loop, () -> {
                for (int i = 0; i < 1000; i++) {
                    burst(pool, 8, 128 << 10);
                }
                return null;
            });
            assertEquals(created, on(loop, pool::created), "buffers reused below the bound");
            on(loop, () -> {
                pool.close();
                return null;
            });
            assertEquals(0, activeAllocations(alloc), "nothing leaked: trimmed and closed buffers were released");
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void smallBurstsAreKept() throws Exception {
        DefaultEventExecutor loop = new DefaultEventExecutor();
        try {
            PooledByteBufAllocator alloc = new PooledByteBufAllocator(true, 1, 1, 8192, 9, 0, 0, false);
            DataBufferPool pool = on(loop, () -> new DataBufferPool(alloc, loop, MIB));
            on(loop, () -> {
                burst(pool, 32, 4096);
                return null;
            });
            assertEquals(32 * 4096, on(loop, pool::freeBytes));
            assertEquals(0, on(loop, pool::trimmed));
            assertTrue(on(loop, pool::created) == 32);
            on(loop, () -> {
                pool.close();
                return null;
            });
            assertEquals(0, activeAllocations(alloc), "nothing leaked");
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /** Buffers of {@code alloc} not released (a cache-less allocator, so exact). */
    private static long activeAllocations(PooledByteBufAllocator alloc) {
        long n = 0;
        for (io.netty.buffer.PoolArenaMetric a : alloc.metric().directArenas()) {
            n += a.numActiveAllocations();
        }
        return n;
    }
}

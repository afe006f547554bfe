package io.nvmeof.perf.jmh;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * JMH's benchmark threads as Netty {@code FastThreadLocalThread}s, like the event loops the transport runs on
 * ({@code -Djmh.executor=CUSTOM -Djmh.executor.class=io.nvmeof.perf.jmh.FastThreadLocalExecutor}). Netty 4.2 recycles
 * pooled objects (buffer slices, derived buffers) only on such threads; on a plain thread every
 * {@code retainedSlice} is a new object, which the transport never sees.
 */
public final class FastThreadLocalExecutor extends ThreadPoolExecutor {
    /** The constructor JMH's CUSTOM executor calls. */
    public FastThreadLocalExecutor(int maxThreads, String prefix) {
        super(
                maxThreads,
                maxThreads,
                1,
                TimeUnit.MINUTES,
                new LinkedBlockingQueue<>(),
                new DefaultThreadFactory(prefix, true));
    }
}

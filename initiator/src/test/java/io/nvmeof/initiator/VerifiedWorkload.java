package io.nvmeof.initiator;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A verified multi-threaded block workload for fault tests: each thread owns a region of the namespace and writes
 * small (1 block) and large (64 blocks) commands of content derived from (LBA, version), and reads them back. It keeps
 * the version of the last acknowledged write of every block; a failed write makes the block's content unknown (either
 * version may be on the media). Every read, and {@link #verifyAll()} at the end, checks every block whose version is
 * known. It records each failure and the longest call, so a test can check that nothing failed and nothing hung.
 */
final class VerifiedWorkload {
    static final int LARGE = 64;
    private static final long UNKNOWN = -1;

    private final Namespace ns;
    private final int threads;
    private final long blocksPerThread;
    private final int bs;
    private final long[][] versions;
    private final List<Thread> workers = new ArrayList<>();
    private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> mismatches = new ConcurrentLinkedQueue<>();
    private final AtomicLong ops = new AtomicLong();
    private final AtomicLong maxCallNanos = new AtomicLong();
    private volatile boolean stop;

    VerifiedWorkload(Namespace ns, int threads, long blocksPerThread) {
        this.ns = ns;
        this.threads = threads;
        this.blocksPerThread = blocksPerThread;
        this.bs = ns.blockSize();
        this.versions = new long[threads][(int) blocksPerThread];
        if (blocksPerThread * threads > ns.blockCount() || blocksPerThread < 2 * LARGE) {
            throw new IllegalArgumentException("namespace too small for " + threads + " x " + blocksPerThread);
        }
    }

    /** Writes every block once (version 0), then starts the threads. */
    VerifiedWorkload start() throws NvmeException {
        ByteBuffer b = ByteBuffer.allocateDirect(LARGE * bs);
        for (int t = 0; t < threads; t++) {
            for (long i = 0; i < blocksPerThread; i += LARGE) {
                int n = (int) Math.min(LARGE, blocksPerThread - i);
                long lba = t * blocksPerThread + i;
                fill(b, lba, n, new long[n], 0);
                ns.write(lba, n, b);
            }
        }
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> run(id), "workload-" + t);
            th.setDaemon(true);
            workers.add(th);
            th.start();
        }
        return this;
    }

    private void run(int t) {
        ByteBuffer buf = ByteBuffer.allocateDirect(LARGE * bs);
        long[] vs = versions[t];
        long version = 0;
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (!stop) {
            int n = r.nextInt(4) == 0 ? LARGE : 1;
            long first = r.nextLong(blocksPerThread - n + 1);
            long lba = t * blocksPerThread + first;
            boolean write = r.nextInt(3) != 0;
            long start = System.nanoTime();
            try {
                if (write) {
                    version++;
                    long[] v = new long[n];
                    Arrays.fill(v, version);
                    fill(buf, lba, n, v, 0);
                    for (int i = 0; i < n; i++) {
                        vs[(int) first + i] = UNKNOWN; // in flight: either version
                    }
                    ns.write(lba, n, buf);
                    for (int i = 0; i < n; i++) {
                        vs[(int) first + i] = version;
                    }
                } else {
                    ns.read(lba, n, buf);
                    check(buf, lba, n, vs, (int) first);
                }
            } catch (NvmeException e) {
                failures.add(e);
            } finally {
                ops.incrementAndGet();
                maxCallNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
            }
        }
    }

    /** Stops the threads; true if each ended within {@code millis}. */
    boolean stop(long millis) throws InterruptedException {
        stop = true;
        long end = System.currentTimeMillis() + millis;
        for (Thread t : workers) {
            t.join(Math.max(1, end - System.currentTimeMillis()));
            if (t.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** Reads every block back and checks those whose version is known; returns the mismatches so far. */
    List<String> verifyAll() throws NvmeException {
        ByteBuffer b = ByteBuffer.allocateDirect(LARGE * bs);
        for (int t = 0; t < threads; t++) {
            for (long i = 0; i < blocksPerThread; i += LARGE) {
                int n = (int) Math.min(LARGE, blocksPerThread - i);
                long lba = t * blocksPerThread + i;
                ns.read(lba, n, b);
                check(b, lba, n, versions[t], (int) i);
            }
        }
        return new ArrayList<>(mismatches);
    }

    List<Throwable> failures() {
        return new ArrayList<>(failures);
    }

    long ops() {
        return ops.get();
    }

    long maxCallMillis() {
        return TimeUnit.NANOSECONDS.toMillis(maxCallNanos.get());
    }

    private void fill(ByteBuffer b, long lba, int n, long[] v, int off) {
        for (int i = 0; i < n; i++) {
            for (int w = 0; w < bs; w += 8) {
                b.putLong(i * bs + w, word(lba + i, v[off + i], w));
            }
        }
    }

    private void check(ByteBuffer b, long lba, int n, long[] vs, int first) {
        for (int i = 0; i < n; i++) {
            long v = vs[first + i];
            if (v == UNKNOWN) {
                continue;
            }
            for (int w = 0; w < bs; w += 8) {
                if (b.getLong(i * bs + w) != word(lba + i, v, w)) {
                    mismatches.add("LBA " + (lba + i) + " word " + w / 8 + ": not version " + v);
                    break;
                }
            }
        }
    }

    private static long word(long lba, long version, int w) {
        long z = lba * 0x9E3779B97F4A7C15L + version * 0xBF58476D1CE4E5B9L + w;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}

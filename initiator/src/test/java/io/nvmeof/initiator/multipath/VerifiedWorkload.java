package io.nvmeof.initiator.multipath;

import io.nvmeof.initiator.BlockNamespace;
import io.nvmeof.initiator.NvmeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A verified block workload for tests: {@code threads} threads, each owning its own region of the namespace, write
 * blocks stamped with (LBA, generation) in small (1–8 blocks) and large (64 blocks) commands, and read ranges back and
 * compare them with what they acknowledged last; {@link #stopAndVerify()} reads every region in full. Any failed
 * command or mismatch is recorded, never thrown on the worker thread.
 */
final class VerifiedWorkload {
    private final BlockNamespace ns;
    private final int threads;
    private final long blocksPerThread;
    private final List<Thread> workers = new ArrayList<>();
    private final List<String> errors = Collections.synchronizedList(new ArrayList<>());
    private final long[][] generations;
    final AtomicLong writes = new AtomicLong();
    final AtomicLong reads = new AtomicLong();
    private volatile boolean stop;

    VerifiedWorkload(BlockNamespace ns, int threads, long blocksPerThread) {
        this.ns = ns;
        this.threads = threads;
        this.blocksPerThread = blocksPerThread;
        this.generations = new long[threads][(int) blocksPerThread];
    }

    void start() {
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> run(id), "verified-workload-" + t);
            th.setDaemon(true);
            workers.add(th);
            th.start();
        }
    }

    List<String> errors() {
        return errors;
    }

    long completed() {
        return writes.get() + reads.get();
    }

    private void run(int t) {
        int bs = ns.blockSize();
        ByteBuffer buf = ByteBuffer.allocateDirect(64 * bs).order(ByteOrder.LITTLE_ENDIAN);
        SplittableRandom rnd = new SplittableRandom(1000 + t);
        long base = t * blocksPerThread;
        long gen = 0;
        while (!stop && errors.size() < 10) {
            int n = rnd.nextInt(10) == 0 ? 64 : 1 + rnd.nextInt(8);
            long off = rnd.nextLong(blocksPerThread - n + 1);
            try {
                if (rnd.nextInt(3) != 0) {
                    gen++;
                    for (int b = 0; b < n; b++) {
                        fill(buf, b * bs, bs, base + off + b, gen);
                    }
                    buf.clear();
                    ns.write(base + off, n, buf);
                    for (int b = 0; b < n; b++) {
                        generations[t][(int) (off + b)] = gen;
                    }
                    writes.incrementAndGet();
                } else {
                    buf.clear();
                    ns.read(base + off, n, buf);
                    check(t, buf, base, off, n);
                    reads.incrementAndGet();
                }
            } catch (NvmeException | RuntimeException e) {
                errors.add("thread " + t + " lba " + (base + off) + " x" + n + ": " + e);
            }
        }
    }

    /** Stops the threads, then reads back every block each one owns. */
    List<String> stopAndVerify() throws Exception {
        stop = true;
        for (Thread th : workers) {
            th.join(120_000);
            if (th.isAlive()) {
                errors.add(th.getName() + " did not stop within 120 s");
            }
        }
        int bs = ns.blockSize();
        ByteBuffer buf = ByteBuffer.allocateDirect(64 * bs).order(ByteOrder.LITTLE_ENDIAN);
        for (int t = 0; t < threads; t++) {
            long base = t * blocksPerThread;
            for (long off = 0; off < blocksPerThread; off += 64) {
                int n = (int) Math.min(64, blocksPerThread - off);
                buf.clear();
                ns.read(base + off, n, buf);
                check(t, buf, base, off, n);
            }
        }
        return errors;
    }

    private void check(int t, ByteBuffer buf, long base, long off, int n) {
        int bs = ns.blockSize();
        for (int b = 0; b < n; b++) {
            long gen = generations[t][(int) (off + b)];
            long lba = base + off + b;
            long a = buf.getLong(b * bs);
            long g = buf.getLong(b * bs + 8);
            boolean ok =
                    gen == 0 ? a == 0 && g == 0 : a == lba && g == gen && buf.getLong(b * bs + bs - 8) == mix(lba, gen);
            if (!ok) {
                errors.add("thread " + t + " lba " + lba + ": expected generation " + gen + ", read lba " + a
                        + " generation " + g);
                return;
            }
        }
    }

    private static void fill(ByteBuffer buf, int at, int bs, long lba, long gen) {
        buf.putLong(at, lba);
        buf.putLong(at + 8, gen);
        long x = mix(lba, gen);
        for (int i = 16; i < bs - 8; i += 8) {
            buf.putLong(at + i, x + i);
        }
        buf.putLong(at + bs - 8, x);
    }

    private static long mix(long lba, long gen) {
        long x = lba * 0x9E3779B97F4A7C15L + gen * 0xC2B2AE3D27D4EB4FL;
        return x ^ (x >>> 29);
    }
}

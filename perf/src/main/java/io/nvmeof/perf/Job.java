package io.nvmeof.perf;

import io.nvmeof.initiator.BlockNamespace;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.NvmeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.BitSet;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One fio job: its own thread, its own controller connection with one I/O queue, {@code iodepth} I/O units with
 * preallocated direct buffers. Nothing is allocated per I/O.
 *
 * <p>Timed runs without {@code --rate_iops} are <b>completion-driven</b> (SPDK/fio-engine style): the job thread
 * submits the first {@code iodepth} I/Os, then only waits for the end of the run; each completion callback, on the
 * queue's own thread, records the I/O into this job's statistics (that thread is their only writer) and issues the
 * next I/O from there with the allocation-free callback form. No cross-thread hand-off or wake-up per I/O, and with
 * {@code --hipri} only the two polling loops run. The completion's timestamp is also the next I/O's issue time, so an
 * I/O costs two {@code System.nanoTime()} calls.
 *
 * <p>{@code --verify} and {@code --rate_iops} runs are driven by the job thread: completions only stamp the time and
 * hand the unit back through a bounded lock-free queue ({@link CompletionRing}), and the job thread does the
 * accounting and the checks ({@link VerifyPattern}).
 *
 * <p>This class owns the I/O units ({@link IoUnit}) and runs the three modes; the block format of {@code --verify}
 * and the hand-back queue are classes of their own, owned by the job.
 */
final class Job implements IoCallback, Runnable {
    final int index;
    final String name;
    private final Workload w;
    private final BlockNamespace ns;
    private final int blockSize;
    private final int blocksPerIo;
    private final long regionStart;
    private final long units;
    private final IoUnit[] io;
    private final int[] free;
    private int freeTop;
    private int inflight;
    private final CompletionRing ring;
    private volatile Thread thread;
    private final SplittableRandom rng;
    private long readCursor;
    private long writeCursor;
    /** This job's statistics: the window's, reported, and the ramp's, not. */
    final JobStats stats = new JobStats();

    final DirStats read = stats.read;
    final DirStats write = stats.write;
    /** Completed I/Os so far (all phases), for the progress line. */
    final AtomicLong progressIos = new AtomicLong();

    final AtomicLong progressBytes = new AtomicLong();
    volatile boolean stop;
    volatile String failure;
    /** Time (System.nanoTime) set by the runner before start. */
    long rampEnd;
    /**
     * End of the run (System.nanoTime): {@code measureStart} + the runtime, set by the runner together with
     * measureStart ({@link Runner#UNTIL_TOLD} until then, so the window lasts the runtime however long the samples
     * before it took); fixed before start for verify runs.
     */
    volatile long end;
    /**
     * Start of the measured window: set by the runner right after it sampled the CPU of both sides (shortly after
     * rampEnd), so every I/O counted was issued after the samples were taken.
     */
    volatile long measureStart = Long.MAX_VALUE / 2;
    /** Completion-driven (see the class comment): timed, no --verify, no --rate_iops. */
    private final boolean inline;
    /** Completion-driven mode, owned by the queue's thread once the first I/O is out. */
    private int inlineInflight;

    /** Completion-driven mode: the last I/O has completed (set on the queue's thread). */
    private volatile boolean finished;
    // verify
    private final int[] order;
    private int writesIssued;
    private final BitSet written;
    private final VerifyPattern pattern;

    Job(int index, Workload w, BlockNamespace ns, long regionStart, long regionBytes, long seed)
            throws io.nvmeof.initiator.NvmeException {
        this.index = index;
        this.name = w.name();
        this.w = w;
        this.ns = ns;
        this.blockSize = ns.blockSize();
        this.blocksPerIo = w.bs() / blockSize;
        this.regionStart = regionStart;
        this.units = regionBytes / w.bs();
        this.rng = new SplittableRandom(seed);
        this.inline = !w.verify() && w.rateIops() <= 0;
        int depth = w.iodepth();
        this.io = new IoUnit[depth];
        this.free = new int[depth];
        // From the controller: over NVMe/RDMA registered memory, so every unit (a slice) moves with no host copy.
        ByteBuffer all = ns.allocateBuffer((depth * w.bs() + 4096) / blockSize).order(ByteOrder.LITTLE_ENDIAN);
        long addrPad = 0; // alignment is not needed by the transport; keep buffers contiguous
        for (int i = 0; i < depth; i++) {
            ByteBuffer b = all.slice((int) addrPad + i * w.bs(), w.bs()).order(ByteOrder.LITTLE_ENDIAN);
            for (int j = 0; j + 8 <= w.bs(); j += 8) {
                b.putLong(j, rng.nextLong()); // random data, written as is (fio's default buffer contents)
            }
            io[i] = new IoUnit(i, b);
            free[freeTop++] = depth - 1 - i;
        }
        this.ring = new CompletionRing(depth);
        this.pattern = w.verify() ? new VerifyPattern(index, ns, blockSize, blocksPerIo) : null;
        if (w.verify()) {
            if (units > 256L << 20) {
                throw new IllegalArgumentException("--verify keeps a map of the region: at most " + (256L << 20)
                        + " I/Os of --bs per job (the region has " + units + ")");
            }
            order = VerifyPattern.writeOrder((int) units, w.random(), rng);
            written = new BitSet((int) units);
        } else {
            order = null;
            written = null;
        }
    }

    long units() {
        return units;
    }

    // ---- completion side: the transport's thread ----

    @Override
    public void completed(Object attachment) {
        IoUnit u = (IoUnit) attachment;
        u.tc = System.nanoTime();
        if (inline) {
            completeInline(u);
        } else {
            ring.handBack(u.index, thread);
        }
    }

    @Override
    public void failed(NvmeException error, Object attachment) {
        IoUnit u = (IoUnit) attachment;
        u.tc = System.nanoTime();
        u.error = error;
        if (inline) {
            completeInline(u);
        } else {
            ring.handBack(u.index, thread);
        }
    }

    // ---- completion-driven mode: everything below runs on the queue's thread ----

    /** Accounts for {@code u} and reissues it (same buffer) while the run lasts. */
    private void completeInline(IoUnit u) {
        long now = u.tc;
        inlineInflight--;
        account(u);
        if (now - end < 0 && !stop && failure == null) {
            boolean isRead = w.readPercent() == 100 || (w.readPercent() > 0 && rng.nextInt(100) < w.readPercent());
            if (issueInline(u, isRead, nextUnit(isRead), now)) {
                return;
            }
        }
        if (inlineInflight == 0) {
            finished = true;
            LockSupport.unpark(thread);
        }
    }

    /** Issues {@code u} with the non-waiting callback form; false (and a failure) if no slot was free. */
    private boolean issueInline(IoUnit u, boolean isRead, long unit, long t0) {
        u.isRead = isRead;
        u.unit = unit;
        u.lba = (regionStart + unit * w.bs()) / blockSize;
        u.error = null;
        u.t0 = t0;
        inlineInflight++;
        boolean ok = isRead
                ? ns.tryRead(u.lba, blocksPerIo, u.buf, this, u)
                : ns.tryWrite(u.lba, blocksPerIo, u.buf, this, u);
        if (!ok) {
            inlineInflight--;
            if (failure == null) {
                failure = "job " + index + ": no free command slot for the next I/O (queue depth below iodepth)";
            }
            return false;
        }
        u.t1 = System.nanoTime(); // the completion runs on this thread, so never before this line
        return true;
    }

    // ---- the job thread ----

    @Override
    public void run() {
        thread = Thread.currentThread();
        try {
            if (w.verify()) {
                runVerify();
            } else if (inline) {
                runInline();
            } else {
                runTimed();
            }
        } catch (RuntimeException | Error e) {
            if (failure == null) {
                failure = "job " + index + ": " + e;
            }
            drainAll();
        }
    }

    /**
     * The job thread's part of a completion-driven run: the first {@code iodepth} I/Os, then wait for the end and for
     * the last completion. The first I/Os are chosen before any is submitted: from the first completion on, the
     * random generator and the cursors belong to the queue's thread.
     */
    private void runInline() {
        stats.startRamp(System.nanoTime(), rampEnd);
        int depth = io.length;
        boolean[] firstIsRead = new boolean[depth];
        long[] firstUnit = new long[depth];
        for (int i = 0; i < depth; i++) {
            firstIsRead[i] = w.readPercent() == 100 || (w.readPercent() > 0 && rng.nextInt(100) < w.readPercent());
            firstUnit[i] = nextUnit(firstIsRead[i]);
        }
        freeTop = 0;
        inlineInflight = depth; // before any submission: completions decrement it on the queue's thread
        for (int i = 0; i < depth; i++) {
            IoUnit u = io[i];
            u.isRead = firstIsRead[i];
            u.unit = firstUnit[i];
            u.lba = (regionStart + u.unit * w.bs()) / blockSize;
            u.error = null;
            u.t0 = System.nanoTime();
            u.t1 = u.t0; // issued before the window (measureStart comes after the ramp's CPU samples): not counted
            if (u.isRead) {
                ns.read(u.lba, blocksPerIo, u.buf, this, u);
            } else {
                ns.write(u.lba, blocksPerIo, u.buf, this, u);
            }
        }
        // Wait: the callbacks stop issuing at 'end' (or on stop/failure); the last one sets 'finished'.
        long hardStop = Long.MAX_VALUE;
        while (!finished) {
            long now = System.nanoTime();
            if (hardStop == Long.MAX_VALUE && (stop || failure != null || now - end >= 0)) {
                hardStop = now + 60_000_000_000L;
            }
            if (now - hardStop > 0) {
                if (failure == null) {
                    failure = "job " + index + ": I/Os still in flight 60 s after the end of the run";
                }
                return;
            }
            long wait = now - end < 0 ? end - now : 10_000_000L;
            LockSupport.parkNanos(Math.max(1000, Math.min(wait, 50_000_000L)));
        }
        read.tick(end);
        write.tick(end);
        long ms = Math.min(measureStart, end);
        read.runtimeNanos = end - ms;
        write.runtimeNanos = end - ms;
    }

    private void runTimed() {
        long rateGap = w.rateIops() > 0 ? 1_000_000_000L / w.rateIops() : 0;
        long nextIssue = System.nanoTime();
        stats.startRamp(nextIssue, rampEnd);
        while (true) {
            long now = System.nanoTime();
            boolean measuring = now - measureStart >= 0;
            boolean issuing = now < end && !stop && failure == null;
            boolean did = false;
            while (issuing && freeTop > 0 && (rateGap == 0 || now - nextIssue >= 0)) {
                boolean isRead = w.readPercent() == 100 || (w.readPercent() > 0 && rng.nextInt(100) < w.readPercent());
                long unit = nextUnit(isRead);
                issue(isRead, unit, false);
                did = true;
                if (rateGap != 0) {
                    nextIssue = Math.max(nextIssue + rateGap, now - 1_000_000_000L); // no burst after a stall
                }
            }
            did |= drain() > 0;
            if (!issuing && inflight == 0) {
                break;
            }
            if (!did) {
                long wake = issuing ? Math.min(end, rateGap == 0 ? end : nextIssue) : now + 10_000_000L;
                if (!measuring) {
                    wake = Math.min(wake, Math.max(rampEnd, now + 1_000_000L));
                }
                ring.await(wake - now);
            }
        }
        read.tick(end);
        write.tick(end);
        long ms = Math.min(measureStart, end);
        read.runtimeNanos = end - ms;
        write.runtimeNanos = end - ms;
    }

    /**
     * Opens the measured window of a timed run at {@code start}, to end at {@code end} (the runner's thread). The
     * window's statistics start sampling here, before {@code measureStart} is published: the thread that records
     * touches them only for I/Os issued from then on, which it knows by reading that volatile field. A verify run
     * samples from its own start and counts every I/O, so only the times are set for it.
     */
    void openWindow(long start, long end) {
        if (!w.verify()) {
            stats.openWindow(start, (int) (w.runtimeNanos() / DirStats.SAMPLE_NANOS) + 2);
        }
        this.end = end;
        this.measureStart = start;
    }

    private void runVerify() {
        long start = System.nanoTime();
        read.startSampling(start, (int) Math.min(100_000, w.runtimeNanos() / DirStats.SAMPLE_NANOS + 2));
        write.startSampling(start, (int) Math.min(100_000, w.runtimeNanos() / DirStats.SAMPLE_NANOS + 2));
        // --rate_iops caps both passes, as fio's rate_iops caps every I/O of a verify job
        long rateGap = w.rateIops() > 0 ? 1_000_000_000L / w.rateIops() : 0;
        long nextIssue = start;
        // pass 1: every unit of the region once (in random order for rand*), reads of written units checked inline
        while (true) {
            long now = System.nanoTime();
            boolean issuing = writesIssued < order.length && now < end && !stop && failure == null;
            boolean did = false;
            while (issuing && freeTop > 0 && writesIssued < order.length && (rateGap == 0 || now - nextIssue >= 0)) {
                boolean isRead = w.readPercent() > 0 && writesIssued > 0 && rng.nextInt(100) < w.readPercent();
                if (isRead) {
                    issue(true, order[rng.nextInt(writesIssued)], false);
                } else {
                    issue(false, order[writesIssued++], false);
                }
                did = true;
                nextIssue = nextRateSlot(nextIssue, rateGap, now);
            }
            did |= drain() > 0;
            if (!issuing && inflight == 0) {
                break;
            }
            if (!did) {
                ring.await(rateWait(nextIssue, rateGap, now));
            }
        }
        long mid = System.nanoTime();
        write.runtimeNanos = mid - start;
        // pass 2: read back everything written and check it
        int next = 0;
        while (true) {
            long now = System.nanoTime();
            boolean issuing = next < writesIssued && !stop && failure == null;
            boolean did = false;
            while (issuing && freeTop > 0 && next < writesIssued && (rateGap == 0 || now - nextIssue >= 0)) {
                issue(true, order[next++], true);
                did = true;
                nextIssue = nextRateSlot(nextIssue, rateGap, now);
            }
            did |= drain() > 0;
            if (!(next < writesIssued && !stop && failure == null) && inflight == 0) {
                break;
            }
            if (!did) {
                ring.await(rateWait(nextIssue, rateGap, now));
            }
        }
        long done = System.nanoTime();
        read.runtimeNanos = done - (w.readPercent() > 0 ? start : mid); // inline reads ran during the write pass
        read.tick(done);
        write.tick(done);
    }

    /** The time the next I/O may go under --rate_iops (no burst after a stall); unchanged without a rate. */
    private static long nextRateSlot(long nextIssue, long rateGap, long now) {
        return rateGap == 0 ? nextIssue : Math.max(nextIssue + rateGap, now - 1_000_000_000L);
    }

    /** How long a verify pass with nothing to do waits: 1 ms, or until the next rate slot if that is sooner. */
    private static long rateWait(long nextIssue, long rateGap, long now) {
        return rateGap == 0 ? 1_000_000L : Math.max(1000L, Math.min(1_000_000L, nextIssue - now));
    }

    private long nextUnit(boolean isRead) {
        if (w.random()) {
            return rng.nextLong(units);
        }
        long u;
        if (isRead) {
            u = readCursor;
            readCursor = readCursor + 1 == units ? 0 : readCursor + 1;
        } else {
            u = writeCursor;
            writeCursor = writeCursor + 1 == units ? 0 : writeCursor + 1;
        }
        return u;
    }

    private void issue(boolean isRead, long unit, boolean forceCheck) {
        IoUnit u = io[free[--freeTop]];
        u.isRead = isRead;
        u.unit = unit;
        u.lba = (regionStart + unit * w.bs()) / blockSize;
        u.error = null;
        if (w.verify()) {
            if (isRead) {
                u.check = forceCheck || written.get((int) unit);
            } else {
                pattern.fill(u);
            }
        }
        inflight++;
        u.t0 = System.nanoTime();
        if (isRead) {
            ns.read(u.lba, blocksPerIo, u.buf, this, u);
        } else {
            ns.write(u.lba, blocksPerIo, u.buf, this, u);
        }
        u.t1 = System.nanoTime();
    }

    private int drain() {
        int n = 0;
        int i;
        while ((i = ring.poll()) >= 0) {
            complete(io[i]);
            n++;
        }
        return n;
    }

    private void drainAll() {
        long limit = System.nanoTime() + 60_000_000_000L;
        if (inline) {
            stop = true;
            while (!finished && System.nanoTime() < limit) {
                LockSupport.parkNanos(1_000_000L);
            }
            return;
        }
        while (inflight > 0 && System.nanoTime() < limit) {
            int i = ring.poll();
            if (i >= 0) {
                inflight--;
                free[freeTop++] = i;
            } else {
                ring.await(1_000_000L);
            }
        }
    }

    private void complete(IoUnit u) {
        inflight--;
        free[freeTop++] = u.index;
        account(u);
    }

    /** Failure, progress, verify and latency accounting of a completed unit, on whichever thread owns the stats. */
    private void account(IoUnit u) {
        if (u.error != null) {
            if (failure == null) {
                failure = (u.isRead ? "read" : "write") + " of " + blocksPerIo + " block(s) at LBA " + u.lba
                        + " failed: " + u.error.getMessage();
            }
            return;
        }
        progressIos.lazySet(progressIos.get() + 1);
        progressBytes.lazySet(progressBytes.get() + w.bs());
        if (w.verify()) {
            if (u.isRead) {
                if (u.check) {
                    String bad = pattern.check(u);
                    if (bad != null && failure == null) {
                        failure = bad;
                    }
                }
            } else {
                written.set((int) u.unit);
            }
        } else if (u.tc - end > 0) {
            return; // completed after the measured window
        }
        long slat = u.t1 - u.t0;
        long lat = u.tc - u.t0;
        long clat = Math.max(0, u.tc - u.t1);
        // An I/O issued before the window (during the ramp) goes to the ramp's statistics (JobStats#sink); a verify
        // run has no ramp.
        DirStats sink = w.verify() ? stats.window(u.isRead) : stats.sink(u.isRead, u.t0, measureStart);
        sink.record(slat, clat, lat, w.bs(), u.tc);
    }
}

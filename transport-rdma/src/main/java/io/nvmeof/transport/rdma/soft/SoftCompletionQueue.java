package io.nvmeof.transport.rdma.soft;

import static io.nvmeof.transport.rdma.soft.Shm.INT;
import static io.nvmeof.transport.rdma.soft.Shm.LONG;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

/**
 * A completion queue shared by many {@link SoftQueuePair}s: the completion ring of a queue pair ({@link QueueFile}'s
 * CQE layout, tail at 192, ring from 256) in a file of its own, {@code <pid>-c<n>}, capacity at offset 16. Each QP
 * created on it gets a slot (never reused while the CQ lives); every CQE carries it in bits 13..31 of its opcode word,
 * so {@link #poll} can report the QP's number and retire its send-queue entries. Our QPs write their own completions
 * here; a peer's sending thread, which maps this file at connect (the QP's header names it), writes the RECV
 * completions. Nothing per operation locks or allocates; attaching a QP (cold path) is synchronized.
 *
 * <p>The owner's poll also does what a QP's own poll does for it: retries the sends of QPs waiting for a receiver
 * (only while some QP has one waiting), and flushes the waiting sends of QPs that went to ERROR (only after one did).
 */
final class SoftCompletionQueue implements CompletionQueue {
    static final int MAGIC = 0x53534351; // "SSCQ"
    static final int H_CAPACITY = 16;
    /** CQE word bits 13..31: the QP's slot on this CQ. */
    static final int SLOT_SHIFT = 13;

    static final int MAX_SLOTS = 1 << (32 - SLOT_SHIFT);

    final SoftDevice device;
    /** The {@code <n>} of the file name, which QP headers carry. */
    final int fileNumber;

    final ByteBuffer q;
    final int mask;
    private final int capacity;
    private final Path path;

    /** QPs by slot (null once closed) and their numbers (kept, for completions that outlive the QP). */
    private volatile SoftQueuePair[] qps = new SoftQueuePair[16];

    private volatile int[] qpns = new int[16];
    private int nextSlot;

    private long head;
    /** QPs with sends waiting for a receiver (owner thread). */
    int waitingQps;
    /** Set (any thread) when an attached QP went to ERROR: the next poll flushes what it has waiting. */
    private volatile boolean attention;

    private volatile boolean closed;
    /**
     * The owner's wait: slices growing to 200 µs, and to 1 ms once the CQ has been quiet for a millisecond (50 µs
     * while a QP's Send waits for a receiver). An idle owner so wakes about 1000 times a second, and sees a Send from
     * another process within a millisecond.
     */
    private final QuietWait quiet = new QuietWait() {
        @Override
        boolean poll() {
            housekeeping();
            return ready();
        }

        @Override
        long nextSlice(long park, long quietNanos) {
            return Math.min(park * 2, waitingQps > 0 ? 50_000 : quietNanos < 1_000_000 ? 200_000 : 1_000_000);
        }
    };

    SoftCompletionQueue(SoftDevice device, int entries) throws IOException {
        if (entries < 1) {
            throw new IllegalArgumentException("a CQ needs at least one entry");
        }
        this.device = device;
        this.capacity = Shm.pow2(entries);
        this.mask = capacity - 1;
        String name = device.newFileName('c');
        this.fileNumber = Integer.parseInt(name.substring(name.lastIndexOf('c') + 1));
        this.path = device.file(name);
        this.q = Shm.create(path, QueueFile.RQ_BASE + (long) capacity * QueueFile.CQE);
        QueueFile.initCompletionRing(q, QueueFile.RQ_BASE, capacity);
        INT.set(q, H_CAPACITY, capacity);
        INT.setRelease(q, QueueFile.H_MAGIC, MAGIC);
    }

    /** Maps a peer's CQ file {@code <pid>-c<n>} and checks it (capacity at 16, ring from 256). Cold path. */
    static ByteBuffer map(SoftDevice device, long pid, int fileNumber) throws IOException {
        Path p = device.file(pid + "-c" + fileNumber);
        ByteBuffer b = Shm.open(p);
        int cap = b.capacity() >= QueueFile.RQ_BASE ? (int) INT.getAcquire(b, H_CAPACITY) : 0;
        if ((int) INT.getAcquire(b, QueueFile.H_MAGIC) != MAGIC
                || Integer.bitCount(cap) != 1
                || b.capacity() != QueueFile.RQ_BASE + (long) cap * QueueFile.CQE) {
            throw new IOException("software RNIC: " + p + " is not a completion queue");
        }
        return b;
    }

    /** Gives {@code qp} a slot; its completions carry it from now on. Cold path (QP creation). */
    synchronized int attach(SoftQueuePair qp) throws IOException {
        if (closed) {
            throw new IOException("software RNIC: the completion queue is closed");
        }
        if (nextSlot == MAX_SLOTS) {
            throw new IOException("software RNIC: " + MAX_SLOTS + " QPs were created on this CQ already");
        }
        int slot = nextSlot++;
        SoftQueuePair[] a = qps;
        int[] n = qpns;
        if (slot == a.length) {
            a = Arrays.copyOf(a, a.length * 2);
            n = Arrays.copyOf(n, n.length * 2);
        }
        a[slot] = qp;
        n[slot] = qp.qpNumber;
        qpns = n; // volatile writes publish the entries to the poller
        qps = a;
        return slot;
    }

    /** The QP is closed: forget it (its late completions still report its number). */
    synchronized void detach(int slot) {
        SoftQueuePair[] a = qps;
        a[slot] = null;
        qps = a;
    }

    /** An attached QP went to ERROR (any thread): the owner flushes it at its next poll; wakes the owner. */
    void attention() {
        attention = true;
        wake();
    }

    void wake() {
        quiet.wake();
    }

    @Override
    public int poll(WorkCompletion[] out) {
        if (closed) {
            return 0;
        }
        housekeeping();
        int n = 0;
        SoftQueuePair[] a = null;
        int[] numbers = null;
        while (n < out.length) {
            int cell = QueueFile.RQ_BASE + (int) (head & mask) * QueueFile.CQE;
            if ((long) LONG.getAcquire(q, cell) != head + 1) {
                break;
            }
            if (a == null) {
                numbers = qpns;
                a = qps;
            }
            WorkCompletion wc = out[n++];
            int word = QueueFile.readCompletion(q, cell, wc);
            int slot = word >>> SLOT_SHIFT;
            int retire = (int) INT.get(q, cell + 28);
            LONG.setRelease(q, cell, head + capacity);
            head++;
            if (slot < a.length) {
                wc.qpNumber = numbers[slot];
                SoftQueuePair qp = a[slot];
                if (qp != null) {
                    qp.retired(word & 0xf, retire);
                }
            } else {
                wc.qpNumber = -1;
            }
        }
        return n;
    }

    /** Retries waiting sends and flushes QPs in ERROR (owner thread; only when there is something to do). */
    private void housekeeping() {
        if (waitingQps > 0) {
            for (SoftQueuePair qp : qps) {
                if (qp != null) {
                    qp.progressWaiting();
                }
            }
        }
        if (attention) {
            attention = false;
            for (SoftQueuePair qp : qps) {
                if (qp != null) {
                    qp.flushIfError();
                }
            }
        }
    }

    private boolean ready() {
        return (long) LONG.getAcquire(q, QueueFile.RQ_BASE + (int) (head & mask) * QueueFile.CQE) == head + 1
                || attention
                || closed;
    }

    /** Waits as {@link QuietWait} does, with the slices of {@link #quiet}. */
    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        return quiet.await(timeout, this);
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        wake();
        Shm.delete(path);
    }

    @Override
    public String toString() {
        return "soft CQ " + path.getFileName() + " (" + capacity + " entries)";
    }
}

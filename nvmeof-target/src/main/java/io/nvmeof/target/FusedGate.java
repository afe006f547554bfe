package io.nvmeof.target;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Makes a fused Compare and Write (NVMe Base 2.0c §3.4.2) atomic against the writes of every other queue of a
 * subsystem, without a lock on the ordinary write path. One per {@link Subsystem}.
 *
 * <p>Why this shape: the ordinary I/O path may take no lock, yet a fused pair must compare and write with no other
 * write landing on its blocks in between. A lock or range lock taken by every write would cost every write; fused
 * pairs are rare. So every queue owns a {@link Mark}, a counter only its own thread changes (no contention), and a
 * write that changes namespace memory runs as
 *
 * <pre>
 *   mark.enter()            // volatile store: "I am writing"
 *   if (gate.active())      // volatile load: a fused pair runs
 *       mark.exit(), retry later on this queue's thread (the write waits, the thread does not)
 *   else write, mark.exit()
 * </pre>
 *
 * and a fused pair runs as {@link #open()} (active = 1, a volatile store), then waits, without blocking its thread,
 * until every mark is 0, then compares and writes under {@code synchronized (this)} (fused pairs exclude each other;
 * no ordinary write ever takes that lock), then {@link #close()}. Store-then-load on both sides (Dekker) means at
 * least one of a writer and a fused pair sees the other: a writer either finished before the pair looked at its mark
 * or it sees the gate and waits. A write placed directly by the transport (RDMA Read into namespace memory) holds its
 * mark from placement until its data is in. Reads are not held back: ACWU (Identify Controller) promises atomicity
 * against writes.
 *
 * <p>Cost on the ordinary path: two volatile stores and one volatile load per write; nothing when no pair runs.
 * While a pair runs, the writes of the whole subsystem wait (re-queued on their own thread); a pair's window is one
 * in-memory compare and copy.
 */
final class FusedGate {
    /** One queue's count of writes in progress; changed only by that queue's thread. */
    static final class Mark {
        private volatile int writing;

        void enter() {
            writing = writing + 1;
        }

        void exit() {
            writing = writing - 1;
        }

        boolean idle() {
            return writing == 0;
        }
    }

    private final CopyOnWriteArrayList<Mark> marks = new CopyOnWriteArrayList<>();
    private volatile int active;

    /** A queue joins the subsystem (I/O Connect): its writes are counted from now on. */
    void register(Mark mark) {
        marks.add(mark);
    }

    /** The queue is gone. */
    void unregister(Mark mark) {
        marks.remove(mark);
    }

    /** Whether a fused pair runs: writers that see this after {@link Mark#enter()} must exit and retry later. */
    boolean active() {
        return active != 0;
    }

    /** A fused pair starts: new writes wait from now on. */
    synchronized void open() {
        active++;
    }

    /** The pair is done. */
    synchronized void close() {
        active--;
    }

    /** Whether every write that started before {@link #open()} is done, so the pair may run. */
    boolean writersDrained() {
        for (Mark m : marks) {
            if (!m.idle()) {
                return false;
            }
        }
        return true;
    }
}

package io.nvmeof.transport.rdma.soft;

import io.nvmeof.transport.rdma.verbs.MemoryRegion;

/**
 * A {@link SoftQueuePair}'s local send queue: the work requests waiting behind a Send that found no receive posted
 * (receiver not ready), in the order posted (RC ordering), as a ring of parallel arrays sized to the QP's send queue
 * (maxSendWr); the RNR timer of its head (rnr_retry 7 treated as "retry for this long"); and the count of waiting QPs
 * on the QP's shared CQ, if any, which this queue keeps (one while it is not empty) so that the CQ's poll retries
 * waiting sends only when there are some. Owned by that QP; its owner thread only. Nothing is allocated per work
 * request; a removed entry forgets its memory region.
 */
final class WaitingSends {
    final int[] op;
    final long[] wrId;
    final MemoryRegion[] mr;
    final int[] offset;
    final int[] length;
    final long[] raddr;
    final int[] rkey;
    final int[] inv;
    final boolean[] signaled;
    /** The oldest entry's index, and how many wait. */
    int head;

    int count;

    private final long rnrTimeoutNanos;
    /** The QP's shared CQ (null: the QP has its own). */
    private final SoftCompletionQueue sharedCq;

    private long rnrDeadline;

    WaitingSends(int capacity, long rnrTimeoutNanos, SoftCompletionQueue sharedCq) {
        this.rnrTimeoutNanos = rnrTimeoutNanos;
        this.sharedCq = sharedCq;
        op = new int[capacity];
        wrId = new long[capacity];
        mr = new MemoryRegion[capacity];
        offset = new int[capacity];
        length = new int[capacity];
        raddr = new long[capacity];
        rkey = new int[capacity];
        inv = new int[capacity];
        signaled = new boolean[capacity];
    }

    /**
     * Appends a work request behind the waiting ones (the caller keeps within the send queue's size); the first starts
     * the RNR timer.
     */
    void add(
            int op,
            long wrId,
            MemoryRegion mr,
            int offset,
            int length,
            long raddr,
            int rkey,
            int inv,
            boolean signaled) {
        int i = (head + count) % this.op.length;
        if (count == 0) {
            rnrDeadline = System.nanoTime() + rnrTimeoutNanos;
            if (sharedCq != null) {
                sharedCq.waitingQps++;
            }
        }
        this.op[i] = op;
        this.wrId[i] = wrId;
        this.mr[i] = mr;
        this.offset[i] = offset;
        this.length[i] = length;
        this.raddr[i] = raddr;
        this.rkey[i] = rkey;
        this.inv[i] = inv;
        this.signaled[i] = signaled;
        count++;
    }

    /** Drops the oldest entry. */
    void removeHead() {
        mr[head] = null;
        head = (head + 1) % op.length;
        count--;
        if (count == 0 && sharedCq != null) {
            sharedCq.waitingQps--;
        }
    }

    /** The head went out: the next one's RNR wait starts now. */
    void restartTimer() {
        rnrDeadline = System.nanoTime() + rnrTimeoutNanos;
    }

    /** Whether the head has waited for a receiver longer than the RNR timeout. */
    boolean headTimedOut() {
        return System.nanoTime() - rnrDeadline >= 0;
    }

    /** The QP is destroyed: every waiting entry is forgotten (its shared CQ no longer counts it). */
    void forget() {
        if (count > 0) {
            if (sharedCq != null) {
                sharedCq.waitingQps--;
            }
            count = 0;
        }
    }
}

package io.nvmeof.transport.rdma;

import java.nio.ByteBuffer;

/**
 * The request slots of one {@link RdmaTargetQueue}: one {@link RdmaTargetRequest} per command the host may have
 * outstanding (HSQSIZE+1, nvmeof-protocol.md §6.2), the FIFO of free slots in the order their responses were sent
 * (a new command takes the oldest: the host, having sent it, has seen that response, so its RDMA Writes are done), and
 * the commands that arrived before the core took the queue (receive buffer index and length, in order; at most one
 * per slot). Made in the queue's setup, before the accept; then owned by the queue's poll-group thread. Nothing here
 * allocates after construction.
 */
final class RequestSlots {
    private final RdmaTargetRequest[] requests;
    /** Free slots, oldest response first (a FIFO ring of slot indices). */
    private final int[] free;

    private int freeHead;
    private int freeCount;
    /** Commands that arrived before the core took the queue. */
    private final int[] earlyBuffer;

    private final int[] earlyLength;
    private int earlyCount;

    /** {@code slots} requests whose 16-byte responses are entries of {@code rspView}, all free. */
    RequestSlots(RdmaTargetQueue queue, int slots, ByteBuffer rspView) {
        requests = new RdmaTargetRequest[slots];
        free = new int[slots];
        earlyBuffer = new int[slots];
        earlyLength = new int[slots];
        for (int i = 0; i < slots; i++) {
            requests[i] = new RdmaTargetRequest(i, queue, rspView);
            free[i] = i;
        }
        freeCount = slots;
    }

    int size() {
        return requests.length;
    }

    RdmaTargetRequest get(int slot) {
        return requests[slot];
    }

    /** The oldest free slot, no longer free; null when none is (the host overran its queue size). */
    RdmaTargetRequest takeOldestFree() {
        if (freeCount == 0) {
            return null;
        }
        RdmaTargetRequest r = requests[free[freeHead]];
        freeHead = (freeHead + 1) % requests.length;
        freeCount--;
        return r;
    }

    /** The slot's response was posted: it is free again, the newest. */
    void release(RdmaTargetRequest r) {
        free[(freeHead + freeCount) % requests.length] = r.index;
        freeCount++;
    }

    /** Keeps a command that arrived before the core took the queue (cannot overflow: one per slot). */
    void holdEarly(int buffer, int length) {
        earlyBuffer[earlyCount] = buffer;
        earlyLength[earlyCount++] = length;
    }

    int earlyCount() {
        return earlyCount;
    }

    int earlyBuffer(int i) {
        return earlyBuffer[i];
    }

    int earlyLength(int i) {
        return earlyLength[i];
    }

    void clearEarly() {
        earlyCount = 0;
    }
}

package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequestBase;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One command slot of an NVMe/RDMA target queue ({@link #index}, the wr_id of its Sends and Reads). A command's receive
 * buffer (the poll group's SRQ buffer, or one of the queue's own) is bound to the slot when the command arrives
 * ({@link #bind}): the SQE is read in place from that buffer, the CQE written in place in the slot's entry of the
 * queue's registered response region. The slot holds the buffer until {@link #unbind}, which the queue calls exactly
 * once per command: to re-post it just before the response Send (nvmeof-protocol.md §6.2), or when the queue closes. The command, response, data description and
 * state are the shared {@link TargetRequestBase}; this class adds the keyed SGL, the write-data buffer and the segments
 * for RDMA Writes and Reads. All methods run on the thread of the queue's poll group.
 *
 * <pre>
 *  FREE (receive posted) --Send arrives--&gt; WITH_CORE --receiveData (keyed)--&gt; RECEIVING_DATA --last RDMA Read--&gt; WITH_CORE
 *                                              |                                                                    |
 *                                              +---------------------------- complete() ----------------------------+--&gt; FREE
 * </pre>
 * DEAD: the queue closed while the core held the slot; a late complete() is ignored.
 * After complete() the slot may still be "send pending": the segments the RDMA Writes read from, and the bounce
 * buffers, are released when the response Send completes, or when the host's next command lands in this buffer (the
 * host saw the response, so the Writes before it are done).
 */
final class RdmaTargetRequest extends TargetRequestBase {
    final int index;
    final RdmaTargetQueue queue;
    /** A 64-byte placeholder the SQE flyweight wraps while no receive buffer is bound. */
    private static final ByteBuffer NO_COMMAND =
            ByteBuffer.allocate(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN);

    /** The bound receive buffer's in-capsule data, from byte 64 (the buffer's view, made once per buffer). */
    ByteBuffer inCapsuleView = EMPTY;
    /** The bound receive buffer's index, or -1. */
    private int recvBuffer = -1;

    boolean keyed;
    boolean invalidate;
    long remoteAddress;
    int rkey;
    /** Write data in a bounce buffer (no direct placement) or an in-capsule copy at a non-zero offset. */
    RegisteredBufferPool.Buffer dataBuffer;

    ByteBuffer dataView;

    // Segments: controller→host data (addData) or host→controller destinations (addDestination). Parallel arrays.
    ByteBuffer[] segMemory = new ByteBuffer[12];
    int[] segOffset = new int[12];
    int[] segLength = new int[12];
    DataRelease[] segRelease = new DataRelease[12];
    MemoryRegion[] segRegion = new MemoryRegion[12];
    /** A bounce buffer standing in for an unregistered segment, or null. */
    RegisteredBufferPool.Buffer[] segBounce = new RegisteredBufferPool.Buffer[12];

    int segCount;
    int segBytes;
    boolean destinations;
    /** RDMA Reads: next segment to post, and how many are outstanding. */
    int nextRead;

    int readsOutstanding;
    /** Bytes of the keyed region covered by the RDMA Reads posted so far. */
    int readBytes;
    /** One bounce buffer for several small unregistered controller→host segments (copied together). */
    RegisteredBufferPool.Buffer coalesced;

    // The response Send in flight.
    boolean sendPending;
    int sendSeq;
    int sendWrs;

    RdmaTargetRequest(int index, RdmaTargetQueue queue, ByteBuffer rspRegion) {
        super(NO_COMMAND, 0, rspRegion, index * CompletionQueueEntry.LENGTH);
        this.index = index;
        this.queue = queue;
    }

    /** A command arrived in receive buffer {@code buffer} of {@code buffers}: the slot reads it in place from now on. */
    void bind(ReceiveBuffers buffers, int buffer) {
        recvBuffer = buffer;
        command().wrap(buffers.memory(), buffers.offset(buffer));
        inCapsuleView = buffers.inCapsule(buffer);
    }

    /** Forgets the bound receive buffer and returns its index (-1 if none): the caller re-posts it, once. */
    int unbind() {
        int b = recvBuffer;
        recvBuffer = -1;
        inCapsuleView = EMPTY;
        return b;
    }

    @Override
    public boolean directDataPlacement() {
        return keyed && hostToController() && transportStatus() == 0 && dataLength() > 0 && queue.zeroCopy();
    }

    @Override
    public void addDestination(ByteBuffer destination, int offset, int length, DataRelease release) {
        DataRelease r = release == null ? DataRelease.NONE : release;
        if (!directDataPlacement()
                || state() != State.WITH_CORE
                || dataRequested()
                || (segCount > 0 && !destinations)) {
            r.release();
            throw new IllegalStateException(
                    "addDestination not allowed now (CID " + cid() + ", state " + state() + ")");
        }
        if (length < 0
                || (long) segBytes + length > dataLength()
                || offset < 0
                || offset > destination.capacity() - length) {
            r.release();
            throw new IllegalArgumentException("addDestination of " + length + " bytes at " + offset + " after "
                    + segBytes + " of " + dataLength() + " (CID " + cid() + ")");
        }
        destinations = true;
        addSegment(destination, offset, length, r);
    }

    @Override
    protected void transferData(DataReceiver receiver) {
        queue.receiveData(this, receiver);
    }

    @Override
    public ByteBuffer data() {
        return dataView != null ? dataView : EMPTY;
    }

    @Override
    public void addData(ByteBuffer source, int offset, int length, DataRelease release) {
        DataRelease r = release == null ? DataRelease.NONE : release;
        if (state() != State.WITH_CORE || destinations) {
            r.release();
            throw new IllegalStateException("addData on a request in state " + state() + " (CID " + cid() + ")");
        }
        if (length < 0
                || (long) segBytes + length > dataLength()
                || offset < 0
                || offset > source.capacity() - length) {
            r.release();
            throw new IllegalArgumentException("addData of " + length + " bytes at " + offset + " after " + segBytes
                    + " exceeds the command's data length " + dataLength() + " (CID " + cid() + ")");
        }
        if (length == 0 || !queue.isOpen()) {
            r.release();
            return;
        }
        addSegment(source, offset, length, r);
    }

    private void addSegment(ByteBuffer memory, int offset, int length, DataRelease release) {
        if (segCount == segMemory.length) {
            grow();
        }
        int i = segCount++;
        segMemory[i] = memory;
        segOffset[i] = offset;
        segLength[i] = length;
        segRelease[i] = release;
        segRegion[i] = queue.regionFor(release);
        segBounce[i] = null;
        segBytes += length;
    }

    private void grow() {
        int n = segMemory.length * 2;
        segMemory = java.util.Arrays.copyOf(segMemory, n);
        segOffset = java.util.Arrays.copyOf(segOffset, n);
        segLength = java.util.Arrays.copyOf(segLength, n);
        segRelease = java.util.Arrays.copyOf(segRelease, n);
        segRegion = java.util.Arrays.copyOf(segRegion, n);
        segBounce = java.util.Arrays.copyOf(segBounce, n);
    }

    @Override
    protected void sendResponse() {
        queue.complete(this);
    }

    /** Releases every segment (and its bounce buffer) exactly once. */
    void releaseSegments(RegisteredBufferPool pool) {
        for (int i = 0; i < segCount; i++) {
            DataRelease r = segRelease[i];
            segRelease[i] = null;
            segMemory[i] = null;
            segRegion[i] = null;
            if (segBounce[i] != null) {
                pool.giveBack(segBounce[i]);
                segBounce[i] = null;
            }
            if (r != null) {
                try {
                    r.release();
                } catch (RuntimeException e) {
                    System.getLogger(RdmaTargetRequest.class.getName())
                            .log(System.Logger.Level.ERROR, "a DataRelease failed", e);
                }
            }
        }
        if (coalesced != null) {
            pool.giveBack(coalesced);
            coalesced = null;
        }
        segCount = 0;
        segBytes = 0;
        destinations = false;
    }

    /** Drops the write-data buffer. */
    void releaseData(RegisteredBufferPool pool) {
        if (dataBuffer != null) {
            pool.giveBack(dataBuffer);
            dataBuffer = null;
        }
        dataView = null;
    }

    /** Ready for a new command in this slot (the previous response's resources already released); then begin(). */
    void reset() {
        keyed = false;
        invalidate = false;
        remoteAddress = 0;
        rkey = 0;
        nextRead = 0;
        readsOutstanding = 0;
    }

    @Override
    public String toString() {
        return "RdmaTargetRequest[slot=" + index + " cid=" + cid() + " state=" + state() + " len=" + dataLength() + "]";
    }
}

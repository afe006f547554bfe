package io.nvmeof.transport.rdma;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The host→controller data of one {@link RdmaTargetQueue} (nvmeof-protocol.md §6.3): RDMA Reads of each keyed
 * command's data, straight into the core's destinations ({@code addDestination}: namespace memory, zero copy) or into a
 * registered bounce buffer, posted in command order with at most the negotiated initiator depth outstanding on the
 * QP; the receiver runs when a command's last Read completes. On the thread of the queue's poll group.
 */
final class RdmaReads {
    private static final Logger LOG = System.getLogger(RdmaReads.class.getName());

    private final RdmaTargetQueue queue;
    private final int depth;
    /** Commands waiting for Reads, by slot, in arrival order (a ring). */
    private final int[] wait;

    private int head;
    private int count;
    private int inFlight;

    RdmaReads(RdmaTargetQueue queue, int slots, int depth) {
        this.queue = queue;
        this.wait = new int[slots];
        this.depth = depth;
    }

    /** Calls the receiver at once (no data to move, or a transport status) or after the RDMA Reads. */
    void receive(RdmaTargetRequest r, DataReceiver receiver) {
        RegisteredBufferPool pool = queue.pool();
        if (r.transportStatus() != 0) {
            receiver.onData(r, r.transportStatus());
            return;
        }
        if (!r.keyed || r.inCapsuleData() || !r.hostToController()) {
            receiver.onData(r, 0);
            return;
        }
        if (r.destinations) {
            if (r.segBytes != r.dataLength()) {
                throw new IllegalStateException(
                        "destinations cover " + r.segBytes + " of " + r.dataLength() + " bytes (CID " + r.cid() + ")");
            }
            for (int i = 0; i < r.segCount; i++) {
                if (r.segRegion[i] == null) {
                    r.segBounce[i] = pool.take(r.segLength[i]); // unregistered destination: read, then copy
                }
            }
        } else {
            try {
                r.dataBuffer = pool.take(r.dataLength());
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "no buffer for " + r.dataLength() + " bytes of write data: " + e);
                receiver.onData(r, Status.INTERNAL_ERROR);
                return;
            }
            r.dataView = r.dataBuffer.view;
        }
        r.receivingData(receiver);
        r.nextRead = 0;
        r.readsOutstanding = 0;
        r.readBytes = 0;
        wait[(head + count) % wait.length] = r.index;
        count++;
        pump();
    }

    /** Posts RDMA Reads in command order while fewer than the negotiated initiator depth are outstanding (nvmeof-protocol.md §6.3). */
    private void pump() {
        while (count > 0 && inFlight < depth && !queue.failing()) {
            RdmaTargetRequest r = queue.request(wait[head]);
            int pieces = r.destinations ? r.segCount : 1;
            int i = r.nextRead;
            MemoryRegion region;
            int offset;
            int length;
            if (!r.destinations) {
                region = r.dataBuffer.region;
                offset = r.dataBuffer.regionOffset;
                length = r.dataLength();
            } else if (r.segBounce[i] != null) {
                region = r.segBounce[i].region;
                offset = r.segBounce[i].regionOffset;
                length = r.segLength[i];
            } else {
                region = r.segRegion[i];
                offset = r.segOffset[i];
                length = r.segLength[i];
            }
            if (!queue.qp()
                    .postRead(
                            RdmaTargetQueue.KIND_READ | queue.tagBits() | r.index,
                            region,
                            offset,
                            length,
                            r.remoteAddress + r.readBytes,
                            r.rkey)) {
                queue.fault(
                        new IOException("RDMA queue " + queue.qid() + ": cannot post an RDMA Read (send queue full)"));
                return;
            }
            inFlight++;
            r.readsOutstanding++;
            r.readBytes += length;
            r.nextRead++;
            if (r.nextRead == pieces) {
                head = (head + 1) % wait.length;
                count--;
            }
        }
    }

    /** One RDMA Read of {@code r} completed: the receiver runs after its last one. */
    void done(RdmaTargetRequest r) {
        inFlight--;
        r.readsOutstanding--;
        int pieces = r.destinations ? r.segCount : 1;
        if (r.state() == RdmaTargetRequest.State.RECEIVING_DATA && r.nextRead == pieces && r.readsOutstanding == 0) {
            if (r.destinations) {
                for (int i = 0; i < r.segCount; i++) {
                    RegisteredBufferPool.Buffer b = r.segBounce[i];
                    if (b != null) {
                        r.segMemory[i].put(r.segOffset[i], b.view, 0, r.segLength[i]);
                        queue.listener().copied(r.segLength[i]);
                        queue.pool().giveBack(b);
                        r.segBounce[i] = null;
                    } else {
                        queue.listener().placed(r.segLength[i]);
                    }
                }
            } else {
                queue.listener().copied(r.dataLength()); // the core copies it out of data()
            }
            r.dataReceived().onData(r, 0);
        }
        pump();
    }
}

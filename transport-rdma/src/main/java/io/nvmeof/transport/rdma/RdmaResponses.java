package io.nvmeof.transport.rdma;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import java.io.IOException;

/**
 * The controller→host side of one {@link RdmaTargetQueue} (nvmeof-protocol.md §6.2, §6.3): the RDMA Writes of a
 * completed command's data to the host's keyed buffer, one unsignaled Write per segment from its registered memory
 * (namespace chunks, zero copy) or a bounce copy for unregistered memory, more than
 * {@link RdmaTargetQueue#MAX_WRITE_SEGMENTS} segments coalesced into one bounce copy; and the response Send of the
 * slot's 16-byte entry in the queue's response region, signaled, with Invalidate(KEY) for a 0x4F descriptor
 * (nvmeof-protocol.md §6.4); the segments and data buffer released when no longer needed, the slot given back to the
 * free FIFO. Made when the queue starts; on the thread of the queue's poll group. The queue keeps ownership of the
 * response region and of the request slots.
 */
final class RdmaResponses {
    private final RdmaTargetQueue queue;
    private final MemoryRegion rspMr;
    private final RequestSlots requests;

    RdmaResponses(RdmaTargetQueue queue, MemoryRegion rspMr, RequestSlots requests) {
        this.queue = queue;
        this.rspMr = rspMr;
        this.requests = requests;
    }

    /**
     * TargetRequest.complete: RDMA Writes (if any), re-post the receive, then the response Send
     * (nvmeof-protocol.md §6.2, §6.3); the slot is free again, the newest. An error status sends no data.
     */
    void complete(RdmaTargetRequest r) {
        RegisteredBufferPool pool = queue.pool();
        if (queue.closed()) {
            r.releaseSegments(pool);
            r.releaseData(pool);
            r.state(RdmaTargetRequest.State.DEAD);
            return;
        }
        int status = r.response().status();
        int wrs = 0;
        if (r.destinations || r.segCount == 0) {
            r.releaseSegments(pool); // destinations: the reads are done (or never happened)
        } else if (Status.isSuccess(status) && r.keyed && !r.hostToController()) {
            wrs = postWrites(r);
            if (wrs < 0) {
                return;
            }
        } else {
            r.releaseSegments(pool); // an error status sends no data, like nvmet
        }
        r.releaseData(pool);
        if (!queue.repost(r)) {
            queue.fault(new IOException("RDMA queue " + queue.qid() + ": cannot re-post a receive buffer"));
            return;
        }
        boolean posted = postResponse(r);
        r.state(RdmaTargetRequest.State.FREE);
        r.sendPending = true;
        r.sendWrs = wrs + 1;
        requests.release(r);
        if (!posted) {
            queue.fault(
                    new IOException("RDMA queue " + queue.qid() + ": cannot post the response Send (send queue full)"));
        }
    }

    /** RDMA Writes of the segments to the host's keyed buffer; returns how many were posted, or -1 after a fault. */
    private int postWrites(RdmaTargetRequest r) {
        RegisteredBufferPool pool = queue.pool();
        long tagBits = queue.tagBits();
        long remote = r.remoteAddress;
        boolean coalesce = r.segCount > RdmaTargetQueue.MAX_WRITE_SEGMENTS;
        if (coalesce) {
            RegisteredBufferPool.Buffer b = pool.take(r.segBytes);
            int at = 0;
            for (int i = 0; i < r.segCount; i++) {
                b.view.put(at, r.segMemory[i], r.segOffset[i], r.segLength[i]);
                at += r.segLength[i];
            }
            r.coalesced = b;
            queue.listener().copied(at);
            if (!queue.qp()
                    .postWrite(
                            RdmaTargetQueue.KIND_WRITE | tagBits | r.index,
                            b.region,
                            b.regionOffset,
                            at,
                            remote,
                            r.rkey,
                            false)) {
                writeFailed();
                return -1;
            }
            return 1;
        }
        for (int i = 0; i < r.segCount; i++) {
            MemoryRegion region = r.segRegion[i];
            int offset = r.segOffset[i];
            int length = r.segLength[i];
            if (region == null) {
                RegisteredBufferPool.Buffer b = pool.take(length);
                b.view.put(0, r.segMemory[i], offset, length);
                r.segBounce[i] = b;
                region = b.region;
                offset = b.regionOffset;
                queue.listener().copied(length);
            } else {
                queue.listener().placed(length);
            }
            if (!queue.qp()
                    .postWrite(
                            RdmaTargetQueue.KIND_WRITE | tagBits | r.index,
                            region,
                            offset,
                            length,
                            remote,
                            r.rkey,
                            false)) {
                writeFailed();
                return -1;
            }
            remote += length;
        }
        return r.segCount;
    }

    private void writeFailed() {
        queue.fault(new IOException("RDMA queue " + queue.qid() + ": cannot post an RDMA Write (send queue full)"));
    }

    /**
     * Posts the response Send of the request's slot (a new send sequence number in its wr_id, so a late completion of
     * an earlier use of the slot is told apart); false if the send queue is full.
     */
    private boolean postResponse(RdmaTargetRequest r) {
        r.sendSeq = (r.sendSeq + 1) & 0xFFFF;
        long wrId = RdmaTargetQueue.KIND_SEND | queue.tagBits() | ((long) r.sendSeq << 16) | r.index;
        int offset = r.index * CompletionQueueEntry.LENGTH;
        return r.invalidate && r.keyed
                ? queue.qp().postSendWithInvalidate(wrId, rspMr, offset, CompletionQueueEntry.LENGTH, r.rkey, true)
                : queue.qp().postSend(wrId, rspMr, offset, CompletionQueueEntry.LENGTH, true);
    }
}

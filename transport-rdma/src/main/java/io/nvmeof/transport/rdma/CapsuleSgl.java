package io.nvmeof.transport.rdma;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;

/** The target's reading of a command capsule's SGL1 (nvmeof-protocol.md §1.3, §6.4), for {@link RdmaTargetQueue}. */
final class CapsuleSgl {
    private CapsuleSgl() {}

    /**
     * Sets dataLength, keyed/in-capsule and transportStatus from the SGL (nvmeof-protocol.md §1.3 acceptance table for RDMA, nvmeof-protocol.md §6.4): LENGTH 0 of any type → no data; 0x40/0x4F
     * keyed (a wrong keyed subtype → Invalid Field), 0x01 in-capsule (host→controller only, else Invalid Field; beyond the
     * queue's in-capsule size, which is 0 on the admin queue → SGL Offset Invalid; beyond the bytes received → Data SGL
     * Length Invalid), any other type → SGL Descriptor Type Invalid; all with DNR.
     */
    static void classify(RdmaTargetRequest r, int inCapsuleBytes, int inCapsuleSize, RegisteredBufferPool pool) {
        SubmissionQueueEntry sqe = r.command();
        SglDescriptor sgl = sqe.sgl();
        int type = sgl.type();
        int subtype = sgl.subtype();
        if ((type == SglDescriptor.TYPE_KEYED_DATA_BLOCK ? sgl.keyedLength() : sgl.dataLength()) == 0) {
            // No data: a descriptor of LENGTH 0 says nothing, whatever its type or subtype. Hosts send an all-zero
            // SGL1 with Keep Alive, Flush and Property Get/Set; the command's own length check decides, as on TCP
            // (nvmet_tcp_map_data ignores such a descriptor; nvmeof-protocol.md §1.3).
            // A keyed 0x4F of LENGTH 0 is not invalidated either: nvmet-rdma returns before it takes the key.
            r.dataLength(0);
            return;
        }
        if (type == SglDescriptor.TYPE_KEYED_DATA_BLOCK) {
            int length = sgl.keyedLength();
            r.dataLength(length);
            if (subtype != SglDescriptor.SUBTYPE_ADDRESS && subtype != SglDescriptor.SUBTYPE_INVALIDATE) {
                r.transportStatus(Status.dnr(Status.INVALID_FIELD));
                return;
            }
            r.keyed = length > 0;
            r.remoteAddress = sgl.address();
            r.rkey = sgl.key();
            r.invalidate = subtype == SglDescriptor.SUBTYPE_INVALIDATE;
            if (length > RdmaTransport.MAX_TRANSFER) {
                r.transportStatus(Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
            }
        } else if (type == SglDescriptor.TYPE_DATA_BLOCK) {
            if (subtype != SglDescriptor.SUBTYPE_OFFSET) {
                r.transportStatus(Status.dnr(Status.INVALID_FIELD));
                return;
            }
            long length = sgl.dataLength();
            long offset = sgl.address();
            r.dataLength((int) Math.min(length, Integer.MAX_VALUE));
            if (length == 0) {
                return;
            }
            r.inCapsuleData(true);
            if (!r.hostToController()) {
                r.transportStatus(Status.dnr(Status.INVALID_FIELD)); // nvmet: in-capsule data on a read
            } else if (offset < 0 || offset + length > inCapsuleSize) {
                r.transportStatus(
                        Status.dnr(Status.SGL_OFFSET_INVALID)); // 0 on the admin queue (nvmeof-protocol.md §6.4)
            } else if (offset + length > inCapsuleBytes) {
                r.transportStatus(Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
            } else if (offset == 0) {
                r.dataView = r.inCapsuleView; // in place in the receive buffer, until complete()
            } else {
                r.dataBuffer = pool.take((int) length);
                r.dataBuffer.view.put(0, r.inCapsuleView, (int) offset, (int) length);
                r.dataView = r.dataBuffer.view;
            }
        } else {
            r.transportStatus(Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID));
        }
    }
}

package io.nvmeof.transport.tcp;

import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;

/**
 * Where a new command's data is, from its SGL and its CapsuleCmd (nvmeof-protocol.md §1.3 acceptance table, §5.10,
 * §7.6): sets the slot's dataLength, inCapsule flag and transportStatus, and gives it its in-capsule data. A bad
 * descriptor becomes a status for the core, never a fault; the in-capsule bytes were consumed from the stream either
 * way (nvmeof-protocol.md §5.13). One per connection, used on its event loop.
 */
final class CapsuleDataCheck {
    private final ListenerOptions options;

    CapsuleDataCheck(ListenerOptions options) {
        this.options = options;
    }

    /**
     * Classifies the command just copied into {@code r} from {@code pdu}, on queue {@code qid} (-1 before Connect).
     * In-capsule data that passes the checks stays where the decoder put it when that is one contiguous piece of
     * native memory: the slot takes the PDU's buffer reference and releases it at recycle. Otherwise (heap,
     * composite, no {@link DirectView} on this JVM) it is copied into a buffer from {@code dataPool}.
     */
    void classify(TcpTargetRequest r, NvmeTcpPdu pdu, int qid, DataBufferPool dataPool) {
        SubmissionQueueEntry sqe = r.command();
        SglDescriptor sgl = sqe.sgl();
        int id = sgl.identifier();
        long length = sgl.dataLength();
        int inCapsuleBytes = pdu.dataLength();
        boolean fabrics = sqe.opcode() == FabricsCommandType.OPCODE;
        r.dataLength((int) Math.min(length, Integer.MAX_VALUE));

        if (inCapsuleBytes > 0 || (id == SglDescriptor.ID_IN_CAPSULE && length > 0)) {
            r.inCapsuleData(true);
            int limit =
                    fabrics || qid <= 0 ? NvmeTcpPduDecoder.ADMIN_IN_CAPSULE_DATA_SIZE : options.inCapsuleDataSize();
            int status;
            if (id != SglDescriptor.ID_IN_CAPSULE) {
                status = Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID);
            } else if (!r.hostToController()) {
                status = Status.dnr(Status.INVALID_FIELD); // nvmet: in-capsule data on a read (nvmeof-protocol.md §7.6)
            } else if (sgl.address() != 0) {
                status = Status.dnr(Status.SGL_OFFSET_INVALID); // ICDOFF is 0 (nvmeof-protocol.md §1.3, §7.5)
            } else if (length > limit) {
                status = Status.dnr(
                        Status.SGL_OFFSET_INVALID); // more than the in-capsule size (nvmeof-protocol.md §1.3, §5.12)
            } else if (length != inCapsuleBytes) {
                status =
                        Status.dnr(Status.DATA_SGL_LENGTH_INVALID); // SGL and PLEN must agree (nvmeof-protocol.md §5.5)
            } else if (!pdu.dataDigestValid()) {
                status = Status.DATA_TRANSFER_ERROR; // nvmeof-protocol.md §5.8: fails the command, not the queue
            } else {
                status = 0;
            }
            r.transportStatus(status);
            if (status == 0 && !r.keepPduData(pdu)) {
                r.data = dataPool.take(inCapsuleBytes);
                r.data.buf.setBytes(0, pdu.buffer(), pdu.dataIndex(), inCapsuleBytes);
            }
        } else if ((sgl.isKeyed() ? sgl.keyedLength() : length) == 0) {
            // No data: a descriptor of LENGTH 0 says nothing, whatever its type. nvmet ignores it (nvmet_tcp_map_data),
            // and third-party hosts send an all-zero SGL1 (type 0h, length 0) with Keep Alive, Flush and Property
            // Get/Set; the command's own length check decides (nvmeof-protocol.md §1.3).
            r.dataLength(0);
        } else if (id == SglDescriptor.ID_TCP_TRANSPORT) {
            // 0x5A: data in C2HData/H2CData PDUs.
            if (length > NvmeTcpTargetHandler.MAX_TRANSFER_LENGTH) {
                r.transportStatus(Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
            }
        } else {
            r.transportStatus(Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID));
        }
    }
}

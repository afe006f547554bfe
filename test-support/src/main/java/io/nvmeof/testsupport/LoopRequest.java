package io.nvmeof.testsupport;

import io.nvmeof.core.command.DataDirection;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.TargetRequestBase;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One command on a loop queue as the target sees it: copies of the SQE and of host-to-controller data. Made on the
 * host thread of its {@link LoopConnection}, then owned by the target until its response goes back.
 */
final class LoopRequest extends TargetRequestBase {
    final LoopConnection connection;
    final HostCommand host;
    ByteBuffer data;
    int produced;

    LoopRequest(LoopConnection connection, HostCommand host) {
        this.connection = connection;
        this.host = host;
        SubmissionQueueEntry sqe = command();
        sqe.buffer().put(0, host.command().buffer(), host.command().offset(), SubmissionQueueEntry.LENGTH);
        begin();
        int length = host.dataLength();
        int opc = sqe.opcode();
        boolean toController = DataDirection.of(sqe) == DataDirection.HOST_TO_CONTROLLER;
        // In-capsule like NVMe/TCP: fabrics and admin commands up to 8192 bytes, I/O up to the negotiated size.
        int limit = opc == FabricsCommandType.OPCODE || connection.options.qid() == 0 ? 8192 : connection.maxInCapsule;
        boolean inCapsule = toController && length > 0 && length <= limit;
        dataLength(length);
        inCapsuleData(inCapsule);
        sqe.sgl().set(inCapsule ? SglDescriptor.ID_IN_CAPSULE : SglDescriptor.ID_TCP_TRANSPORT, 0, length);
        if (toController && length > 0) {
            data = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
            data.put(0, host.dataBuffer(), host.dataOffset(), length);
        }
    }

    @Override
    protected void transferData(DataReceiver receiver) {
        receiver.onData(this, 0);
    }

    @Override
    public ByteBuffer data() {
        return data;
    }

    @Override
    public void addData(ByteBuffer source, int offset, int len, DataRelease release) {
        try {
            if (produced + len > dataLength()) {
                throw new IllegalStateException("more data than the command's " + dataLength() + " bytes");
            }
            // Like an RDMA Write: straight into the host's buffer.
            host.dataBuffer().put(host.dataOffset() + produced, source, offset, len);
            produced += len;
        } finally {
            release.release();
        }
    }

    @Override
    protected void sendResponse() {
        connection.respond(this);
    }
}

package io.nvmeof.perf.jmh;

import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One command a benchmark sends while it sets up (Connect, Property Set, a write that fills the namespace): its own
 * 64-byte SQE and data buffer, and the response it got. Not for the measured path: it keeps the response's fields.
 */
final class SetupCommand implements HostCommand {
    private final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    private final ByteBuffer data;
    private boolean done;
    private int status;
    private int dw0;
    private Throwable error;

    /** A command with {@code dataLength} bytes of data (0 for none), CID {@code cid}, SGL in SGL1. */
    SetupCommand(int cid, int dataLength) {
        sqe.wrap(ByteBuffer.allocateDirect(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN), 0);
        sqe.cid(cid).flags(SubmissionQueueEntry.FLAGS_SGL);
        data = dataLength == 0 ? null : ByteBuffer.allocateDirect(dataLength).order(ByteOrder.LITTLE_ENDIAN);
    }

    SubmissionQueueEntry sqe() {
        return sqe;
    }

    ByteBuffer data() {
        return data;
    }

    /** DW0 of a successful response; throws with the status or the transport's error otherwise. */
    int dw0() {
        if (error != null) {
            throw new IllegalStateException("command " + sqe + " failed", error);
        }
        if (!done) {
            throw new IllegalStateException("no response to " + sqe);
        }
        if (status != 0) {
            throw new IllegalStateException(String.format("command %s: status 0x%x", sqe, status));
        }
        return dw0;
    }

    @Override
    public SubmissionQueueEntry command() {
        return sqe;
    }

    @Override
    public ByteBuffer dataBuffer() {
        return data;
    }

    @Override
    public int dataOffset() {
        return 0;
    }

    @Override
    public int dataLength() {
        return data == null ? 0 : data.capacity();
    }

    @Override
    public void onResponse(CompletionQueueEntry response) {
        done = true;
        status = response.status();
        dw0 = response.dw0();
    }

    @Override
    public void onTransportError(Throwable cause) {
        error = cause;
    }
}

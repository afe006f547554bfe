package io.nvmeof.core.host;

import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicInteger;

/** A {@link HostCommand} that counts its outcomes. */
class TestCommand implements HostCommand {
    final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    final AtomicInteger responses = new AtomicInteger();
    final AtomicInteger errors = new AtomicInteger();
    volatile Throwable error;
    ByteBuffer data;
    int offset;
    int length;
    /** Set by the test's sender: which round of this command was sent. */
    volatile long seq;

    TestCommand(int opcode, int cid) {
        sqe.wrap(ByteBuffer.allocate(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN), 0);
        sqe.opcode(opcode).cid(cid);
    }

    TestCommand data(ByteBuffer b, int off, int len) {
        this.data = b;
        this.offset = off;
        this.length = len;
        return this;
    }

    int outcomes() {
        return responses.get() + errors.get();
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
        return offset;
    }

    @Override
    public int dataLength() {
        return length;
    }

    @Override
    public void onResponse(CompletionQueueEntry response) {
        responses.incrementAndGet();
    }

    @Override
    public void onTransportError(Throwable cause) {
        error = cause;
        errors.incrementAndGet();
    }
}

package io.nvmeof.transport.tcp;

import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/** A HostCommand that records what the transport tells it. Thread-safe enough for the loopback tests. */
class TestCommand implements HostCommand {
    final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    ByteBuffer data;
    int offset;
    int length;
    final AtomicInteger responses = new AtomicInteger();
    final AtomicInteger errors = new AtomicInteger();
    volatile int status = -1;
    volatile int dw0;
    volatile int dw1;
    volatile int cid = -1;
    volatile Throwable error;
    volatile CountDownLatch done = new CountDownLatch(1);

    TestCommand(int opcode, int cid) {
        sqe.wrap(ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN), 0);
        sqe.opcode(opcode).flags(SubmissionQueueEntry.FLAGS_SGL).cid(cid).nsid(1);
    }

    TestCommand data(ByteBuffer buffer, int offset, int length) {
        this.data = buffer;
        this.offset = offset;
        this.length = length;
        return this;
    }

    /** Ready for another submit. */
    TestCommand reset() {
        status = -1;
        error = null;
        done = new CountDownLatch(1);
        return this;
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
        status = response.status();
        dw0 = response.dw0();
        dw1 = response.dw1();
        cid = response.cid();
        responses.incrementAndGet();
        done.countDown();
    }

    @Override
    public void onTransportError(Throwable cause) {
        error = cause;
        errors.incrementAndGet();
        done.countDown();
    }

    int outcomes() {
        return responses.get() + errors.get();
    }
}

package io.nvmeof.transport.rdma;

import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A host command for the tests: records the response (status, DW0) or the transport error, and counts callbacks. */
final class TestCommand implements HostCommand {
    final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    final CompletableFuture<int[]> result = new CompletableFuture<>();
    final AtomicInteger callbacks = new AtomicInteger();
    final ByteBuffer data;
    final int offset;
    final int length;
    volatile Thread callbackThread;

    TestCommand(int cid, ByteBuffer data, int offset, int length) {
        sqe.wrap(ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN), 0);
        sqe.cid(cid);
        sqe.flags(SubmissionQueueEntry.FLAGS_SGL);
        this.data = data;
        this.offset = offset;
        this.length = length;
    }

    static TestCommand read(int cid, long slba, ByteBuffer into, int length) {
        TestCommand c = new TestCommand(cid, into, 0, length);
        c.sqe.opcode(0x02).nsid(1).slba(slba).nlb(length / FakeCore.BS - 1);
        return c;
    }

    static TestCommand write(int cid, long slba, ByteBuffer from, int length) {
        TestCommand c = new TestCommand(cid, from, 0, length);
        c.sqe.opcode(0x01).nsid(1).slba(slba).nlb(length / FakeCore.BS - 1);
        return c;
    }

    /** A fabrics Connect with 1024 bytes of Connect data (first byte 0x11). */
    static TestCommand connect(int cid, int qid, int sqsize) {
        ByteBuffer d = ByteBuffer.allocate(1024).order(ByteOrder.LITTLE_ENDIAN);
        d.put(0, (byte) 0x11);
        TestCommand c = new TestCommand(cid, d, 0, 1024);
        c.sqe.opcode(0x7F).fctype(0x01);
        c.sqe.buffer().putShort(42, (short) qid).putShort(44, (short) sqsize);
        return c;
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
        callbacks.incrementAndGet();
        callbackThread = Thread.currentThread();
        result.complete(new int[] {response.status(), response.dw0(), response.cid()});
    }

    @Override
    public void onTransportError(Throwable cause) {
        callbacks.incrementAndGet();
        result.completeExceptionally(cause);
    }

    int status() throws Exception {
        return result.get(10, TimeUnit.SECONDS)[0];
    }
}

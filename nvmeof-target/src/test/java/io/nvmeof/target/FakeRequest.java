package io.nvmeof.target;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequestBase;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A target request ({@link TargetRequestBase}) of the in-JVM test transport: a 64-byte command, a 16-byte response, optional host-to-controller
 * data (heap or direct) and the controller-to-host segments the core adds. By default it copies the segments out and
 * releases them when the command completes, like a transport that has sent them; with {@link #holdData()} it keeps them
 * unreleased until {@link #releaseData()}, like a transport whose socket is slow.
 */
public class FakeRequest extends TargetRequestBase {
    public final ByteBuffer commandBuffer = command().buffer();
    final CompletableFuture<FakeRequest> done = new CompletableFuture<>();

    private InJvmQueue queue;
    private ByteBuffer hostData;
    private int dataStatus;
    private boolean asyncData;
    private boolean hold;
    private int added;
    private final List<Segment> segments = new ArrayList<>();
    private byte[] controllerData = new byte[0];
    private volatile int completions;

    /** One segment handed to {@link #addData}. */
    public record Segment(ByteBuffer source, int offset, int length, DataRelease release) {
        public byte[] bytes() {
            byte[] out = new byte[length];
            source.get(offset, out);
            return out;
        }
    }

    public FakeRequest() {
        begin(); // the core holds it from the start; the test builds the command in place
        command().flags(SubmissionQueueEntry.FLAGS_SGL);
    }

    // ---- building ----

    public SubmissionQueueEntry sqe() {
        return command();
    }

    /** Controller-to-host (or no) data of {@code length} bytes: SGL 0x5A like the TCP host. */
    public FakeRequest expect(int length) {
        super.dataLength(length);
        command().sgl().set(SglDescriptor.ID_TCP_TRANSPORT, 0, length);
        return this;
    }

    /** Host-to-controller data: in-capsule (SGL 0x01), heap buffer unless {@code direct}. */
    public FakeRequest send(byte[] data, boolean direct) {
        ByteBuffer b = (direct ? ByteBuffer.allocateDirect(data.length) : ByteBuffer.allocate(data.length))
                .order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, data);
        hostData = b;
        super.dataLength(data.length);
        inCapsuleData(!asyncData);
        command().sgl().set(SglDescriptor.ID_IN_CAPSULE, 0, data.length);
        return this;
    }

    public FakeRequest send(byte[] data) {
        return send(data, false);
    }

    /** Overrides the SGL length the core sees. */
    @Override
    public FakeRequest dataLength(int length) {
        super.dataLength(length);
        command().sgl().dataLength(length);
        return this;
    }

    /** Delivers the write data later, through the queue's executor, like an R2T/H2CData exchange. */
    public FakeRequest asyncData() {
        this.asyncData = true;
        inCapsuleData(false);
        return this;
    }

    public FakeRequest dataStatus(int status) {
        this.dataStatus = status;
        return this;
    }

    @Override
    public FakeRequest transportStatus(int status) {
        super.transportStatus(status);
        return this;
    }

    public FakeRequest holdData() {
        this.hold = true;
        return this;
    }

    void attach(InJvmQueue q) {
        this.queue = q;
    }

    // ---- TargetRequest ----

    @Override
    protected void transferData(DataReceiver receiver) {
        if (hostData == null) {
            hostData = ByteBuffer.allocate(dataLength()).order(ByteOrder.LITTLE_ENDIAN);
        }
        if (asyncData) {
            queue.execute(() -> receiver.onData(this, dataStatus));
        } else {
            receiver.onData(this, dataStatus);
        }
    }

    @Override
    public ByteBuffer data() {
        return hostData;
    }

    @Override
    public void addData(ByteBuffer source, int offset, int length, DataRelease release) {
        if (added + length > dataLength()) {
            throw new IllegalStateException(
                    "addData beyond the data length: " + (added + length) + " > " + dataLength());
        }
        added += length;
        segments.add(new Segment(source, offset, length, release));
    }

    @Override
    protected void sendResponse() {
        if (++completions > 1) {
            throw new AssertionError("request completed twice");
        }
        if (queue != null && !queue.inQueueThread()) {
            done.completeExceptionally(new AssertionError("completed off the queue thread: " + Thread.currentThread()));
            return;
        }
        byte[] out = new byte[added];
        int at = 0;
        for (Segment s : segments) {
            s.source().get(s.offset(), out, at, s.length());
            at += s.length();
        }
        controllerData = out;
        if (!hold) {
            releaseData();
        }
        done.complete(this);
    }

    /** Releases every held segment once. */
    public void releaseData() {
        for (Segment s : segments) {
            s.release().release();
        }
        segments.clear();
    }

    // ---- results ----

    public List<Segment> segments() {
        return segments;
    }

    /**
     * The CQE status without More (M): tests compare the status the spec names; whether an Error Information entry
     * was made is {@link #more()}.
     */
    public int status() {
        return response().status() & ~Status.MORE_BIT;
    }

    /** The CQE's More bit: the controller logged an Error Information entry for this command. */
    public boolean more() {
        return Status.isMore(response().status());
    }

    public int dw0() {
        return response().dw0();
    }

    public int dw1() {
        return response().dw1();
    }

    public long result64() {
        return response().result64();
    }

    public int sqhd() {
        return response().sqhd();
    }

    public int sqid() {
        return response().sqid();
    }

    /** The controller-to-host data as the host would receive it. */
    public byte[] received() {
        return controllerData;
    }

    public ByteBuffer dataBuffer() {
        return ByteBuffer.wrap(controllerData).order(ByteOrder.LITTLE_ENDIAN);
    }

    public int completions() {
        return completions;
    }

    @Override
    public String toString() {
        return command() + " -> " + response();
    }
}

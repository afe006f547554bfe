package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequestBase;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One reusable command slot of an NVMe/TCP target connection; its index is the R2T transfer tag (TTAG, nvmeof-protocol.md §5.10).
 * The command, response, data description and state are the shared {@link TargetRequestBase}; this class adds where
 * the write data lives (the CapsuleCmd's or H2CData's own PDU buffer, kept, or a pooled buffer) and the
 * controller-to-host segments waiting for C2HData. Slots are created lazily up to the queue's limit and then only
 * recycled through the connection's free list, so the command path allocates nothing. Every method runs on the connection's event loop.
 *
 * <pre>
 *  FREE --capsule--&gt; WITH_CORE --receiveData (not in-capsule)--&gt; RECEIVING_DATA --last H2CData--&gt; WITH_CORE
 *                        |                                                                              |
 *                        +------------------------------- complete() ----------------------------------+--&gt; FREE
 * </pre>
 */
final class TcpTargetRequest extends TargetRequestBase {
    final int index;
    private final NvmeTcpTargetHandler connection;

    /** Host-to-controller data copied into a pooled buffer, or null. */
    DataBufferPool.Entry data;

    /**
     * The CapsuleCmd or H2CData PDU buffer (a slice of the decoder's cumulation) whose data this command uses in
     * place, or null. This slot owns that reference and releases it once, in {@link #recycle}.
     */
    private ByteBuf keptPdu;
    /** {@link #keptPdu}'s data as the core sees it: this slot's own view, re-pointed per command; or null. */
    private ByteBuffer keptData;
    /** Made once per slot (never per command), little-endian as {@code data()} must be. */
    private final DirectView keptView = new DirectView(ByteOrder.LITTLE_ENDIAN);
    /** H2CData bytes received so far (DATAO of the next one, nvmeof-protocol.md §5.10). */
    int received;
    /** A data digest failed on one of this command's H2CData PDUs (nvmeof-protocol.md §5.8). */
    boolean dataDigestError;

    /** Controller-to-host segments added and not yet sent. */
    SegmentByteBuf[] segments = new SegmentByteBuf[4];

    int segmentCount;
    int segmentBytes;

    TcpTargetRequest(int index, NvmeTcpTargetHandler connection) {
        this.index = index;
        this.connection = connection;
    }

    /** The SQE's backing buffer, for the handler to copy a capsule's SQE into. */
    ByteBuffer sqeBuffer() {
        return command().buffer();
    }

    @Override
    protected void transferData(DataReceiver receiver) {
        connection.receiveData(this, receiver);
    }

    /**
     * Keeps the data of {@code pdu} (a CapsuleCmd's in-capsule data, or an H2CData carrying the whole transfer) where
     * the decoder put it, if that is one contiguous piece of native memory: takes the PDU's buffer reference
     * ({@link NvmeTcpPdu#takeBuffer}) and points this slot's view at the data bytes. Returns false, taking nothing,
     * when the memory has no address (heap, composite) or the view is not supported on this JVM; the caller then
     * copies.
     */
    boolean keepPduData(NvmeTcpPdu pdu) {
        ByteBuf buf = pdu.buffer();
        if (!buf.hasMemoryAddress()) {
            return false;
        }
        ByteBuffer view = keptView.at(buf.memoryAddress() + pdu.dataIndex(), pdu.dataLength());
        if (view == null) {
            return false;
        }
        keptPdu = pdu.takeBuffer();
        keptData = view;
        return true;
    }

    @Override
    public ByteBuffer data() {
        if (keptData != null) {
            return keptData;
        }
        return data != null ? data.view : EMPTY;
    }

    @Override
    public void addData(ByteBuffer source, int offset, int length, DataRelease release) {
        DataRelease r = release == null ? DataRelease.NONE : release;
        if (state() != State.WITH_CORE) {
            r.release();
            throw new IllegalStateException("addData on a request in state " + state() + " (CID " + cid() + ")");
        }
        if (length < 0 || (long) segmentBytes + length > dataLength()) {
            r.release();
            throw new IllegalArgumentException("addData of " + length + " bytes after " + segmentBytes
                    + " exceeds the command's data length " + dataLength() + " (CID " + cid() + ")");
        }
        if (length == 0 || !connection.isOpen()) {
            r.release();
            return;
        }
        SegmentByteBuf view;
        try {
            view = connection.segmentPool().take(source, offset, length, r);
        } catch (RuntimeException e) {
            r.release();
            throw e;
        }
        if (segmentCount == segments.length) {
            SegmentByteBuf[] bigger = new SegmentByteBuf[segmentCount * 2];
            System.arraycopy(segments, 0, bigger, 0, segmentCount);
            segments = bigger;
        }
        segments[segmentCount++] = view;
        segmentBytes += length;
    }

    @Override
    protected void sendResponse() {
        connection.complete(this);
    }

    /** Releases the segments that were added but will not be sent (each DataRelease exactly once). */
    void dropSegments() {
        for (int i = 0; i < segmentCount; i++) {
            SegmentByteBuf s = segments[i];
            segments[i] = null;
            s.release();
        }
        segmentCount = 0;
        segmentBytes = 0;
    }

    /** Back to FREE: drops the write data (the kept PDU buffer or the pooled buffer) and any unsent segments. */
    void recycle(DataBufferPool pool) {
        dropSegments();
        if (keptPdu != null) {
            ByteBuf b = keptPdu;
            keptPdu = null;
            keptData = null;
            b.release();
        }
        if (data != null) {
            pool.giveBack(data);
            data = null;
        }
        clearCommand();
        received = 0;
        dataDigestError = false;
        state(State.FREE);
    }

    @Override
    public String toString() {
        return "TcpTargetRequest[ttag=" + index + " cid=" + cid() + " state=" + state() + " len=" + dataLength() + "]";
    }
}

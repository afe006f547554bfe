package io.nvmeof.transport.tcp;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.spi.TargetRequest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in for the target core: records what it sees and answers like a tiny controller.
 * <ul>
 *   <li>Connect (0x7F/0x01): fetches its data, calls {@code connected(qid, sqsize, CATTR bit 2)}, DW0 = CNTLID 1.</li>
 *   <li>Write (0x01): fetches the data and records it; completes with the receiver's status.</li>
 *   <li>Read (0x02): sends {@link #readSegments} segments of a direct pattern buffer, each with a counted release.</li>
 *   <li>0xC0..0xC3: held (never completed), to test what close drops; 0xC1 fetches its data first.</li>
 *   <li>anything else: completes at once with DW0 {@link #dw0}.</li>
 * </ul>
 * A non-zero {@code transportStatus()} completes the command with it, as the real core does.
 */
final class FakeCore implements QueueAcceptor, QueueHandler, DataReceiver, DataRelease {
    /** Opcodes 0xC0..0xC3 (vendor range) are held; bits 1:0 still give the direction (nvmeof-protocol.md §1.1). */
    static final int HOLD_OPCODE = 0xC0;

    QueueChannel channel;
    final List<String> events = new ArrayList<>();
    final List<byte[]> received = new ArrayList<>();
    final List<Integer> dataStatuses = new ArrayList<>();
    final List<TargetRequest> held = new ArrayList<>();
    /** Each command's {@link TargetRequest#arrivalNanos()}, in arrival order (while {@code record}). */
    final List<Long> arrivals = new ArrayList<>();

    final List<AtomicInteger> releases = new ArrayList<>();
    int accepts;
    int closes;
    Throwable closeCause;
    int readSegments = 3;
    int dw0;
    int readStatus;
    ByteBuffer readSource;
    /** False: record nothing per command (for allocation measurements). */
    boolean record = true;
    /** A command with this opcode makes {@link #onCommand} throw, as a core bug would (-1: none). */
    int throwOnOpcode = -1;

    @Override
    public QueueHandler accept(QueueChannel channel) {
        accepts++;
        this.channel = channel;
        return this;
    }

    @Override
    public void onCommand(TargetRequest request) {
        int opc = request.command().opcode();
        if (record) {
            arrivals.add(request.arrivalNanos());
        }
        if (opc == throwOnOpcode) {
            throw new IllegalStateException("FakeCore: a bug on opcode " + opc);
        }
        if (record)
            events.add(String.format(
                    "cmd opc=0x%02x cid=%d len=%d ts=0x%x incapsule=%b",
                    opc,
                    request.command().cid(),
                    request.dataLength(),
                    request.transportStatus(),
                    request.inCapsuleData()));
        if (request.transportStatus() != 0) {
            request.response().status(request.transportStatus());
            request.complete();
            return;
        }
        if (opc == 0x7F || opc == 0x01) {
            request.receiveData(this);
        } else if (opc == 0x02) {
            read(request);
        } else if ((opc & 0xFC) == HOLD_OPCODE) {
            held.add(request);
            if (request.dataLength() > 0 && (opc & 1) != 0) {
                request.receiveData((r, s) -> events.add("held data " + s));
            }
        } else {
            request.response().dw0(dw0);
            request.complete();
        }
    }

    private void read(TargetRequest request) {
        int length = request.dataLength();
        ByteBuffer src = readSource != null ? readSource : pattern(length);
        int n = Math.max(1, Math.min(readSegments, length));
        int at = 0;
        for (int i = 0; i < n; i++) {
            int len = i == n - 1 ? length - at : length / n;
            if (record) {
                AtomicInteger count = new AtomicInteger();
                releases.add(count);
                request.addData(src, at, len, count::incrementAndGet);
            } else {
                request.addData(src, at, len, this);
            }
            at += len;
        }
        request.response().status(readStatus);
        request.complete();
    }

    static ByteBuffer pattern(int length) {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        b.put(Bytes.pattern(length, 7)).clear();
        return b;
    }

    @Override
    public void onData(TargetRequest request, int status) {
        if (record) {
            dataStatuses.add(status);
            events.add("data status=0x" + Integer.toHexString(status));
        }
        if (status != 0) {
            request.response().status(status);
            request.complete();
            return;
        }
        if (record) {
            byte[] copy = new byte[request.dataLength()];
            for (int i = 0; i < copy.length; i++) {
                copy[i] = request.data().get(i);
            }
            received.add(copy);
        } else {
            checksum += request.data().getLong(0) + request.data().getLong(request.dataLength() - 8);
        }
        if (request.command().opcode() == 0x7F) {
            int cattr = request.command().connectCattr();
            channel.connected(request.command().connectQid(), request.command().connectSqsize(), (cattr & 0x04) != 0);
            request.response().dw0(1);
        }
        request.complete();
    }

    /** Release counting without a per-segment object, for {@link #record} = false. */
    int quietReleases;

    long checksum;

    @Override
    public void release() {
        quietReleases++;
    }

    @Override
    public void onClose(Throwable cause) {
        closes++;
        closeCause = cause;
        events.add("close " + cause);
    }

    /** Sum of all release counts; each must be exactly 1. */
    void assertEachReleasedOnce() {
        for (int i = 0; i < releases.size(); i++) {
            if (releases.get(i).get() != 1) {
                throw new AssertionError(
                        "segment " + i + " released " + releases.get(i).get() + " times");
            }
        }
    }

    static int dnr(int status) {
        return Status.dnr(status);
    }

    DataRelease counted() {
        AtomicInteger c = new AtomicInteger();
        releases.add(c);
        return c::incrementAndGet;
    }
}

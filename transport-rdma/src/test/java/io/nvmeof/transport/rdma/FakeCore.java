package io.nvmeof.transport.rdma;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.MemoryObserver;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.spi.RegisteredMemory;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small target core for the transport's tests: one RAM "namespace" (a direct buffer announced to the listener's
 * memory observer, like a namespace chunk), Connect (reads the Connect data, answers CNTLID 1 in DW0), Read (addData
 * straight from the namespace memory), Write (directly placed when the transport offers it, else copied from data()),
 * Identify-like admin reads from a heap buffer (a copy on the target), and a stall switch that holds reads.
 */
final class FakeCore implements QueueAcceptor {
    static final int NS_SIZE = 8 << 20;
    static final int BS = 4096;

    final ByteBuffer ns = ByteBuffer.allocateDirect(NS_SIZE).order(ByteOrder.LITTLE_ENDIAN);
    final AtomicLong added = new AtomicLong();
    final AtomicLong released = new AtomicLong();
    final AtomicInteger accepted = new AtomicInteger();
    final AtomicInteger inCapsuleWrites = new AtomicInteger();
    final AtomicInteger directWrites = new AtomicInteger();
    final AtomicInteger copiedWrites = new AtomicInteger();
    final List<Throwable> closes = new CopyOnWriteArrayList<>();
    final List<Integer> transportStatuses = new CopyOnWriteArrayList<>();
    final List<QueueChannel> channels = new CopyOnWriteArrayList<>();
    volatile boolean stallReads;
    /** When set, each command's {@link TargetRequest#arrivalNanos()} is added to it (off by default: it allocates). */
    volatile List<Long> arrivals;

    volatile boolean connectDataSeen;
    private final Memory memory = new Memory();
    private volatile MemoryObserver observer;

    /** The namespace memory's release: counts releases, and carries the observer's handle like a chunk. */
    final class Memory implements DataRelease, RegisteredMemory {
        volatile Object handle;
        volatile int slot = -1;

        @Override
        public void release() {
            released.incrementAndGet();
        }

        @Override
        public Object registration(int s) {
            return s == slot ? handle : null;
        }
    }

    /** Announces the namespace memory to a listener's observer (as the target's ChunkMemory does). */
    void attach(MemoryObserver o) {
        if (o == null) {
            return;
        }
        observer = o;
        o.attached(0);
        memory.slot = 0;
        memory.handle = o.allocated(ns);
    }

    void detach() {
        if (observer != null && memory.handle != null) {
            observer.freeing(ns, memory.handle);
            memory.handle = null;
        }
    }

    @Override
    public QueueHandler accept(QueueChannel channel) {
        accepted.incrementAndGet();
        channels.add(channel);
        return new Session(channel);
    }

    final class Session implements QueueHandler, DataReceiver {
        final QueueChannel channel;
        final List<TargetRequest> held = new CopyOnWriteArrayList<>();
        final java.util.Set<TargetRequest> placed =
                java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

        Session(QueueChannel channel) {
            this.channel = channel;
        }

        @Override
        public void onCommand(TargetRequest r) {
            List<Long> a = arrivals;
            if (a != null) {
                a.add(r.arrivalNanos());
            }
            if (r.transportStatus() != 0) {
                transportStatuses.add(r.transportStatus());
                complete(r, r.transportStatus());
                return;
            }
            SubmissionQueueEntry c = r.command();
            switch (c.opcode()) {
                case 0x7F:
                    if (c.fctype() == 0x01) {
                        channel.connected(c.connectQid(), c.connectSqsize(), false);
                        r.receiveData(this);
                    } else {
                        complete(r, 0);
                    }
                    return;
                case 0x02: {
                    if (stallReads) {
                        held.add(r);
                        added.incrementAndGet();
                        r.addData(ns, (int) (c.slba() * BS), r.dataLength(), memory);
                        return;
                    }
                    added.incrementAndGet();
                    r.addData(ns, (int) (c.slba() * BS), r.dataLength(), memory);
                    complete(r, 0);
                    return;
                }
                case 0x01: {
                    if (r.inCapsuleData()) {
                        inCapsuleWrites.incrementAndGet();
                    } else if (r.directDataPlacement()) {
                        placed.add(r);
                        directWrites.incrementAndGet();
                        added.incrementAndGet();
                        r.addDestination(ns, (int) (c.slba() * BS), r.dataLength(), memory);
                    }
                    r.receiveData(this);
                    return;
                }
                case 0x06: {
                    ByteBuffer page = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
                    for (int i = 0; i < 4096; i++) {
                        page.put(i, (byte) i);
                    }
                    r.addData(page, 0, Math.min(4096, r.dataLength()), DataRelease.NONE);
                    complete(r, 0);
                    return;
                }
                default:
                    complete(r, 0);
            }
        }

        @Override
        public void onData(TargetRequest r, int status) {
            if (status != 0) {
                complete(r, status);
                return;
            }
            SubmissionQueueEntry c = r.command();
            if (c.opcode() == 0x7F) {
                connectDataSeen = r.dataLength() == 1024 && r.data().get(0) == 0x11;
                r.response().dw0(1);
                complete(r, 0);
                return;
            }
            if (c.opcode() == 0x01 && !placed.remove(r)) {
                copiedWrites.incrementAndGet();
                ns.put((int) (c.slba() * BS), r.data(), 0, r.dataLength());
            }
            complete(r, 0);
        }

        void complete(TargetRequest r, int status) {
            r.response().status(status);
            r.complete();
        }

        @Override
        public void onClose(Throwable cause) {
            closes.add(cause == null ? new Throwable("orderly") : cause);
            held.clear();
        }
    }

    static int status(int sct, int sc) {
        return Status.of(sct, sc);
    }
}

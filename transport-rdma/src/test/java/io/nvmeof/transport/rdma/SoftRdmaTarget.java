package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.transport.rdma.soft.SoftRdmaProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A target listener with {@code pollGroups} poll groups on loopback over the software RNIC (emulated), serving a
 * {@link FakeCore}, and the host queues a test connects to it in this JVM. It owns both: {@link #close()} closes every
 * host queue it connected, then the listener.
 */
final class SoftRdmaTarget implements AutoCloseable {
    final RdmaTransport transport = new RdmaTransport(new SoftRdmaProvider());
    final FakeCore core = new FakeCore();
    final RdmaTargetListener listener;
    /** Every host queue {@link #connect} opened, in order. */
    final List<RdmaHostQueue> hostQueues = new ArrayList<>();

    private final Duration connectTimeout;

    SoftRdmaTarget(int pollGroups) throws IOException {
        this(pollGroups, Duration.ofSeconds(10));
    }

    /** {@code connectTimeout}: how long each host queue's connect may take (longer for many queues on a busy box). */
    SoftRdmaTarget(int pollGroups, Duration connectTimeout) throws IOException {
        this.connectTimeout = connectTimeout;
        ListenerOptions o = new ListenerOptions(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, 128, 4096, pollGroups, false);
        listener = (RdmaTargetListener) transport.listen(o, core);
        core.attach(listener.memoryObserver());
    }

    /** A host queue {@code qid} of {@code size} entries, connected with a Fabrics Connect the core accepts. */
    RdmaHostQueue connect(int qid, int size) throws Exception {
        RdmaHostQueue q = (RdmaHostQueue) transport.connect(new HostQueueOptions(
                listener.localAddress(), qid, size, qid == 0 ? 0 : 1, false, false, connectTimeout));
        hostQueues.add(q);
        TestCommand c = TestCommand.connect(0, qid, size - 1);
        q.submit(c);
        assertEquals(0, c.status());
        return q;
    }

    /** A controller: its admin queue (32 entries, index 0), then {@code ioQueues} I/O queues of {@code ioSize}. */
    List<RdmaHostQueue> controller(int ioQueues, int ioSize) throws Exception {
        List<RdmaHostQueue> qs = new ArrayList<>();
        qs.add(connect(0, 32));
        for (int q = 1; q <= ioQueues; q++) {
            qs.add(connect(q, ioSize));
        }
        return qs;
    }

    /** The live target-side threads of this listener whose names start with {@code prefix}. */
    List<Thread> threads(String prefix) {
        String suffix = "-" + listener.localAddress().getPort();
        List<Thread> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix) && t.getName().endsWith(suffix) && t.isAlive()) {
                out.add(t);
            }
        }
        return out;
    }

    @Override
    public void close() {
        for (RdmaHostQueue q : hostQueues) {
            q.close();
        }
        listener.close();
        core.detach();
    }
}

package io.nvmeof.testsupport;

import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A host-side {@link Transport} for tests that shows them the commands a host sends: it wraps a real transport and
 * calls the observer with each command's SQE on the submitting thread, just before the wrapped queue takes it. The
 * observer sees what goes on the wire in the order it goes there, and may change the target's state between two
 * commands (it runs before the next one is sent). Give it to the initiator with {@code ConnectOptions.transport}.
 *
 * <p>The SQE is the host's own: the observer reads it and must not keep it. Everything else is passed through.
 */
public final class ObservedTransport implements Transport {
    private final Transport transport;
    private final Consumer<SubmissionQueueEntry> observer;

    public ObservedTransport(Transport transport, Consumer<SubmissionQueueEntry> observer) {
        this.transport = transport;
        this.observer = observer;
    }

    @Override
    public String name() {
        return transport.name();
    }

    @Override
    public int transportType() {
        return transport.transportType();
    }

    @Override
    public boolean isAvailable() {
        return transport.isAvailable();
    }

    @Override
    public String unavailableReason() {
        return transport.unavailableReason();
    }

    @Override
    public TargetListener listen(ListenerOptions options, QueueAcceptor acceptor) throws IOException {
        return transport.listen(options, acceptor);
    }

    @Override
    public HostQueue connect(HostQueueOptions options) throws IOException {
        return new ObservedQueue(transport.connect(options));
    }

    private final class ObservedQueue implements HostQueue {
        private final HostQueue queue;

        ObservedQueue(HostQueue queue) {
            this.queue = queue;
        }

        @Override
        public int qid() {
            return queue.qid();
        }

        @Override
        public void maxInCapsuleData(int bytes) {
            queue.maxInCapsuleData(bytes);
        }

        @Override
        public void submit(HostCommand command) {
            observer.accept(command.command());
            queue.submit(command);
        }

        @Override
        public void onClose(Consumer<Throwable> listener) {
            queue.onClose(listener);
        }

        @Override
        public ByteBuffer allocateBuffer(int size) throws IOException {
            return queue.allocateBuffer(size);
        }

        @Override
        public void execute(Runnable task) {
            queue.execute(task);
        }

        @Override
        public boolean inQueueThread() {
            return queue.inQueueThread();
        }

        @Override
        public boolean isOpen() {
            return queue.isOpen();
        }

        @Override
        public void close() {
            queue.close();
        }
    }
}

package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.spi.HostQueue;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.spi.TargetListener;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The status retry rules end to end: a transport wrapper replaces the first N answers to Write with an error status, as
 * a controller would answer; without DNR the write is sent again (up to 5 retries) and succeeds, with DNR it fails at
 * once.
 */
class StatusRetryTest {
    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("16M").blockSize(4096).build();

    /** How many Write answers are still to be replaced, with what status; and how many Writes went out. */
    private final AtomicInteger toFail = new AtomicInteger();

    private volatile int injected;
    private final AtomicInteger writesSent = new AtomicInteger();

    private Controller connect() throws NvmeException {
        Transport tcp = Transport.find("tcp");
        return Nvme.connect(
                NvmeUri.parse(target.uri("queues=1")),
                ConnectOptions.builder().transport(new Faulty(tcp)).build());
    }

    @Test
    void anErrorWithoutDnrIsRetriedAndTheWriteSucceeds() throws Exception {
        try (Controller c = connect()) {
            Namespace ns = c.namespace();
            ByteBuffer src = ByteBuffer.allocateDirect(4096);
            src.putLong(0, 0x1234_5678L);
            injected = Status.NAMESPACE_NOT_READY;
            toFail.set(2);
            writesSent.set(0);
            ns.write(5, 1, src);
            assertEquals(3, writesSent.get(), "two answers replaced, two retries");
            ByteBuffer dst = ByteBuffer.allocateDirect(4096);
            ns.read(5, 1, dst);
            assertEquals(0x1234_5678L, dst.getLong(0));
        }
    }

    @Test
    void dnrFailsAtOnceAndRetriesStopAfterFive() throws Exception {
        try (Controller c = connect()) {
            Namespace ns = c.namespace();
            injected = Status.dnr(Status.INTERNAL_ERROR);
            toFail.set(1);
            writesSent.set(0);
            NvmeStatusException e =
                    assertThrows(NvmeStatusException.class, () -> ns.write(0, 1, ByteBuffer.allocateDirect(4096)));
            assertTrue(e.dnr());
            assertEquals(1, writesSent.get(), "DNR: not retried");

            injected = Status.INTERNAL_ERROR;
            toFail.set(100);
            writesSent.set(0);
            NvmeStatusException e2 =
                    assertThrows(NvmeStatusException.class, () -> ns.write(0, 1, ByteBuffer.allocateDirect(4096)));
            assertEquals(Status.sc(Status.INTERNAL_ERROR), e2.sc());
            assertEquals(6, writesSent.get(), "the command and 5 retries");
            toFail.set(0);
        }
    }

    /** A transport that hands the wrapped one a command whose Write answers may be replaced. */
    private final class Faulty implements Transport {
        private final Transport t;

        Faulty(Transport t) {
            this.t = t;
        }

        @Override
        public String name() {
            return t.name();
        }

        @Override
        public int transportType() {
            return t.transportType();
        }

        @Override
        public TargetListener listen(ListenerOptions options, QueueAcceptor acceptor) throws IOException {
            return t.listen(options, acceptor);
        }

        @Override
        public HostQueue connect(HostQueueOptions options) throws IOException {
            HostQueue q = t.connect(options);
            return new HostQueue() {
                @Override
                public int qid() {
                    return q.qid();
                }

                @Override
                public void maxInCapsuleData(int bytes) {
                    q.maxInCapsuleData(bytes);
                }

                @Override
                public void submit(HostCommand command) {
                    boolean write = q.qid() != 0 && command.command().opcode() == NvmOpcode.WRITE.code();
                    if (write) {
                        writesSent.incrementAndGet();
                    }
                    q.submit(write ? new Replacing(command) : command);
                }

                @Override
                public void onClose(Consumer<Throwable> listener) {
                    q.onClose(listener);
                }

                @Override
                public void execute(Runnable task) {
                    q.execute(task);
                }

                @Override
                public boolean inQueueThread() {
                    return q.inQueueThread();
                }

                @Override
                public boolean isOpen() {
                    return q.isOpen();
                }

                @Override
                public void close() {
                    q.close();
                }
            };
        }
    }

    /** Passes everything through but may replace the answer's status (test code: allocates per command). */
    private final class Replacing implements HostCommand {
        private final HostCommand c;

        Replacing(HostCommand c) {
            this.c = c;
        }

        @Override
        public SubmissionQueueEntry command() {
            return c.command();
        }

        @Override
        public ByteBuffer dataBuffer() {
            return c.dataBuffer();
        }

        @Override
        public int dataOffset() {
            return c.dataOffset();
        }

        @Override
        public int dataLength() {
            return c.dataLength();
        }

        @Override
        public void onResponse(CompletionQueueEntry response) {
            if (toFail.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                CompletionQueueEntry e = new CompletionQueueEntry();
                e.wrap(ByteBuffer.allocate(CompletionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN), 0);
                e.cid(response.cid())
                        .sqid(response.sqid())
                        .sqhd(response.sqhd())
                        .status(injected);
                c.onResponse(e);
            } else {
                c.onResponse(response);
            }
        }

        @Override
        public void onTransportError(Throwable cause) {
            c.onTransportError(cause);
        }
    }
}

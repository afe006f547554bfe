package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Heap bytes per I/O of the initiator's callback form over loopback NVMe/TCP in steady state, measured with
 * {@code com.sun.management.ThreadMXBean} on the queue's own thread and on the caller's thread: the allocation-free
 * claim of {@link Namespace}'s callback form, end to end through the TCP transport (the target runs in this JVM on
 * its own threads, which are not counted).
 */
class CallbackAllocationTest {
    static final int IOS = 20_000;

    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("16M").build();

    static Controller controller;
    static Namespace ns;
    static ResourceLeakDetector.Level level;

    @BeforeAll
    static void connect() throws Exception {
        // Paranoid leak detection records a stack trace per buffer access: measure the code, not the detector.
        level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        controller = Nvme.connect(target.uri("queues=1&depth=32"));
        ns = controller.namespace(1);
        ns.write(0, 256, ByteBuffer.allocateDirect(256 * 4096)); // so reads come from namespace memory
    }

    @AfterAll
    static void close() {
        controller.close();
        ResourceLeakDetector.setLevel(level);
    }

    static long allocated(Thread t) {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(t.getId());
    }

    /** Reads that reissue themselves from the completion callback, on the queue's thread (the SPDK/fio-engine shape). */
    static final class Chain implements IoCallback {
        final ByteBuffer[] bufs;
        final AtomicLong done = new AtomicLong();
        long remaining;
        long lba;
        volatile Thread queueThread;
        volatile NvmeException error;
        volatile boolean finished;
        int inflight;

        Chain(int depth) {
            bufs = new ByteBuffer[depth];
            for (int i = 0; i < depth; i++) {
                bufs[i] = ByteBuffer.allocateDirect(4096);
            }
        }

        void start(long ios) {
            remaining = ios - bufs.length;
            finished = false;
            inflight = bufs.length;
            for (int i = 0; i < bufs.length; i++) {
                ns.read(i, 1, bufs[i], this, bufs[i]);
            }
        }

        @Override
        public void completed(Object attachment) {
            queueThread = Thread.currentThread();
            done.lazySet(done.get() + 1);
            if (remaining > 0) {
                remaining--;
                lba = (lba + 7) & 255;
                if (!ns.tryRead(lba, 1, (ByteBuffer) attachment, this, attachment)) {
                    error = new NvmeException("tryRead refused with a slot just freed");
                    finished = true;
                }
            } else if (--inflight == 0) {
                finished = true;
            }
        }

        @Override
        public void failed(NvmeException e, Object attachment) {
            error = e;
            finished = true;
        }

        void await() {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!finished && System.nanoTime() < deadline) {
                LockSupport.parkNanos(1_000_000L);
            }
            assertTrue(finished, "I/Os did not finish");
            assertNull(error);
        }
    }

    @Test
    void callbackChainOnTheQueueThreadAllocatesNothing() {
        Chain c = new Chain(8);
        c.start(IOS); // warm up (JIT, pools)
        c.await();
        c.start(IOS);
        c.await();
        Thread q = c.queueThread;
        Thread me = Thread.currentThread();
        long q0 = allocated(q);
        long m0 = allocated(me);
        long d0 = c.done.get();
        c.start(IOS);
        c.await();
        long perIoQueue = (allocated(q) - q0) / IOS;
        long perIoCaller = (allocated(me) - m0) / IOS;
        assertEquals(IOS, c.done.get() - d0);
        System.out.println("initiator callback chain over TCP, QD8: queue thread ~" + perIoQueue + " B/IO, caller ~"
                + perIoCaller + " B/IO");
        assertTrue(perIoQueue < 4, "queue thread bytes per I/O: " + perIoQueue);
        assertTrue(perIoCaller < 4, "caller thread bytes per I/O: " + perIoCaller);
    }

    /** One I/O at a time submitted from the caller's thread (the transport's MPSC path), callback form. */
    static final class OneAtATime implements IoCallback {
        volatile boolean done;
        volatile NvmeException error;
        volatile Thread queueThread;

        @Override
        public void completed(Object attachment) {
            queueThread = Thread.currentThread();
            done = true;
        }

        @Override
        public void failed(NvmeException e, Object attachment) {
            error = e;
            done = true;
        }

        void run(ByteBuffer buf, int ios) {
            for (int i = 0; i < ios; i++) {
                done = false;
                ns.read(i & 255, 1, buf, this, null);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!done) {
                    Thread.onSpinWait();
                    if (System.nanoTime() - deadline > 0) {
                        throw new AssertionError("I/O " + i + " did not complete");
                    }
                }
                assertNull(error);
            }
        }
    }

    /**
     * The future form: the {@link java.util.concurrent.CompletableFuture} (and, when the caller has to wait, its wait
     * node) is the only per-I/O allocation, on the caller's thread; the queue's thread completes it allocation-free.
     */
    @Test
    void futureFormAllocatesOnlyTheFuture() {
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        OneAtATime first = new OneAtATime(); // the callback form names the queue's thread for sure (a dependent
        first.run(buf, 1); // stage of an already completed future would run on the caller)
        Thread[] q = {first.queueThread};
        for (int i = 0; i < IOS; i++) {
            ns.readAsync(i & 255, 1, buf).join();
        }
        Thread me = Thread.currentThread();
        long q0 = allocated(q[0]);
        long m0 = allocated(me);
        for (int i = 0; i < IOS; i++) {
            ns.readAsync(i & 255, 1, buf).join();
        }
        long perIoQueue = (allocated(q[0]) - q0) / IOS;
        long perIoCaller = (allocated(me) - m0) / IOS;
        System.out.println("initiator future form over TCP, QD1: queue thread ~" + perIoQueue + " B/IO, caller ~"
                + perIoCaller + " B/IO (the future and its wait node)");
        assertTrue(perIoQueue < 4, "queue thread bytes per I/O: " + perIoQueue);
        assertTrue(perIoCaller <= 128, "caller thread bytes per I/O: " + perIoCaller);
    }

    @Test
    void callbackFromTheCallerThreadAllocatesNothing() {
        OneAtATime o = new OneAtATime();
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        o.run(buf, IOS);
        Thread q = o.queueThread;
        Thread me = Thread.currentThread();
        long q0 = allocated(q);
        long m0 = allocated(me);
        o.run(buf, IOS);
        long perIoQueue = (allocated(q) - q0) / IOS;
        long perIoCaller = (allocated(me) - m0) / IOS;
        System.out.println("initiator callback from the caller thread over TCP, QD1: queue thread ~" + perIoQueue
                + " B/IO, caller ~" + perIoCaller + " B/IO");
        assertTrue(perIoQueue < 4, "queue thread bytes per I/O: " + perIoQueue);
        assertTrue(perIoCaller < 4, "caller thread bytes per I/O: " + perIoCaller);
    }
}

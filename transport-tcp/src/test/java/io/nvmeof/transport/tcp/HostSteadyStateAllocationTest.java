package io.nvmeof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Heap bytes allocated per command on the host path in steady state (submit on the queue's thread, read with
 * C2HData + CapsuleResp, in-capsule write, R2T write with two H2CData), measured with
 * {@code com.sun.management.ThreadMXBean} on a FastThreadLocalThread as on a real event loop.
 */
class HostSteadyStateAllocationTest {
    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    @Test
    void readsAndWritesAllocateAlmostNothing() throws Throwable {
        Throwable[] failure = new Throwable[1];
        Thread t = new FastThreadLocalThread(() -> {
            try {
                assertTrue(measure(false, false) < 32);
                // Digests read direct memory through Crc32c.View: no NIO view per received buffer (was ~37 B).
                assertTrue(measure(true, true) < 32);
            } catch (Throwable e) {
                failure[0] = e;
            }
        });
        t.start();
        t.join();
        if (failure[0] != null) {
            throw failure[0];
        }
    }

    private long measure(boolean hd, boolean dd) {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try {
            HostHarness h = new HostHarness(hd, dd).connect(4096);
            h.queue.maxInCapsuleData(4096);
            TestCommand read = new TestCommand(0x02, 1).data(ByteBuffer.allocateDirect(4096), 0, 4096);
            TestCommand small = new TestCommand(0x01, 2).data(ByteBuffer.allocateDirect(4096), 0, 4096);
            TestCommand big = new TestCommand(0x01, 3).data(ByteBuffer.allocateDirect(8192), 0, 8192);
            byte[] readIn = Bytes.concat(h.c2hData(1, 0, Bytes.pattern(4096, 1), 4, false), h.capsuleResp(1, 0, 0),
                    h.capsuleResp(2, 0, 0), h.r2t(3, 5, 0, 8192));
            byte[] bigDone = h.capsuleResp(3, 0, 0);
            int n = 20000;
            run(h, read, small, big, readIn, bigDone, n);
            long before = allocated();
            run(h, read, small, big, readIn, bigDone, n);
            long perCommand = (allocated() - before) / (3L * n);
            System.out.println("host steady state, hd=" + hd + " dd=" + dd + ": ~" + perCommand + " heap bytes per command");
            assertEquals(2L * n, read.responses.get());
            h.queue.close();
            h.assertClean();
            return perCommand;
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    private static void run(HostHarness h, TestCommand read, TestCommand small, TestCommand big, byte[] in,
                            byte[] bigDone, int n) {
        for (int i = 0; i < n; i++) {
            h.queue.submit(read);
            h.queue.submit(small);
            h.queue.submit(big);
            h.channel.writeInbound(h.alloc.directBuffer(in.length).writeBytes(in));
            h.channel.writeInbound(h.alloc.directBuffer(bigDone.length).writeBytes(bigDone));
            h.channel.runPendingTasks();
            for (Object o; (o = h.channel.readOutbound()) != null; ) {
                ((ByteBuf) o).release();
            }
        }
    }
}

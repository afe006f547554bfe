package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

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
                // Digests read direct memory through DirectView: no NIO view per received buffer (was ~37 B).
                assertTrue(measure(true, true) < 32);
                assertTrue(measureLargeRead(false, false) < 32);
                assertTrue(measureLargeRead(true, true) < 32);
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
            byte[] readIn = Bytes.concat(
                    h.c2hData(1, 0, Bytes.pattern(4096, 1), 4, false),
                    h.capsuleResp(1, 0, 0),
                    h.capsuleResp(2, 0, 0),
                    h.r2t(3, 5, 0, 8192));
            byte[] bigDone = h.capsuleResp(3, 0, 0);
            int n = 20000;
            run(h, read, small, big, readIn, bigDone, n);
            long before = allocated();
            run(h, read, small, big, readIn, bigDone, n);
            long perCommand = (allocated() - before) / (3L * n);
            System.out.println(
                    "host steady state, hd=" + hd + " dd=" + dd + ": ~" + perCommand + " heap bytes per command");
            assertEquals(2L * n, read.responses.get());
            h.queue.close();
            h.assertClean();
            return perCommand;
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    /**
     * 128 KiB reads as a socket delivers them: one C2HData (SUCCESS) in 16 KiB reads. The data streams from each read
     * buffer into the command's buffer, so the decoder never builds a 128 KiB cumulation (which cost pool chunk churn
     * and GC in real runs).
     */
    private long measureLargeRead(boolean hd, boolean dd) {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try {
            HostHarness h = new HostHarness(hd, dd).connect(4096);
            int size = 128 * 1024;
            byte[] data = Bytes.pattern(size, 9);
            ByteBuffer dst = ByteBuffer.allocateDirect(size);
            TestCommand read = new TestCommand(0x02, 1).data(dst, 0, size);
            byte[] bytes = h.c2hData(1, 0, data, 4 | 8, false);
            // The "socket reads": retained slices of one pooled buffer (recycled objects; the harness's allocator
            // has no thread cache, so fresh 16 KiB buffers would count the arena's own bookkeeping here).
            ByteBuf in = h.alloc.directBuffer(bytes.length).writeBytes(bytes);
            int n = 2000;
            runLargeRead(h, read, in, n);
            long before = allocated();
            int maxCumulation = runLargeRead(h, read, in, n);
            long perCommand = (allocated() - before) / n;
            System.out.println("host steady state, 128 KiB reads in 16 KiB pieces, hd=" + hd + " dd=" + dd + ": ~"
                    + perCommand + " heap bytes per command, cumulation at most " + maxCumulation + " bytes");
            assertEquals(2L * n, read.responses.get());
            assertEquals(0, read.status, "completed by SUCCESS with status 0");
            byte[] got = new byte[size];
            dst.get(0, got);
            org.junit.jupiter.api.Assertions.assertArrayEquals(data, got);
            assertTrue(maxCumulation <= 16 * 1024, "cumulation " + maxCumulation);
            in.release();
            h.queue.close();
            h.assertClean();
            return perCommand;
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    private static int runLargeRead(HostHarness h, TestCommand read, ByteBuf in, int n) {
        NvmeTcpPduDecoder decoder = h.channel.pipeline().get(NvmeTcpPduDecoder.class);
        int max = 0;
        for (int i = 0; i < n; i++) {
            h.queue.submit(read);
            for (int at = 0; at < in.readableBytes(); at += 16384) {
                int len = Math.min(16384, in.readableBytes() - at);
                // fireChannelRead as the event loop does (writeInbound's varargs array would count ~24 B a read).
                h.channel.pipeline().fireChannelRead(in.retainedSlice(at, len));
                max = Math.max(max, decoder.cumulationCapacity());
            }
            h.channel.pipeline().fireChannelReadComplete();
            h.channel.runPendingTasks();
            for (Object o; (o = h.channel.readOutbound()) != null; ) {
                ((ByteBuf) o).release();
            }
        }
        return max;
    }

    private static void run(
            HostHarness h, TestCommand read, TestCommand small, TestCommand big, byte[] in, byte[] bigDone, int n) {
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

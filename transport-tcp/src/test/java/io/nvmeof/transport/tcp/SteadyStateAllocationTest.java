package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * Heap bytes allocated per command on the target path in steady state, measured with
 * {@code com.sun.management.ThreadMXBean}. EmbeddedChannel and the fake core add a little of their own, so the bound
 * is loose; it catches a per-I/O object or copy creeping in, not single bytes.
 */
class SteadyStateAllocationTest {
    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    @Test
    void readsAndWritesAllocateAlmostNothing() throws Throwable {
        // On a FastThreadLocalThread, like a real event loop: Netty's object recyclers work fully there.
        Throwable[] failure = new Throwable[1];
        Thread t = new FastThreadLocalThread(() -> {
            try {
                // Reads, in-capsule writes and R2T/H2CData writes: nothing at all per command beyond the test's own
                // varargs arrays (~18 B), without digests and with header digests only.
                assertTrue(measure(0) < 32);
                assertTrue(measure(1) < 32);
                // Data digests too: the CRC reads the cumulation and the segments through the connection's
                // re-pointed DirectView, so nothing per command either (it was ~44 B with a NIO view per buffer).
                assertTrue(measure(3) < 32);
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

    private long measure(int dgst) {
        // Paranoid leak detection records a stack trace per buffer access; measure the code, not the detector.
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try {
            TargetHarness h = new TargetHarness();
            boolean hd = (dgst & 1) != 0;
            boolean dd = (dgst & 2) != 0;
            h.connectIc(dgst);
            h.feed(Bytes.capsule(Bytes.connectSqe(1, 1, 127, 0), Bytes.pattern(1024, 0), hd, dd));
            h.drain();
            h.core.readSource = FakeCore.pattern(4096); // one long-lived source, like namespace memory
            h.core.readSegments = 2;
            h.core.record = false;
            byte[] read = Bytes.capsule(Bytes.sqe(0x02, 5, 0x5A, 4096), null, hd, dd);
            byte[] write = Bytes.capsule(Bytes.sqe(0x01, 6, 0x01, 4096), Bytes.pattern(4096, 1), hd, dd);
            // An 8 KiB write beyond the in-capsule size: R2T, then one H2CData (its header and data digests checked
            // on the cumulation, nvmeof-protocol.md §5.8, §5.10). Its H2CData is made ahead for every TTAG, so the
            // measured loop builds nothing.
            byte[] r2tWrite = Bytes.capsule(Bytes.sqe(0x01, 7, 0x5A, 8192), null, hd, dd);
            byte[][] h2c = new byte[128][];
            for (int ttag = 0; ttag < h2c.length; ttag++) {
                h2c[ttag] = Bytes.h2cData(7, ttag, 0, Bytes.pattern(8192, 2), true, hd, dd);
            }
            int n = 20000;
            run(h, read, write, r2tWrite, h2c, n); // warm up (JIT, pools)
            long before = allocated();
            run(h, read, write, r2tWrite, h2c, n);
            long perCommand = (allocated() - before) / (3L * n);
            System.out.println("steady state, DGST " + dgst + ": ~" + perCommand + " heap bytes per command");
            assertEquals(2 * 2 * n, h.core.quietReleases, "two segments per read, each released once");
            h.forgetInputs();
            h.assertClean(); // still: no pooled buffer left allocated
            return perCommand;
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    private static void run(TargetHarness h, byte[] read, byte[] write, byte[] r2tWrite, byte[][] h2c, int n) {
        for (int i = 0; i < n; i++) {
            // Pooled input buffers: recycled, so filling them allocates nothing either.
            h.channel.writeInbound(
                    h.alloc.directBuffer(read.length).writeBytes(read),
                    h.alloc.directBuffer(write.length).writeBytes(write),
                    h.alloc.directBuffer(r2tWrite.length).writeBytes(r2tWrite));
            h.channel.runPendingTasks();
            // The target writes several PDUs in one buffer, and a C2HData's data in buffers of their own: walk the
            // written bytes PDU by PDU (PLEN), skipping data, to find the R2T.
            int ttag = -1;
            long skip = 0;
            for (Object o; (o = h.channel.readOutbound()) != null; ) {
                ByteBuf b = (ByteBuf) o;
                int at = b.readerIndex();
                while (at < b.writerIndex()) {
                    if (skip > 0) {
                        int step = (int) Math.min(skip, b.writerIndex() - at);
                        skip -= step;
                        at += step;
                        continue;
                    }
                    if (b.getByte(at) == PduHeader.TYPE_R2T) {
                        ttag = b.getUnsignedShortLE(at + R2tPdu.TTAG_OFFSET);
                    }
                    skip = b.getUnsignedIntLE(at + 4); // PLEN
                }
                b.release();
            }
            if (ttag < 0 || ttag >= h2c.length) {
                throw new AssertionError("R2T with TTAG " + ttag); // built only on failure: no string per I/O
            }
            h.channel.writeInbound(h.alloc.directBuffer(h2c[ttag].length).writeBytes(h2c[ttag]));
            h.channel.runPendingTasks();
            for (Object o; (o = h.channel.readOutbound()) != null; ) {
                ((ByteBuf) o).release();
            }
        }
    }
}

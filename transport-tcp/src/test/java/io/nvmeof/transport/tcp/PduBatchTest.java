package io.nvmeof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link PduBatch} alone in a pipeline, with a private pooled allocator so that "released" is a count. */
class PduBatchTest {
    private final PooledByteBufAllocator alloc = new PooledByteBufAllocator(true, 1, 1, 8192, 9, 0, 0, false);
    private final PduBatch batch = new PduBatch();
    private final EmbeddedChannel channel = new EmbeddedChannel();

    PduBatchTest() {
        channel.config().setAllocator(alloc);
        channel.pipeline().addLast(batch);
    }

    @AfterEach
    void nothingLeft() {
        channel.finishAndReleaseAll();
        assertEquals(0, active(), "pooled buffers still allocated");
    }

    private long active() {
        long n = 0;
        for (PoolArenaMetric a : alloc.metric().directArenas()) {
            n += a.numActiveAllocations();
        }
        return n;
    }

    private long allocations() {
        long n = 0;
        for (PoolArenaMetric a : alloc.metric().directArenas()) {
            n += a.numAllocations();
        }
        return n;
    }

    /** Appends {@code length} bytes of value {@code b}, as a PDU writer does. */
    private void append(int length, int b) {
        ByteBuf out = batch.room(length);
        int at = out.writerIndex();
        for (int i = 0; i < length; i++) {
            out.setByte(at + i, b);
        }
        out.writerIndex(at + length);
    }

    private byte[] readMessage() {
        ByteBuf m = channel.readOutbound();
        byte[] a = new byte[m.readableBytes()];
        m.getBytes(m.readerIndex(), a);
        m.release();
        return a;
    }

    @Test
    void gatheredPdusAreOneMessageAtTheFlush() {
        append(24, 1);
        append(24, 2);
        append(28, 3);
        assertNull(channel.readOutbound(), "nothing before the flush");
        channel.flush();
        byte[] m = readMessage();
        assertEquals(76, m.length);
        assertEquals(1, m[0]);
        assertEquals(2, m[24]);
        assertEquals(3, m[75]);
        assertNull(channel.readOutbound());
        channel.flush();
        assertNull(channel.readOutbound(), "an empty batch writes nothing");
    }

    @Test
    void anotherMessageGoesAfterWhatWasGatheredBeforeIt() {
        append(24, 1);
        channel.write(Unpooled.wrappedBuffer(new byte[] {9, 9, 9}));
        append(24, 2);
        channel.flush();
        assertEquals(24, readMessage().length);
        assertEquals(3, readMessage().length);
        byte[] last = readMessage();
        assertEquals(24, last.length);
        assertEquals(2, last[0]);
    }

    /**
     * A burst of reads or in-capsule writes: header, data, header, data. The headers between the data go as slices of
     * one pooled buffer, not one buffer each, and every slice and the batch are released once written.
     */
    @Test
    void pdusBetweenOtherMessagesShareOneBuffer() {
        for (int i = 1; i <= 3; i++) {
            append(24, i);
            channel.write(Unpooled.wrappedBuffer(new byte[] {9, 9, 9}));
        }
        append(28, 4);
        assertEquals(1, allocations(), "one pooled buffer for the whole burst");
        channel.flush();
        for (int i = 1; i <= 3; i++) {
            byte[] header = readMessage();
            assertEquals(24, header.length);
            assertEquals(i, header[0]);
            assertEquals(i, header[23]);
            assertEquals(3, readMessage().length);
        }
        byte[] last = readMessage();
        assertEquals(28, last.length);
        assertEquals(4, last[0]);
        assertNull(channel.readOutbound());
        channel.write(Unpooled.wrappedBuffer(new byte[] {9}));
        append(24, 5);
        channel.flush();
        assertEquals(1, readMessage().length);
        assertEquals(5, readMessage()[0]);
        assertEquals(2, allocations(), "a new batch after the flush");
    }

    /**
     * A flush set off by the write that hands the gathered PDUs over as a slice (an {@code EmbeddedChannel} runs its
     * pending tasks at the end of a write, and a pending flush task is one) sends them once, not again with the batch.
     */
    @Test
    void aFlushInsideTheSlicesWriteDoesNotSendItsPdusAgain() {
        append(24, 1);
        channel.write(Unpooled.wrappedBuffer(new byte[] {9, 9, 9}));
        append(24, 2);
        channel.eventLoop().execute(channel::flush);
        // Through the pipeline as a handler writes (EmbeddedChannel's own write would hold its tasks back): the
        // channel runs the pending flush inside the slice's write, before the batch has returned from it.
        channel.pipeline().write(Unpooled.wrappedBuffer(new byte[] {8, 8}));
        channel.flush();
        byte[] first = readMessage();
        assertEquals(24, first.length);
        assertEquals(1, first[0]);
        assertEquals(3, readMessage().length);
        byte[] second = readMessage();
        assertEquals(24, second.length);
        assertEquals(2, second[0]);
        assertEquals(2, readMessage().length);
        assertNull(channel.readOutbound(), "the second header went once");
    }

    /** Every PDU went as a slice before the flush: the batch itself has nothing left and is only released. */
    @Test
    void aBatchSlicedToTheEndIsReleasedAtTheFlush() {
        append(24, 1);
        channel.write(Unpooled.wrappedBuffer(new byte[] {9}));
        channel.flush();
        assertEquals(24, readMessage().length);
        assertEquals(1, readMessage().length);
        assertNull(channel.readOutbound());
    }

    @Test
    void aFullBatchGoesOutAndTheNextStarts() {
        int perBatch = PduBatch.CAPACITY / 24;
        for (int i = 0; i <= perBatch; i++) {
            append(24, i);
        }
        channel.flush();
        assertEquals(perBatch * 24, readMessage().length);
        byte[] second = readMessage();
        assertEquals(24, second.length);
        assertEquals((byte) perBatch, second[0]);
    }

    @Test
    void aBatchNeverHandedOverIsReleasedWithThePipeline() {
        append(24, 1);
        assertEquals(1, active());
        channel.pipeline().remove(batch);
        assertEquals(0, active(), "released when the handler left the pipeline");
    }

    @Test
    void slicesAlreadyHandedOverOutliveTheHandler() {
        append(24, 1);
        channel.write(Unpooled.wrappedBuffer(new byte[] {9}));
        append(24, 2);
        channel.pipeline().remove(batch);
        assertEquals(1, active(), "the slice handed over still holds the batch");
        channel.flush();
        assertEquals(1, readMessage()[0]);
        assertEquals(1, readMessage().length);
        assertNull(channel.readOutbound(), "the bytes never handed over are not written");
        assertEquals(0, active());
    }
}
